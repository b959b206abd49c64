import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StorageEvent } from '../../src/storage/interface.js';
import { WatchHub } from '../../src/storage/watch-hub.js';

const enc = new TextEncoder();

function hubOver(log: StorageEvent[], recent = 0) {
  let committed = 0;
  const hub = new WatchHub(
    {
      history: (prefix, after, upto, max) => log.filter((e) => e.revision > after && e.revision <= upto && e.kv.key.startsWith(prefix)).slice(0, max),
      committed: () => committed,
      compacted: () => 0,
    },
    { recent },
  );
  const commit = (keys: string[]) => {
    const evs: StorageEvent[] = keys.map((key) => {
      const rev = ++committed;
      return { type: 'put', kv: { key, value: enc.encode(key), createRevision: rev, modRevision: rev }, revision: rev };
    });
    log.push(...evs);
    hub.deliver(evs, committed);
  };
  return { hub, commit };
}

test('watch-hub: events reach the watchers of every matching prefix, found by lookup', async () => {
  const prefixes = [
    '',
    '/',
    '/registry/',
    '/registry/configmaps/',
    '/registry/configmaps/ns1/',
    '/registry/config',
    '/registry/configmaps/ns1/a',
    '/registry/configmaps/ns1/a/',
    'x',
    '/registry/secrets/',
    '/registry/ünï/',
    '/registry/\u{1F600}/',
  ];
  const { hub, commit } = hubOver([]);
  const got = new Map<string, string[]>();
  const lastRev = new Map<string, number>();
  const progress = new Map<string, number>();
  for (const p of prefixes) {
    got.set(p, []);
    // two watchers per prefix share one group
    for (let i = 0; i < 2; i++) {
      hub.watch(p, {
        afterRevision: 0,
        onEvents: (evs) => {
          if (i === 0) got.get(p)!.push(...evs.map((e) => e.kv.key));
          if (i === 0) lastRev.set(p, evs[evs.length - 1].revision);
        },
        onError: (err) => assert.fail(err),
        onProgress: (rev) => {
          if (i === 0) progress.set(p, rev);
        },
      });
    }
  }
  assert.equal(hub.size, prefixes.length * 2);
  await Promise.resolve(); // the watchers turn live
  const keys = [
    '/registry/configmaps/ns1/a',
    '/registry/configmaps/ns1/ab',
    '/registry/configmaps/ns1/a/b',
    '/registry/configmaps/ns2/a',
    '/registry/configmapsx/ns1/a',
    '/registry/secrets/ns1/s',
    '/registry/ünï/k',
    '/registry/\u{1F600}/k',
    '/registry/',
    'x',
    'xy/z',
    'nope',
    '',
  ];
  commit(keys.slice(0, 5));
  commit(keys.slice(5));
  for (const p of prefixes) {
    assert.deepEqual(
      got.get(p),
      keys.filter((k) => k.startsWith(p)),
      `prefix ${JSON.stringify(p)}`,
    );
    // each watcher knows it is up to date: by its last event, or by progress
    assert.equal(Math.max(progress.get(p) ?? 0, lastRev.get(p) ?? 0), keys.length, `progress of ${JSON.stringify(p)}`);
  }
});

test('watch-hub: a replay within the recent events turns live at once; older ones read history', async () => {
  const log: StorageEvent[] = [];
  const { hub, commit } = hubOver(log, 4);
  hub.resetRecent(0);
  for (let i = 0; i < 10; i++) commit([`/a/k${i}`, `/b/k${i}`]);
  const recent: number[] = [];
  const old: number[] = [];
  hub.watch('/a/', { afterRevision: 17, onEvents: (evs) => recent.push(...evs.map((e) => e.revision)), onError: (e) => assert.fail(e) });
  hub.watch('/a/', { afterRevision: 2, onEvents: (evs) => old.push(...evs.map((e) => e.revision)), onError: (e) => assert.fail(e) });
  await Promise.resolve();
  commit(['/a/new']);
  assert.deepEqual(recent, [19, 21]);
  assert.deepEqual(old, [3, 5, 7, 9, 11, 13, 15, 17, 19, 21]);
});
