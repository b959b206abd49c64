// The POST echo of lean-echo.ts with its socket work on a thread of its own: a worker thread owns
// the listening socket, the TLS connections and their reads and writes; the main thread receives
// the plaintext bytes (every connection's reads of one event-loop turn copied into one
// transferred ArrayBuffer), finds each request's end, and posts back the answers the same way.
// It asks one question: how much main-thread time would Keelson save per request by moving TLS
// and the socket calls off its main thread, and what does the crossing cost in all? (bench/
// echoes.ts runs it beside lean-echo.ts and reads each thread's CPU.) It is a measurement, not a
// server: POSTs with Content-Length only, no pipelining limits, no upgrades, no timeouts.
//
//   node dist/bench/offload-echo.js <port> <cert.pem> <key.pem> <ca.pem>
//
// Prints "listening <port>" when ready; SIGTERM exits.
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

/** one turn's chunks for many connections, sent as ids, lengths and one transferred buffer */
interface Batch {
  ids: number[];
  lens: number[];
  buf: ArrayBuffer;
}

/** collects [id, bytes] pairs and posts them as one Batch at the end of the event-loop turn */
function batcher(post: (b: Batch, transfer: ArrayBuffer[]) => void): (id: number, bytes: Buffer) => void {
  let ids: number[] = [];
  let bufs: Buffer[] = [];
  let total = 0;
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const all = Buffer.allocUnsafeSlow(total);
    const lens = new Array<number>(bufs.length);
    let off = 0;
    for (let i = 0; i < bufs.length; i++) {
      off += bufs[i]!.copy(all, off);
      lens[i] = bufs[i]!.length;
    }
    post({ ids, lens, buf: all.buffer as ArrayBuffer }, [all.buffer as ArrayBuffer]);
    ids = [];
    bufs = [];
    total = 0;
  };
  return (id, bytes) => {
    ids.push(id);
    bufs.push(bytes);
    total += bytes.length;
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}

function eachOf(b: Batch, f: (id: number, bytes: Buffer) => void): void {
  const all = Buffer.from(b.buf);
  let off = 0;
  for (let i = 0; i < b.ids.length; i++) {
    f(b.ids[i]!, all.subarray(off, off + b.lens[i]!));
    off += b.lens[i]!;
  }
}

if (isMainThread) {
  const [portArg, certPath, keyPath, caPath] = process.argv.slice(2);
  if (!portArg || !certPath || !keyPath || !caPath) {
    process.stderr.write('usage: offload-echo.js <port> <cert.pem> <key.pem> <ca.pem>\n');
    process.exit(2);
  }
  const worker = new Worker(new URL(import.meta.url), { workerData: { portArg, certPath, keyPath, caPath } });
  const send = batcher((b, t) => worker.postMessage(b, t));
  // what each connection has read and not yet answered
  const pending = new Map<number, Buffer | null>();
  let date = '';
  let dateAt = 0;
  const answer = (id: number): void => {
    for (;;) {
      const buf = pending.get(id);
      if (!buf) return;
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.toString('latin1', 0, end);
      const m = /content-length:\s*(\d+)/i.exec(head);
      const len = m ? Number(m[1]) : 0;
      if (buf.length < end + 4 + len) return;
      const body = buf.subarray(end + 4, end + 4 + len);
      pending.set(id, buf.length > end + 4 + len ? buf.subarray(end + 4 + len) : null);
      const now = Date.now();
      if (now - dateAt >= 1000) {
        date = new Date(now).toUTCString();
        dateAt = now - (now % 1000);
      }
      const h = `HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: ${len}\r\nDate: ${date}\r\n\r\n`;
      const out = Buffer.allocUnsafe(h.length + len);
      out.write(h, 0, 'latin1');
      body.copy(out, h.length);
      send(id, out);
    }
  };
  worker.on('message', (m: Batch | { open: number } | { close: number } | { listening: true }) => {
    if ('open' in m) pending.set(m.open, null);
    else if ('close' in m) pending.delete(m.close);
    else if ('listening' in m) process.stdout.write(`listening ${portArg}\n`);
    else
      eachOf(m, (id, bytes) => {
        if (!pending.has(id)) return;
        const had = pending.get(id);
        // (the batch's buffer is the main thread's own now, so its slices may be kept)
        pending.set(id, had ? Buffer.concat([had, bytes]) : bytes);
        answer(id);
      });
  });
  process.on('SIGTERM', () => process.exit(0));
} else {
  const { portArg, certPath, keyPath, caPath } = workerData as Record<string, string>;
  const port = parentPort!;
  const sockets = new Map<number, tls.TLSSocket>();
  let next = 1;
  const send = batcher((b, t) => port.postMessage(b, t));
  const server = tls.createServer(
    { cert: readFileSync(certPath!), key: readFileSync(keyPath!), ca: readFileSync(caPath!), requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' },
    (s) => {
      s.setNoDelay(true);
      const id = next++;
      sockets.set(id, s);
      port.postMessage({ open: id });
      s.on('data', (b: Buffer) => send(id, b));
      s.on('error', () => s.destroy());
      s.on('close', () => {
        sockets.delete(id);
        port.postMessage({ close: id });
      });
    },
  );
  port.on('message', (b: Batch) => eachOf(b, (id, bytes) => sockets.get(id)?.write(bytes)));
  server.listen(Number(portArg), '127.0.0.1', () => port.postMessage({ listening: true }));
}
