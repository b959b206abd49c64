// A real HTTPS admission webhook server for tests: listens on 127.0.0.1 with a serving
// certificate from a CA made for the test (src/apiserver/pki.ts), records every AdmissionReview it
// receives, and answers each path with a handler the test gives.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCA, issueServingCert, type CertKey } from '../../src/apiserver/pki.js';

export type Handler = (review: any) => any | Promise<any>;

export interface WebhookServer {
  port: number;
  ca: CertKey;
  /** base64 of the CA certificate, for clientConfig.caBundle */
  caBundle: string;
  url(path: string): string;
  /** the AdmissionReviews received, per path */
  received: Map<string, any[]>;
  handle(path: string, h: Handler): void;
  close(): Promise<void>;
}

export async function startWebhookServer(dnsNames: string[] = []): Promise<WebhookServer> {
  const ca = await createCA('webhook-test-ca');
  const serving = await issueServingCert(ca, 'webhook', { dns: ['localhost', ...dnsNames], ips: ['127.0.0.1'] });
  const handlers = new Map<string, Handler>();
  const received = new Map<string, any[]>();
  const server = https.createServer({ cert: serving.certPEM, key: serving.keyPEM }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'https://x');
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      const list = received.get(url.pathname) ?? [];
      list.push({ review, query: url.searchParams.toString(), headers: req.headers });
      received.set(url.pathname, list);
      const h = handlers.get(url.pathname);
      if (!h) {
        res.writeHead(404).end('no handler');
        return;
      }
      try {
        const out = await h(review);
        if (res.destroyed) return;
        if (typeof out === 'string') res.writeHead(200, { 'content-type': 'application/json' }).end(out);
        else if (out && out.__status) res.writeHead(out.__status, { 'content-type': 'text/plain' }).end(out.body ?? '');
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      } catch (e) {
        res.writeHead(500).end(String(e));
      }
    });
  });
  const { port, close } = await listenLocal(server);
  return {
    port,
    ca,
    caBundle: Buffer.from(ca.certPEM).toString('base64'),
    url: (path) => `https://127.0.0.1:${port}${path}`,
    received,
    handle: (path, h) => void handlers.set(path, h),
    close,
  };
}

/** listen on a free port of 127.0.0.1; close() ends every open connection and stops listening */
export async function listenLocal(server: https.Server): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<import('node:stream').Duplex>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** an AdmissionReview response */
export function respond(review: any, response: Record<string, unknown>): any {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, ...response } };
}

/** a JSONPatch response */
export function patchResponse(review: any, patch: unknown[], extra: Record<string, unknown> = {}): any {
  return respond(review, { allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64'), ...extra });
}
