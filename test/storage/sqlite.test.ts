import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteBackend } from '../../src/storage/sqlite.js';
import type { Backend } from '../../src/storage/interface.js';
import { bytes, conformance, record, text } from './conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'keelson-sqlite-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

conformance('sqlite', {
  async create() {
    const b = new SqliteBackend(join(dir, `t${n++}`, 'state.db'), { compactChunk: 3 });
    await b.open();
    return b;
  },
  async reopen(b: Backend) {
    await b.close();
    const next = new SqliteBackend((b as SqliteBackend).path, { compactChunk: 3 });
    await next.open();
    return next;
  },
});

test('sqlite: a second process cannot write the file while a backend holds it', async () => {
  const path = join(dir, 'exclusive.db');
  const b = new SqliteBackend(path);
  await b.open();
  await b.create('/x/a', bytes('1'));
  const other = new Database(path, { timeout: 0 });
  assert.throws(() => other.prepare('SELECT COUNT(*) FROM kv').get(), /locked|busy/i);
  other.close();
  await b.close();
});

test('sqlite: the file holds one row per write and the configured pragmas', async () => {
  const path = join(dir, 'rows.db');
  const b = new SqliteBackend(path);
  await b.open();
  const a = await b.create('/r/a', bytes('1'));
  await b.update('/r/a', bytes('2'), a.modRevision);
  await b.delete('/r/a');
  await b.close();
  const db = new Database(path, { readonly: true });
  const rows = db.prepare('SELECT rev, key, create_rev, prev_rev, deleted FROM kv ORDER BY rev').raw().all();
  assert.deepEqual(rows, [
    [1, '/r/a', 1, 0, 0],
    [2, '/r/a', 1, 1, 0],
    [3, '/r/a', 1, 2, 1],
  ]);
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  db.close();
});

test('sqlite: compaction removes superseded rows and tombstones in chunks', async () => {
  const path = join(dir, 'compact.db');
  const b = new SqliteBackend(path, { compactChunk: 7 });
  await b.open();
  let kv = await b.create('/c/a', bytes('0'));
  for (let i = 1; i < 100; i++) kv = await b.update('/c/a', bytes(String(i)), kv.modRevision);
  for (let i = 0; i < 20; i++) await b.create(`/c/t${i}`, bytes('t'));
  for (let i = 0; i < 20; i++) await b.delete(`/c/t${i}`);
  await b.create('/c/z', bytes('z'));
  const rev = await b.currentRevision();
  // writes keep flowing while the compaction runs in chunks
  const compaction = b.compact(rev);
  const during = b.create('/c/during', bytes('d'));
  await Promise.all([compaction, during]);
  await b.close();
  const db = new Database(path, { readonly: true });
  const rows = db.prepare('SELECT key FROM kv ORDER BY rev').pluck().all();
  assert.deepEqual(rows, ['/c/a', '/c/z', '/c/during']);
  assert.equal(db.prepare("SELECT value FROM meta WHERE name = 'compact_done'").pluck().get(), rev);
  db.close();
});

test('sqlite: an interrupted compaction resumes at open', async () => {
  const path = join(dir, 'resume.db');
  const b = new SqliteBackend(path, { compactChunk: 1 });
  await b.open();
  let kv = await b.create('/c/a', bytes('0'));
  for (let i = 1; i < 50; i++) kv = await b.update('/c/a', bytes(String(i)), kv.modRevision);
  const compaction = b.compact(kv.modRevision);
  await b.close(); // stops between chunks
  await compaction;
  const b2 = new SqliteBackend(path);
  await b2.open();
  assert.equal(await b2.compactedRevision(), kv.modRevision);
  await b2.compact(kv.modRevision); // joins the compaction resumed at open
  assert.equal(text((await b2.get('/c/a'))!.value), '49');
  await b2.close();
  const db = new Database(path, { readonly: true });
  assert.equal(db.prepare('SELECT COUNT(*) FROM kv').pluck().get(), 1);
  db.close();
});

test('sqlite: a failed commit rejects the batch and leaves nothing behind', async () => {
  const path = join(dir, 'fail.db');
  const b = new SqliteBackend(path);
  await b.open();
  const a = await b.create('/f/a', bytes('a'));
  const r = record(b, '/f/', a.modRevision);
  await new Promise((res) => setTimeout(res, 1));
  // make the next transaction fail: the connection refuses writes for a moment
  const db = (b as unknown as { db: Database.Database }).db;
  db.pragma('query_only = ON');
  const results = await Promise.allSettled([b.update('/f/a', bytes('a2'), a.modRevision), b.create('/f/b', bytes('b'))]);
  db.pragma('query_only = OFF');
  assert.deepEqual(
    results.map((x) => x.status),
    ['rejected', 'rejected'],
  );
  assert.equal(r.events.length, 0);
  assert.equal(await b.currentRevision(), a.modRevision);
  // the index was rolled back: the same writes succeed now, with the same revisions
  const u = await b.update('/f/a', bytes('a2'), a.modRevision);
  assert.equal(u.modRevision, a.modRevision + 1);
  const c = await b.create('/f/b', bytes('b'));
  assert.equal(c.modRevision, a.modRevision + 2);
  assert.equal(r.events.length, 2);
  await b.close();
});
