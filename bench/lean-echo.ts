// A POST echo without node:http's request and response objects: the same TLS setup as the bare
// server (bench/bare.ts), the same native HTTP parser (llhttp, fed straight from the TLS handle as
// node:http feeds it), and the answer written as one head and one body. It answers POSTs only
// (201, the body echoed) and is not a server for anything but this measurement: no GET routes,
// no pipelining, no upgrades, no timeouts. bench/echoes.ts runs it beside the bare server to
// size what node:http's JavaScript costs a request, the one large part of a create's main-thread
// time that Keelson and the bare server share.
//
//   node dist/bench/lean-echo.js <port> <cert.pem> <key.pem> <ca.pem>
//
// Prints "listening <port>" when ready; SIGTERM exits.
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// node:http's own parser binding: internal, but exported by `_http_common` in Node 20
const { HTTPParser } = createRequire(import.meta.url)('_http_common') as { HTTPParser: any };
const kOnHeaders = HTTPParser.kOnHeaders | 0;
const kOnHeadersComplete = HTTPParser.kOnHeadersComplete | 0;
const kOnBody = HTTPParser.kOnBody | 0;
const kOnMessageComplete = HTTPParser.kOnMessageComplete | 0;
const kOnExecute = HTTPParser.kOnExecute | 0;

const [portArg, certPath, keyPath, caPath] = process.argv.slice(2);
if (!portArg || !certPath || !keyPath || !caPath) {
  process.stderr.write('usage: lean-echo.js <port> <cert.pem> <key.pem> <ca.pem>\n');
  process.exit(2);
}

// the Date header, made once a second as node:http makes it
let date = '';
let dateAt = 0;
function httpDate(): string {
  const now = Date.now();
  if (now - dateAt >= 1000) {
    date = new Date(now).toUTCString();
    dateAt = now - (now % 1000);
  }
  return date;
}

const server = tls.createServer(
  { cert: readFileSync(certPath), key: readFileSync(keyPath), ca: readFileSync(caPath), requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' },
  (socket) => {
    socket.setNoDelay(true);
    socket.on('error', () => socket.destroy());
    const parser = new HTTPParser();
    parser.initialize(HTTPParser.REQUEST, {}, 0, 0);
    let chunks: Buffer[] = [];
    parser[kOnHeaders] = () => {};
    parser[kOnHeadersComplete] = () => {
      chunks = [];
      return 0;
    };
    parser[kOnBody] = (b: Buffer) => {
      chunks.push(b);
    };
    parser[kOnMessageComplete] = () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      chunks = [];
      const code = socket.authorized ? 201 : 401;
      const out = code === 201 ? body : Buffer.from('{"kind":"Status","code":401}');
      socket.cork();
      socket.write(`HTTP/1.1 ${code} ${code === 201 ? 'Created' : 'Unauthorized'}\r\nContent-Type: application/json\r\nContent-Length: ${out.length}\r\nDate: ${httpDate()}\r\n\r\n`, 'latin1');
      socket.write(out);
      socket.uncork();
    };
    parser[kOnExecute] = (ret: unknown) => {
      if (ret instanceof Error) socket.destroy();
    };
    // the parser reads the TLS handle in C++, as node:http's does: no 'data' events in JavaScript
    (socket as any)._handle._consumed = true;
    parser.consume((socket as any)._handle);
    socket.once('close', () => {
      try {
        parser.close();
      } catch {
        // (already closed)
      }
    });
  },
);
server.listen(Number(portArg), '127.0.0.1', () => process.stdout.write(`listening ${portArg}\n`));
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
