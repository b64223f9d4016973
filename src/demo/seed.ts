import type { Topology } from '../core/topology.ts';
import { ProductWrites } from '../product/pinterest/writes.ts';
import type { Storage } from '../storage/index.ts';

const USERS = [
  { username: 'alice', displayName: 'Alice Liddell', about: 'Collects teacups and odd maps.' },
  { username: 'bob', displayName: 'Bob Ross', about: 'Happy little trees.' },
  { username: 'carol', displayName: 'Carol Shaw', about: 'Retro games, river raids.' },
  { username: 'dave', displayName: 'Dave Brubeck', about: 'Take five.' },
  { username: 'erin', displayName: 'Erin Moran', about: 'Gardens and greenhouses.' },
];

const BOARDS: Record<string, { name: string; pins: string[] }[]> = {
  alice: [{ name: 'Tea time', pins: ['Porcelain teapot', 'Earl Grey scones', 'Mad hatter party'] }, { name: 'Maps', pins: ['Old London map', 'Sea charts'] }],
  bob: [{ name: 'Landscapes', pins: ['Mountain lake', 'Winter cabin', 'Autumn forest', 'Sunset meadow'] }],
  carol: [{ name: 'Pixel art', pins: ['8-bit river', 'Sprite sheet', 'Arcade cabinet'] }],
  dave: [{ name: 'Jazz', pins: ['Blue note covers', 'Upright bass'] }],
  erin: [{ name: 'Greenhouse', pins: ['Fern wall', 'Tomato trellis', 'Glass roof'] }],
};

const slug = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]+/g, '-');

/**
 * Loads a small demo graph through the product's own writes (so it obeys every rule): five users
 * with boards and pins, follows, likes, repins and comments. Skips everything if `alice` exists.
 */
export async function seedDemo(storage: Storage, topology: () => Topology, log: (line: string) => void = () => undefined): Promise<{ users: { id: bigint; username: string }[]; created: boolean }> {
  const existing = await storage.lookups.lookup('username', USERS.map((u) => u.username));
  if (existing.has('alice')) {
    return { users: USERS.filter((u) => existing.has(u.username)).map((u) => ({ id: existing.get(u.username)!, username: u.username })), created: false };
  }
  const writes = new ProductWrites({ storage, topology });
  const ids = new Map<string, bigint>();
  const pins: { id: bigint; owner: string }[] = [];
  for (const u of USERS) {
    const user = await writes.createUser({ ...u, email: `${u.username}@example.com` });
    ids.set(u.username, user.id);
    for (const b of BOARDS[u.username] ?? []) {
      const board = await writes.createBoard(user.id, { name: b.name, description: `${u.displayName}'s ${b.name.toLowerCase()}` });
      for (const title of b.pins) {
        const pin = await writes.createPin(user.id, board.id, { title, link: `https://example.com/${slug(title)}`, imageUrl: `https://images.example.com/${slug(title)}.jpg` });
        pins.push({ id: pin.id, owner: u.username });
      }
    }
  }
  log(`demo: ${USERS.length} users, ${pins.length} pins`);
  const id = (name: string): bigint => ids.get(name)!;
  const follows: [string, string][] = [['alice', 'bob'], ['alice', 'carol'], ['alice', 'erin'], ['bob', 'alice'], ['carol', 'alice'], ['dave', 'alice'], ['erin', 'bob'], ['erin', 'dave']];
  for (const [a, b] of follows) await writes.followUser(id(a), id(b));
  for (const [i, p] of pins.entries()) {
    for (const [k, u] of USERS.entries()) {
      if (u.username !== p.owner && (i + k) % 3 === 0) await writes.likePin(id(u.username), p.id);
    }
  }
  const aliceBoards = await storage.mappings.pages([{ table: 'user_has_boards', from: id('alice'), first: 10 }]);
  const tea = aliceBoards[0]!.edges.at(-1)!.to;
  await writes.repin(id('alice'), pins.find((p) => p.owner === 'bob')!.id, tea);
  await writes.repin(id('alice'), pins.find((p) => p.owner === 'erin')!.id, tea);
  await writes.followBoard(id('dave'), tea);
  await writes.createComment(id('bob'), pins[0]!.id, 'Lovely pattern!');
  await writes.createComment(id('carol'), pins[0]!.id, 'Where is it from?');
  await writes.settled(); // the relations' intents, deleted after each write answered
  log('demo: follows, likes, repins and comments added');
  return { users: USERS.map((u) => ({ id: id(u.username), username: u.username })), created: true };
}
