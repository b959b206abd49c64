// The bare server: a node:https server with Keelson's TLS setup (the same ECDSA serving
// certificate, client certificates requested and checked against the same CA, TLS >= 1.2,
// keep-alive), doing the least each verb can do. It is the machine's own limit that Keelson's
// figures are set beside. Run by bench/run.ts in a process of its own:
//
//   node dist/bench/bare.js <port> <cert.pem> <key.pem> <ca.pem>
//
// Routes (on any path):
//   GET  ...?watch=...          hold the stream open (chunked JSON lines), as a watch
//   GET  anything else          answer the pre-serialized body (set by POST /_bench/get-body)
//   POST /_bench/get-body       the body later GETs answer with
//   POST /_bench/broadcast      write {"type":"MODIFIED","object":<body>}\n to every held stream
//   POST anything else          echo the request body with 201
// Prints "listening <port>" on stdout when ready; SIGTERM closes everything and exits.
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';

const [portArg, certPath, keyPath, caPath] = process.argv.slice(2);
if (!portArg || !certPath || !keyPath || !caPath) {
  process.stderr.write('usage: bare.js <port> <cert.pem> <key.pem> <ca.pem>\n');
  process.exit(2);
}

let getBody: Buffer = Buffer.from('{}');
const streams = new Set<ServerResponse>();

function readBody(req: IncomingMessage, done: (b: Buffer) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
}

function reply(res: ServerResponse, code: number, body: Buffer): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

const server = https.createServer(
  {
    cert: readFileSync(certPath),
    key: readFileSync(keyPath),
    ca: readFileSync(caPath),
    requestCert: true,
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
    keepAliveTimeout: 60_000,
  },
  (req, res) => {
    // the least authentication can be: the client certificate chains to the CA
    if (!(req.socket as TLSSocket).authorized) {
      req.resume();
      reply(res, 401, Buffer.from('{"kind":"Status","code":401}'));
      return;
    }
    const url = req.url ?? '/';
    if (req.method === 'GET') {
      if (url.includes('watch=')) {
        res.statusCode = 200;
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('Transfer-Encoding', 'chunked');
        res.flushHeaders();
        streams.add(res);
        res.on('close', () => streams.delete(res));
        return;
      }
      reply(res, 200, getBody);
      return;
    }
    readBody(req, (body) => {
      if (url === '/_bench/get-body') {
        getBody = body;
        reply(res, 200, Buffer.from(`{"bytes":${body.length}}`));
      } else if (url === '/_bench/broadcast') {
        const frame = Buffer.concat([Buffer.from('{"type":"MODIFIED","object":'), body, Buffer.from('}\n')]);
        for (const s of streams) s.write(frame);
        reply(res, 200, Buffer.from(`{"streams":${streams.size}}`));
      } else {
        reply(res, 201, body);
      }
    });
  },
);
server.headersTimeout = 60_000;
server.requestTimeout = 0;
server.keepAliveTimeout = 60_000;
server.listen(Number(portArg), '127.0.0.1', () => process.stdout.write(`listening ${portArg}\n`));

process.on('SIGTERM', () => {
  for (const s of streams) s.end();
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2000).unref();
});
