// The SqliteBackend's worker thread: it owns the SQLite connection once the main thread hands the
// file over, and serves the backend's messages strictly in order (commits, reads, compaction chunks),
// so a commit's fsync and the WAL checkpoints never block the main thread's event loop.
// See sqlite.ts for the design, sqlite-ops.ts for the requests.

import { parentPort } from 'node:worker_threads';
import { decodeCommit, Store, transferOfResult, type FromWorker, type ToWorker } from './sqlite-ops.js';

const port = parentPort;
if (!port) throw new Error('sqlite-worker: not started as a worker thread');

let store: Store | undefined;

function reply(id: number, fn: () => unknown): void {
  let msg: FromWorker;
  let transfer: ArrayBuffer[] = [];
  try {
    const value = fn();
    transfer = transferOfResult(value);
    msg = { t: 'reply', id, ok: true, value };
  } catch (err) {
    const e = err as Error & { code?: unknown };
    msg = { t: 'reply', id, ok: false, message: e?.message ?? String(err), code: typeof e?.code === 'string' ? e.code : undefined };
  }
  port!.postMessage(msg, transfer);
}

port.on('message', (m: ToWorker) => {
  switch (m.t) {
    case 'open':
      return reply(m.id, () => {
        const s = new Store(m.path, true, m.indexEvery);
        try {
          // the first read takes the exclusive lock; no revision may have appeared since the main
          // thread let go of the file (compaction may have removed the newest rows: fewer is fine)
          const { maxRev } = s.state();
          if (maxRev > m.expectRev) throw new Error(`storage changed while it was handed over (revision ${maxRev}, expected ${m.expectRev})`);
        } catch (err) {
          s.close();
          throw err;
        }
        store = s;
        return undefined;
      });
    case 'close':
      return reply(m.id, () => {
        store?.close();
        store = undefined;
        return undefined;
      });
    case 'commit1':
      return reply(m.id, () => {
        if (!store) throw new Error('storage closed');
        return store.handle(decodeCommit(m.buf));
      });
    default:
      return reply(m.id, () => {
        if (!store) throw new Error('storage closed');
        return store.handle(m);
      });
  }
});

port.postMessage({ t: 'ready' } satisfies FromWorker);
