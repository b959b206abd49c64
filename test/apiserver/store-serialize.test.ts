// The store's one serialization of a write (registry/store.ts encode): a create's shared
// managedFields list goes in as the text made with it, not serialized again, and the stored bytes
// and the answer's bytes are what serializing the object gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBackend } from '../../src/storage/memory.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { ResourceStore } from '../../src/apiserver/registry/store.js';
import { decodedEntries, setDecodedEntries } from '../../src/storage/cacher.js';
import { strategyFor } from '../../src/apiserver/registry/strategies.js';
import { trackUpdate } from '../../src/patch/ssa/fieldmanager.js';
import { normalize } from '../../src/codec/json.js';
import { FRAGMENT_PLACEHOLDER } from '../../src/codec/resourceversion.js';

test("a create's shared managedFields list is spliced in as its text: not serialized again, the same bytes", async () => {
  const kind = BUILTIN_KINDS.find((k) => k.group === '' && k.resource === 'configmaps')!;
  const backend = new MemoryBackend();
  const store = new ResourceStore(kind, strategyFor(kind), backend);
  await store.start();
  const info = { manager: 'splicer', apiVersion: 'v1', time: '2026-11-22T10:00:00Z' };
  const cm = (name: string) => {
    const o = normalize(kind.type, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels: { app: 'x' } }, data: { k: `ünï ${name}` } }).obj;
    return trackUpdate(undefined, o, kind.type, info);
  };
  // the first create of a structure computes its fields; the later ones share the memo's list
  await store.create(cm('first'), { dryRun: false });
  const serialized: unknown[] = [];
  const stringify = JSON.stringify;
  JSON.stringify = ((value: any, ...rest: any[]) => {
    if (value && typeof value === 'object' && value.kind === 'ConfigMap') serialized.push(value.metadata.managedFields);
    return (stringify as any)(value, ...rest);
  }) as typeof JSON.stringify;
  let created: any;
  try {
    created = await store.create(cm('second'), { dryRun: false });
  } finally {
    JSON.stringify = stringify;
  }
  assert.deepEqual(serialized, [FRAGMENT_PLACEHOLDER]);
  assert.equal(created.metadata.managedFields.length, 1);
  assert.equal(created.metadata.managedFields[0].manager, 'splicer');
  const kv = (await backend.get('/registry/configmaps/default/second'))!;
  const { resourceVersion, ...withoutRV } = created.metadata;
  assert.equal(resourceVersion, String(kv.modRevision));
  assert.equal(Buffer.from(kv.value).toString('utf8'), JSON.stringify({ ...created, metadata: withoutRV }));
  const e = store.get('default', 'second')!;
  assert.equal(e.obj, created);
  assert.equal(Buffer.from(e.json!).toString('utf8'), JSON.stringify(created));
  store.stop();
});

test("a create hands back the cache's own entry of its write, made as it committed, without looking the key up again", async () => {
  const kind = BUILTIN_KINDS.find((k) => k.group === '' && k.resource === 'configmaps')!;
  const backend = new MemoryBackend();
  const store = new ResourceStore(kind, strategyFor(kind), backend);
  await store.start();
  const cm = (name: string) => normalize(kind.type, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { k: name } }).obj;
  const get = store.cacher.get.bind(store.cacher);
  let lookups = 0;
  store.cacher.get = (key: string) => {
    lookups++;
    return get(key);
  };
  // (the entries stay decoded while this test looks at them, whatever KEELSON_DECODED_ENTRIES says)
  const decoded = decodedEntries();
  setDecodedEntries(64);
  try {
    // several creates committed together: each gets its own entry
    const outs = await Promise.all(['a', 'b', 'c'].map((n) => store.createWithEntry(cm(n), { dryRun: false })));
    assert.equal(lookups, 0);
    for (const [i, n] of ['a', 'b', 'c'].entries()) {
      const { obj, entry } = outs[i]!;
      assert.equal(obj.metadata.name, n);
      assert.equal(entry, get(`/registry/configmaps/default/${n}`));
      assert.equal(entry!.obj, obj);
      assert.equal(Buffer.from(entry!.json!).toString('utf8'), JSON.stringify(obj));
    }
  } finally {
    store.cacher.get = get;
    store.stop();
    setDecodedEntries(decoded);
  }
});
