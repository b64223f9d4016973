import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelError, parseModel, snakeName } from '../../../../src/core/model/parseModel.ts';

const VOCABULARY = readFileSync(join(import.meta.dirname, '../../../../schema/model.graphql'), 'utf8');

/** A small graph of its own (not the product's): notes in folders, starred by users. */
const GRAPH = `
type Query { viewer: Member }
type Mutation {
  createFolder(name: String!): Folder! @create(type: "Folder")
  deleteFolder(id: ID!): Boolean! @delete(type: "Folder")
  star(noteId: ID!): Note! @relate(relation: "member_stars_notes", argument: "noteId")
  unstar(noteId: ID!): Note! @unrelate(relation: "member_stars_notes", argument: "noteId")
  moveNote(folderId: ID!, noteId: ID!): Folder! @reorder(relation: "folder_has_notes", argument: "noteId")
}
type PageInfo { hasNextPage: Boolean! }
type Member @object(typeNumber: 7, table: "members") @list(table: "member_wrote_notes", to: "Note") {
  handle: String! @stored(format: HANDLE, maxLength: 20, unique: "handle")
  starred(first: Int): NoteConnection! @relation(table: "member_stars_notes", inverse: "note_starred_by_members", timeRange: true)
  starCount: Int! @count(relation: "member_stars_notes")
  folders(first: Int): FolderConnection! @relation(table: "member_has_folders")
}
type Folder @object(typeNumber: 8, table: "folders", placeWith: "owner") {
  name: String! @stored(maxLength: 50)
  owner: Member @ref(key: "owner_id", owner: true, listedIn: "member_has_folders", onDelete: DELETE)
  notes(first: Int): NoteConnection! @relation(table: "folder_has_notes", order: OWNER)
}
type Note @object(typeNumber: 9, table: "notes", placeWith: "folder") {
  body: String @stored(key: "text")
  folder: Folder @ref(key: "folder_id", owner: false, listedIn: "folder_has_notes", onDelete: DELETE)
  author: Member @ref(key: "author_id", owner: true, listedIn: "member_wrote_notes")
  starredBy(first: Int): MemberConnection! @relation(table: "note_starred_by_members", inverse: "member_stars_notes")
  viewerStarred: Boolean! @viewerEdge(relation: "member_stars_notes")
}
type MemberEdge { node: Member! }
type FolderEdge { node: Folder! }
type NoteEdge { node: Note! }
type MemberConnection { edges: [MemberEdge!]! pageInfo: PageInfo! }
type FolderConnection { edges: [FolderEdge!]! pageInfo: PageInfo! }
type NoteConnection { edges: [NoteEdge!]! pageInfo: PageInfo! }
`;

/** The fixture as a file of its own, beside the vocabulary: problems name it and its lines. */
const FILE = 'test/notes.graphql';
const model = (sdl: string) => parseModel([{ name: 'schema/model.graphql', body: VOCABULARY }, { name: FILE, body: sdl }]);

/** The problems of a declaration, or [] when it is sound. */
function problems(sdl: string): readonly string[] {
  try {
    model(sdl);
    return [];
  } catch (err) {
    if (err instanceof ModelError) return err.problems;
    throw err;
  }
}

/** `test/notes.graphql:12:5`: where the one occurrence of `needle` starts in `text`. */
function at(text: string, needle: string): string {
  const i = text.indexOf(needle);
  assert.ok(i >= 0 && text.indexOf(needle, i + 1) < 0, `'${needle}' occurs once in the fixture`);
  const before = text.slice(0, i).split('\n');
  return `${FILE}:${before.length}:${before.at(-1)!.length + 1}`;
}

describe('parseModel: a graph declared in SDL directives, read into plain data', () => {
  const m = model(GRAPH);

  test('object types: their numbers, tables, placement and the viewer', () => {
    assert.equal(m.viewer, 'member');
    assert.deepEqual(
      m.objects.map((o) => [o.name, o.key, o.typeNumber, o.table, o.placeWith, o.declaredAt]),
      [
        ['Member', 'member', 7, 'members', null, `${FILE}:11`],
        ['Folder', 'folder', 8, 'folders', 'owner', `${FILE}:17`],
        ['Note', 'note', 9, 'notes', 'folder', `${FILE}:22`],
      ],
    );
  });

  test('stored fields: key, required from non-null, limits, format, uniqueness', () => {
    const [member, , note] = m.objects;
    assert.deepEqual(member!.stored, [{ field: 'handle', key: 'handle', required: true, maxLength: 20, format: 'HANDLE', immutable: false, uniqueIn: 'handle' }]);
    assert.deepEqual(note!.stored, [{ field: 'body', key: 'text', required: false, maxLength: null, format: 'TEXT', immutable: false, uniqueIn: null }]);
  });

  test('references: target, owner, the list they write, what a delete does', () => {
    assert.deepEqual(m.objects[2]!.refs, [
      { field: 'folder', key: 'folder_id', to: 'folder', owner: false, listedIn: 'folder_has_notes', onDelete: 'DELETE' },
      { field: 'author', key: 'author_id', to: 'member', owner: true, listedIn: 'member_wrote_notes', onDelete: 'UNLINK' },
    ]);
  });

  test('relations: direction from the connection (or @list on the type, shown by no field), inverse, order, and who writes each', () => {
    assert.deepEqual(
      m.relations.map((r) => [r.table, r.field, r.from, r.to, r.inverse, r.order, r.timeRange, r.writer]),
      [
        ['member_stars_notes', 'starred', 'member', 'note', 'note_starred_by_members', 'TIME', true, 'VIEWER'],
        ['member_has_folders', 'folders', 'member', 'folder', null, 'TIME', false, 'REF'],
        ['member_wrote_notes', null, 'member', 'note', null, 'TIME', false, 'REF'],
        ['folder_has_notes', 'notes', 'folder', 'note', null, 'OWNER', false, 'REF'],
        ['note_starred_by_members', 'starredBy', 'note', 'member', 'member_stars_notes', 'TIME', false, 'INVERSE'],
      ],
    );
  });

  test('counts, viewer flags and mutations', () => {
    assert.deepEqual(m.objects[0]!.counts, [{ field: 'starCount', relation: 'member_stars_notes' }]);
    assert.deepEqual(m.objects[2]!.viewerEdges, [{ field: 'viewerStarred', relation: 'member_stars_notes' }]);
    assert.deepEqual(
      m.mutations.map((x) => [x.name, x.action, x.type, x.relation, x.argument]),
      [
        ['createFolder', 'CREATE', 'folder', null, null],
        ['deleteFolder', 'DELETE', 'folder', null, 'id'],
        ['star', 'RELATE', null, 'member_stars_notes', 'noteId'],
        ['unstar', 'UNRELATE', null, 'member_stars_notes', 'noteId'],
        ['moveNote', 'REORDER', null, 'folder_has_notes', 'noteId'],
      ],
    );
  });

  test('snake names of types as mapping tables spell them', () => {
    assert.equal(snakeName('Pin'), 'pin');
    assert.equal(snakeName('BoardSection'), 'board_section');
  });
});

describe('parseModel: a wrong declaration is refused with file, line, what was wrong and what was expected', () => {
  /**
   * Each case changes the fixture (`from` → `to`) and expects one problem: at the first character
   * of `at` in the changed text, saying `want`.
   */
  const cases: { name: string; from: string; to: string; at: string; want: string }[] = [
    {
      name: 'a reference to an unknown type',
      from: 'author: Member @ref',
      to: 'author: Membr @ref',
      at: 'Membr @ref',
      want: 'Note.author @ref: Membr is not an @object type, expected one of Member, Folder, Note',
    },
    {
      name: 'a reference to a type that is no object',
      from: 'author: Member @ref',
      to: 'author: PageInfo @ref',
      at: 'PageInfo @ref',
      want: 'Note.author @ref: PageInfo is not an @object type, expected one of Member, Folder, Note',
    },
    {
      name: 'a relation whose connection lists a type that is no object',
      from: 'type FolderEdge { node: Folder! }',
      to: 'type FolderEdge { node: PageInfo! }',
      at: 'FolderConnection! @relation(table: "member_has_folders")',
      want: "Member.folders @relation (FolderConnection's node): PageInfo is not an @object type, expected one of Member, Folder, Note",
    },
    {
      name: 'a relation over a type that is no connection',
      from: 'folders(first: Int): FolderConnection!',
      to: 'folders(first: Int): [Folder!]!',
      at: '[Folder!]!',
      want: 'Member.folders @relation: Folder is no connection type, expected a type whose edges { node } are objects (such as FolderConnection)',
    },
    {
      name: 'a hidden list to an unknown type',
      from: 'to: "Note")',
      to: 'to: "Nope")',
      at: '"Nope"',
      want: 'Member @list: Nope is not an @object type, expected one of Member, Folder, Note',
    },
    {
      name: "an object type's name longer than the topology's type keys",
      from: 'type Note @object',
      to: `type N${'o'.repeat(64)} @object`,
      at: `N${'o'.repeat(64)} @object`,
      want: `N${'o'.repeat(64)}: the type's name is no type key, expected 1 to 64 letters or digits, starting with a letter (its key names it in the topology's idLayout.types)`,
    },
    {
      name: "an object type's name with an underscore",
      from: 'type Note @object',
      to: 'type Short_note @object',
      at: 'Short_note @object',
      want: "Short_note: the type's name is no type key, expected 1 to 64 letters or digits, starting with a letter (its key names it in the topology's idLayout.types)",
    },
    {
      name: 'a type number used twice',
      from: 'typeNumber: 8, table: "folders"',
      to: 'typeNumber: 7, table: "folders"',
      at: '7, table: "folders"',
      want: `Folder: type number 7 is already Member's (${FILE}:11), expected a number no other type has (a type number is never reused)`,
    },
    {
      name: "a type number beyond the ID's 10 bits",
      from: 'typeNumber: 9,',
      to: 'typeNumber: 1024,',
      at: '1024',
      want: "Note @object: typeNumber 1024 does not fit the ID's 10 bits, expected 1 to 1023",
    },
    {
      name: 'a type number that is no integer',
      from: 'typeNumber: 9,',
      to: 'typeNumber: "9",',
      at: '"9"',
      want: 'Note @object: typeNumber is a string, expected an integer',
    },
    {
      name: 'an object table that is no lowercase words',
      from: 'table: "notes"',
      to: 'table: "Notes; DROP"',
      at: '"Notes; DROP"',
      want: "Note @object: table 'Notes; DROP' is no object table name, expected lowercase words joined by underscores (such as notes)",
    },
    {
      name: 'an object table used twice',
      from: 'table: "folders"',
      to: 'table: "members"',
      at: '"members", placeWith',
      want: `Folder: table members is already Member's (${FILE}:11), expected a table no other type or relation has`,
    },
    {
      name: 'a mapping table used twice',
      from: '@relation(table: "folder_has_notes", order: OWNER)',
      to: '@relation(table: "member_has_folders", order: OWNER)',
      at: '"member_has_folders", order',
      want: `Folder.notes @relation(table: "member_has_folders"): table member_has_folders is already Member.folders @relation(table: "member_has_folders")'s (${FILE}:15), expected a table no other type or relation has`,
    },
    {
      name: 'a mapping table of two words',
      from: 'FolderConnection! @relation(table: "member_has_folders")',
      to: 'FolderConnection! @relation(table: "member_folders")',
      at: '"member_folders"',
      want: `Member.folders @relation(table: "member_folders"): table 'member_folders' is not noun_verb_noun, expected member_<verb>_folders (lowercase words joined by underscores, such as author_wrote_posts)`,
    },
    {
      name: 'a mapping table whose nouns are not its types',
      from: 'FolderConnection! @relation(table: "member_has_folders")',
      to: 'FolderConnection! @relation(table: "member_has_boxes")',
      at: '"member_has_boxes"',
      want: `Member.folders @relation(table: "member_has_boxes"): table 'member_has_boxes' is not noun_verb_noun, expected member_<verb>_folders (lowercase words joined by underscores, such as author_wrote_posts)`,
    },
    {
      name: 'an inverse whose types do not mirror',
      from: 'inverse: "member_stars_notes")',
      to: 'inverse: "member_has_folders")',
      at: '"member_has_folders")\n  viewer',
      want: 'Note.starredBy @relation(table: "note_starred_by_members"): inverse member_has_folders runs Member → Folder with no inverse, expected a relation from Member to Note naming note_starred_by_members as its inverse',
    },
    {
      name: 'an inverse naming a relation that does not exist',
      from: 'inverse: "note_starred_by_members", timeRange',
      to: 'inverse: "note_loved_by_members", timeRange',
      at: '"note_loved_by_members"',
      want: 'Member.starred @relation(table: "member_stars_notes"): inverse note_loved_by_members names no relation, expected a relation from Note to Member naming member_stars_notes as its inverse',
    },
    {
      name: 'a relation nothing writes',
      from: 'listedIn: "member_has_folders", ',
      to: '',
      at: '"member_has_folders")\n}',
      want: 'Member.folders @relation(table: "member_has_folders"): nothing writes it, expected a @ref(listedIn:) or a @relate mutation naming it, or an inverse written by one',
    },
    {
      name: 'placement on a field that is no reference',
      from: 'placeWith: "folder"',
      to: 'placeWith: "body"',
      at: '"body"',
      want: "Note @object: placeWith 'body' is no @ref field of Note, expected one of folder, author",
    },
    {
      name: 'a unique namespace the lookups cannot hold (the importer keeps import:<type>; 32 characters at most)',
      from: 'unique: "handle"',
      to: 'unique: "import:member"',
      at: '"import:member"',
      want: "Member.handle @stored: unique namespace 'import:member' is no namespace, expected 1 to 32 lowercase letters, digits or underscores, starting with a letter (such as handle)",
    },
    {
      name: 'a count name used twice',
      from: 'starCount: Int! @count(relation: "member_stars_notes")',
      to: 'starCount: Int! @count(relation: "member_stars_notes")\n  stars: Int! @count(relation: "member_stars_notes")',
      at: '"member_stars_notes")\n  folders',
      want: 'Member.stars @count: the count member_stars_notes is already Member.starCount\'s, expected each count once',
    },
    {
      name: 'a count naming an unknown relation',
      from: '@count(relation: "member_stars_notes")',
      to: '@count(relation: "member_stars_pins")',
      at: '"member_stars_pins"',
      want: 'Member.starCount @count: member_stars_pins names no relation, expected a relation listed from Member',
    },
    {
      name: "a count of another type's list",
      from: '@count(relation: "member_stars_notes")',
      to: '@count(relation: "folder_has_notes")',
      at: '"folder_has_notes")\n  folders',
      want: 'Member.starCount @count: folder_has_notes is listed from Folder, expected a relation listed from Member',
    },
    {
      name: 'a count that is not Int!',
      from: 'starCount: Int!',
      to: 'starCount: Int',
      at: 'Int @count',
      want: 'Member.starCount @count: the field is a nullable Int, expected Int!',
    },
    {
      name: 'a viewer flag naming an unknown relation',
      from: '@viewerEdge(relation: "member_stars_notes")',
      to: '@viewerEdge(relation: "member_likes_notes")',
      at: '"member_likes_notes"',
      want: 'Note.viewerStarred @viewerEdge: member_likes_notes names no relation, expected a relation from the viewer (Member) to Note',
    },
    {
      name: 'a create of an unknown type',
      from: '@create(type: "Folder")',
      to: '@create(type: "Folders")',
      at: '"Folders"',
      want: 'Mutation.createFolder @create: Folders is not an @object type, expected one of Member, Folder, Note',
    },
    {
      name: 'a relate naming an unknown relation',
      from: '@relate(relation: "member_stars_notes"',
      to: '@relate(relation: "member_stars_nots"',
      at: '"member_stars_nots"',
      want: 'Mutation.star @relate: member_stars_nots names no relation, expected the table of a @relation from the viewer (Member)',
    },
    {
      name: 'a mutation naming an argument it does not take',
      from: 'argument: "noteId")\n  unstar',
      to: 'argument: "pinId")\n  unstar',
      at: '"pinId"',
      want: "Mutation.star @relate: names the argument 'pinId', which star does not take, expected one of its arguments (noteId)",
    },
    {
      name: 'a delete naming an argument it does not take (the default, id)',
      from: 'deleteFolder(id: ID!)',
      to: 'deleteFolder(folderId: ID!)',
      at: '@delete',
      want: "Mutation.deleteFolder @delete: names the argument 'id', which deleteFolder does not take, expected one of its arguments (folderId)",
    },
    {
      name: 'a mutation that says nothing of what it does',
      from: ' @delete(type: "Folder")',
      to: '',
      at: 'deleteFolder',
      want: 'Mutation.deleteFolder: has no directive, expected exactly one of @create, @update, @delete, @relate, @unrelate, @reorder, @custom',
    },
    {
      name: 'a reorder of a list without an owner order',
      from: '@reorder(relation: "folder_has_notes"',
      to: '@reorder(relation: "member_stars_notes"',
      at: '"member_stars_notes", argument: "noteId")\n}',
      want: "Mutation.moveNote @reorder: member_stars_notes is in time order only, expected a relation with the owner's order (@relation(order: OWNER))",
    },
    {
      name: 'two directives on one field',
      from: 'starCount: Int! @count(relation: "member_stars_notes")',
      to: 'starCount: Int! @count(relation: "member_stars_notes") @viewerEdge(relation: "member_stars_notes")',
      at: '@viewerEdge(relation: "member_stars_notes")\n  folders',
      want: 'Member.starCount: has @count and @viewerEdge, expected at most one of @stored, @ref, @relation, @count, @viewerEdge',
    },
    {
      name: 'a misspelled argument of the vocabulary',
      from: '@relation(table: "folder_has_notes", order: OWNER)',
      to: '@relation(table: "folder_has_notes", ordre: OWNER)',
      at: 'ordre',
      want: '@relation takes no argument ordre, expected one of table, inverse, order, timeRange',
    },
    {
      name: 'a directive the vocabulary does not have',
      from: 'starCount: Int! @count(',
      to: 'starCount: Int! @counts(',
      at: '@counts',
      want: "@counts is no directive of the model's vocabulary, expected one of @object, @list, @stored, @ref, @relation, @count, @viewerEdge, @create, @update, @delete, @relate, @unrelate, @reorder, @custom",
    },
    {
      name: 'a relation without its table',
      from: '@relation(table: "folder_has_notes", order: OWNER)',
      to: '@relation(order: OWNER)',
      at: '@relation(order: OWNER)',
      want: 'Folder.notes @relation: no table, expected table: its mapping table, noun_verb_noun',
    },
    {
      name: 'a relate without its relation',
      from: '@relate(relation: "member_stars_notes", argument: "noteId")',
      to: '@relate(argument: "noteId")',
      at: '@relate(argument',
      want: 'Mutation.star @relate: no relation, expected relation: the relation (its table) it changes',
    },
    {
      name: 'an enum value the vocabulary does not have',
      from: 'order: OWNER)',
      to: 'order: OLDEST)',
      at: 'OLDEST',
      want: 'Folder.notes @relation: order is OLDEST, expected one of TIME, OWNER (unquoted)',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.ok(GRAPH.includes(c.from), `the case's text is in the fixture: ${c.from}`);
      const changed = GRAPH.replace(c.from, c.to);
      const expected = `${at(changed, c.at)}: ${c.want}`;
      const found = problems(changed);
      assert.ok(found.includes(expected), `expected the problem\n  ${expected}\ngot:\n  ${found.join('\n  ')}`);
    });
  }

  test("a type number used twice names the first type's `type` line, not its description's", () => {
    const described = GRAPH.replace('type Member @object', '"""\nA member:\nwrites notes.\n"""\ntype Member @object').replace('typeNumber: 8, table: "folders"', 'typeNumber: 7, table: "folders"');
    const line = at(described, 'type Member @object').split(':').slice(0, 2).join(':');
    const expected = `${at(described, '7, table: "folders"')}: Folder: type number 7 is already Member's (${line}), expected a number no other type has (a type number is never reused)`;
    const found = problems(described);
    assert.ok(found.includes(expected), `expected the problem\n  ${expected}\ngot:\n  ${found.join('\n  ')}`);
    assert.equal(model(GRAPH.replace('type Member @object', '"A member."\ntype Member @object')).objects[0]!.declaredAt, `${FILE}:12`, 'declaredAt is the type line');
  });

  describe("a list of an owned object, written by its owner's @relate (a collection's pins)", () => {
    const owned = GRAPH.replace(
      '  moveNote(',
      '  pinNote(folderId: ID!, noteId: ID!): Note! @relate(relation: "folder_pins_notes", argument: "noteId")\n  moveNote(',
    )
      .replace('@relation(table: "folder_has_notes", order: OWNER)', '@relation(table: "folder_has_notes", order: OWNER)\n  pinned(first: Int): NoteConnection! @relation(table: "folder_pins_notes", inverse: "note_pinned_in_folders")')
      .replace('  viewerStarred:', '  pinnedIn(first: Int): FolderConnection! @relation(table: "note_pinned_in_folders", inverse: "folder_pins_notes")\n  viewerStarred:');

    test('is authoritative (VIEWER) with its mirror (INVERSE), as the viewer\'s own relations are', () => {
      const o = model(owned);
      const rel = (t: string) => o.relations.find((r) => r.table === t)!;
      assert.deepEqual([rel('folder_pins_notes').from, rel('folder_pins_notes').writer], ['folder', 'VIEWER']);
      assert.deepEqual([rel('note_pinned_in_folders').from, rel('note_pinned_in_folders').writer], ['note', 'INVERSE']);
      assert.deepEqual(o.mutations.find((x) => x.name === 'pinNote'), { name: 'pinNote', action: 'RELATE', type: null, relation: 'folder_pins_notes', argument: 'noteId' });
    });

    test('of a type nobody owns, is refused', () => {
      const unowned = owned.replace('owner: Member @ref(key: "owner_id", owner: true,', 'owner: Member @ref(key: "owner_id", owner: false,');
      const expected = `${at(unowned, '"folder_pins_notes", argument')}: Mutation.pinNote @relate: folder_pins_notes runs from Folder, expected a relation from the viewer (Member) or from an owned type (one with @ref(owner: true))`;
      assert.ok(problems(unowned).includes(expected), problems(unowned).join('\n'));
    });

    test('without the argument naming the list (<from>Id), is refused', () => {
      const nameless = owned.replace('pinNote(folderId: ID!, noteId: ID!)', 'pinNote(noteId: ID!)');
      const expected = `${at(nameless, '"folder_pins_notes", argument')}: Mutation.pinNote @relate: folder_pins_notes is a list of Folder, and pinNote takes no folderId, expected an argument folderId naming the Folder whose list it changes`;
      assert.deepEqual(problems(nameless), [expected]);
    });
  });

  test("a count beside a viewer's list with no inverse is refused (a deleted object would stay counted); the list alone is sound", () => {
    const oneSided = GRAPH.replace('@relation(table: "member_stars_notes", inverse: "note_starred_by_members", timeRange: true)', '@relation(table: "member_stars_notes", timeRange: true)').replace(
      '  starredBy(first: Int): MemberConnection! @relation(table: "note_starred_by_members", inverse: "member_stars_notes")\n',
      '',
    );
    assert.notEqual(oneSided, GRAPH);
    assert.deepEqual(problems(oneSided), [
      `${at(oneSided, '"member_stars_notes")\n  folders')}: Member.starCount @count: member_stars_notes has no inverse, so a deleted Note leaves it unseen and its count would stay one too high, expected a relation with an inverse (@relation(inverse: …)) to count, or no @count`,
    ]);
    const uncounted = oneSided.replace('  starCount: Int! @count(relation: "member_stars_notes")\n', '');
    assert.deepEqual(problems(uncounted), []);
    assert.equal(model(uncounted).relations.find((r) => r.table === 'member_stars_notes')!.inverse, null);
  });

  test('an unknown type is reported once, where it is named, not again by every check that follows it', () => {
    const noteEdge = GRAPH.replace('type NoteEdge { node: Note! }', 'type NoteEdge { node: Note2! }');
    assert.deepEqual(problems(noteEdge), [
      `${at(noteEdge, 'NoteConnection! @relation(table: "member_stars_notes"')}: Member.starred @relation (NoteConnection's node): Note2 is not an @object type, expected one of Member, Folder, Note`,
      `${at(noteEdge, 'NoteConnection! @relation(table: "folder_has_notes"')}: Folder.notes @relation (NoteConnection's node): Note2 is not an @object type, expected one of Member, Folder, Note`,
    ]);
    const author = GRAPH.replace('author: Member @ref', 'author: Membr @ref');
    assert.deepEqual(problems(author), [`${at(author, 'Membr @ref')}: Note.author @ref: Membr is not an @object type, expected one of Member, Folder, Note`]);
  });

  test('no viewer: said once, at Query, not again by every relation and flag of the viewer', () => {
    const noViewer = GRAPH.replace('type Query { viewer: Member }', 'type Query { me: Member }');
    assert.deepEqual(problems(noViewer), [`${at(noViewer, 'type Query')}: Query has no field viewer, expected Query.viewer naming the type of the viewer`]);
  });

  test('an enum value given as a string says so', () => {
    const quoted = GRAPH.replace('format: HANDLE', 'format: "HANDLE"');
    assert.deepEqual(problems(quoted), [`${at(quoted, '"HANDLE"')}: Member.handle @stored: format is the string "HANDLE", expected one of TEXT, URL, HANDLE, EMAIL (unquoted)`]);
  });

  test('a file that is not GraphQL is named with its line', () => {
    assert.deepEqual(problems('type Query {'), [`${FILE}:1:13: not GraphQL: Expected Name, found <EOF>., expected SDL`]);
  });

  test('every problem at once, in one error, sorted by file and line', () => {
    const wrong = GRAPH.replace('placeWith: "folder"', 'placeWith: "nobody"').replace('typeNumber: 8,', 'typeNumber: 0,');
    const err = (() => {
      try {
        model(wrong);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    assert.ok(err instanceof ModelError);
    assert.deepEqual(err.problems, [
      `${at(wrong, '0, table: "folders"')}: Folder @object: typeNumber 0 does not fit the ID's 10 bits, expected 1 to 1023`,
      `${at(wrong, '"nobody"')}: Note @object: placeWith 'nobody' is no @ref field of Note, expected one of folder, author`,
    ]);
    assert.equal(at(wrong, '0, table: "folders"'), `${FILE}:17:33`);
    assert.match(err.message, /^The declared model has 2 problems:\n {2}test\/notes\.graphql:17:33: /);
  });

  test('problems in several files: sorted by file name, then line', () => {
    const vocabulary = { name: 'schema/model.graphql', body: VOCABULARY };
    const a = { name: 'a/types.graphql', body: GRAPH.replace(/type Mutation \{[^}]*\}/, '').replace('table: "notes"', 'table: "Notes"') };
    const b = { name: 'b/mutations.graphql', body: 'type Mutation {\n  createFolder(name: String!): Folder! @create(type: "Box")\n}' };
    assert.throws(
      () => parseModel([vocabulary, b, a]),
      (err: unknown) => {
        assert.ok(err instanceof ModelError);
        assert.deepEqual(
          err.found.map((p) => `${p.file}:${p.line}`),
          // The star mutations went with the file's Mutation type: the starred lists are written by nothing.
          ['a/types.graphql:7', 'a/types.graphql:16', 'a/types.graphql:20', 'b/mutations.graphql:2'],
        );
        return true;
      },
    );
  });
});
