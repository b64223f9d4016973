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

const model = (sdl: string) => parseModel(`${VOCABULARY}\n${sdl}`);

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

describe('parseModel: a graph declared in SDL directives, read into plain data', () => {
  const m = model(GRAPH);

  test('object types: their numbers, tables, placement and the viewer', () => {
    assert.equal(m.viewer, 'member');
    assert.deepEqual(
      m.objects.map((o) => [o.name, o.key, o.typeNumber, o.table, o.placeWith]),
      [
        ['Member', 'member', 7, 'members', null],
        ['Folder', 'folder', 8, 'folders', 'owner'],
        ['Note', 'note', 9, 'notes', 'folder'],
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

describe('parseModel: a wrong declaration is refused with every problem named', () => {
  const cases: { name: string; from: string; to: string; want: RegExp }[] = [
    { name: 'a type number used twice', from: 'typeNumber: 8, table: "folders"', to: 'typeNumber: 7, table: "folders"', want: /^Folder: type number 7 is already Member's$/ },
    { name: 'a type number beyond the ID\'s 10 bits', from: 'typeNumber: 9,', to: 'typeNumber: 1024,', want: /^Note @object: expected typeNumber from 1 to 1023, got 1024$/ },
    { name: 'a table that is no SQL name', from: 'table: "notes"', to: 'table: "Notes; DROP"', want: /expected table to be a lower-case SQL name/ },
    { name: 'a table used twice', from: 'table: "folders"', to: 'table: "members"', want: /^Folder: table members is already Member's$/ },
    { name: 'a mapping table not named noun_verb_noun', from: '"member_has_folders")\n}', to: '"members_folders")\n}', want: /expected a name noun_verb_noun: member_<verb>_folders/ },
    { name: 'an inverse that does not point back', from: 'inverse: "member_stars_notes")', to: 'inverse: "member_has_folders")', want: /its inverse member_has_folders must run/ },
    { name: 'an inverse nobody declares', from: 'inverse: "note_starred_by_members", timeRange', to: 'inverse: "note_loved_by_members", timeRange', want: /its inverse note_loved_by_members is not declared/ },
    { name: 'a relation nothing writes', from: 'listedIn: "member_has_folders", ', to: '', want: /member_has_folders"\): nothing writes it/ },
    { name: 'a reference to a type that is no object', from: 'author: Member @ref', to: 'author: PageInfo @ref', want: /^Note.author @ref: PageInfo is not an @object type$/ },
    { name: 'placement on a field that is no reference', from: 'placeWith: "folder"', to: 'placeWith: "body"', want: /placeWith 'body' is not a @ref field of Note/ },
    { name: 'a count of another type\'s list', from: '@count(relation: "member_stars_notes")', to: '@count(relation: "folder_has_notes")', want: /Member.starCount @count: folder_has_notes is not a relation listed from Member/ },
    { name: 'a count that is not Int!', from: 'starCount: Int!', to: 'starCount: Int', want: /expected Int!, got a nullable Int/ },
    { name: 'a mutation that says nothing of what it does', from: ' @delete(type: "Folder")', to: '', want: /^Mutation.deleteFolder: expected exactly one of @create/ },
    { name: 'a mutation argument that does not exist', from: 'argument: "noteId")\n  unstar', to: 'argument: "pinId")\n  unstar', want: /Mutation.star @relate: expected an argument 'pinId'/ },
    { name: 'a reorder of a list without an owner order', from: '@reorder(relation: "folder_has_notes"', to: '@reorder(relation: "member_stars_notes"', want: /has no owner's order/ },
    { name: 'a list given as a plain list, not a connection', from: 'folders(first: Int): FolderConnection!', to: 'folders(first: Int): [Folder!]!', want: /expected a connection type \(edges \{ node \}\), got Folder/ },
    { name: 'a hidden list to a type that is no object', from: 'to: "Note")', to: 'to: "PageInfo")', want: /^Member @list: PageInfo is not an @object type$/ },
    { name: 'a hidden list nothing writes', from: ', listedIn: "member_wrote_notes")', to: ')', want: /^Member @list\(table: "member_wrote_notes"\): nothing writes it/ },
    { name: 'two directives on one field', from: 'starCount: Int! @count(relation: "member_stars_notes")', to: 'starCount: Int! @count(relation: "member_stars_notes") @viewerEdge(relation: "member_stars_notes")', want: /expected at most one of/ },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.ok(GRAPH.includes(c.from), `the case's text is in the graph: ${c.from}`);
      const found = problems(GRAPH.replace(c.from, c.to));
      assert.ok(found.some((p) => c.want.test(p)), `expected a problem matching ${c.want}, got:\n${found.join('\n')}`);
    });
  }

  test('every problem at once, in one error', () => {
    const err = (() => {
      try {
        model(GRAPH.replace('typeNumber: 9,', 'typeNumber: 0,').replace('placeWith: "owner"', 'placeWith: "nobody"'));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    assert.ok(err instanceof ModelError);
    assert.equal(err.problems.length, 2);
    assert.match(err.message, /^The declared model has 2 problems:\n {2}/);
  });
});
