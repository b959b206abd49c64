// The kubelet's certificates from the cluster, kept current as the kubelet's certificate managers
// keep them.
//
// Its client certificate (--rotate-certificates, with --bootstrap-kubeconfig's layout: the
// kubeconfig names <cert-dir>/kubelet-client-current.pem): at 70 to 90% of the certificate's life
// (a random point, as the kubelet picks it) a new key and a CertificateSigningRequest for signer
// kubernetes.io/kube-apiserver-client-kubelet, made with the current certificate (the approving
// controller approves a node's request for itself: selfnodeclient); the issued pair is written as
// kubelet-client-<time>.pem, the link moved to it, and every client of the kubelet changes over
// (RESTConfig.certSource: their connections are closed and made again with the new certificate).
//
// Its serving certificate (--rotate-server-certificates, the
// KubeletConfiguration's serverTLSBootstrap, with the RotateKubeletServerCertificate gate): as
// the kubelet's server certificate manager does, it asks for a certificate with a
// CertificateSigningRequest (signer kubernetes.io/kubelet-serving, usages digital signature and
// server auth, `CN=system:node:<node>, O=system:nodes`, the node's host names and addresses as
// subject alternative names), waits until someone approves it (Kubernetes approves no serving
// certificate by itself: `kubectl certificate approve`) and the signer issues it, keeps it in
// --cert-dir as kubelet-server-<time>.pem (certificate and key) with the link
// kubelet-server-current.pem, serves with it, and asks again when 70 to 90% of its life has passed
// (a random point, as the kubelet picks it). A valid current certificate in --cert-dir is used at
// start. Until the first one is issued the kubelet serves its self-signed (or --tls-cert-file)
// certificate, where Kubernetes' kubelet refuses TLS handshakes: the API server, which does not
// verify the kubelet without --kubelet-certificate-authority, can reach the kubelet meanwhile.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../client/log.js';
import { RESTClient, type RESTConfig } from '../client/rest.js';
import { makeNodeRequest, requestCertificate, writeCurrentPair } from './bootstrap.js';

/** what each kind of certificate is asked for with, and kept as */
const KINDS = {
  server: { signer: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'server auth'], prefix: 'kubelet-server', what: 'serving' },
  client: { signer: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'], prefix: 'kubelet-client', what: 'client' },
} as const;
/** a failed or denied request is made again after this long */
const RETRY_MS = 30_000;
/** how long one request is waited for (the kubelet's 15 minutes) */
const WAIT_MS = 15 * 60_000;

export interface CertificateManagerOptions {
  /** the kubelet's serving certificate, or its client certificate */
  kind: 'server' | 'client';
  rest: RESTConfig;
  nodeName: string;
  certDir: string;
  /** the subject alternative names of a serving certificate: the node's host names and IP addresses */
  hostnames?: string[];
  ips?: string[];
  log: Logger;
  /** a certificate to serve with (PEM certificate chain and key) */
  use: (certPEM: string, keyPEM: string) => void;
  userAgent?: string;
  /** where in a certificate's life it is renewed (default: a random point between 70 and 90%) */
  renewAt?: () => number;
}

/** the certificate and key of a PEM file holding both, if it has a certificate still valid */
function loadPair(path: string, now: number): { certPEM: string; keyPEM: string; cert: X509Certificate } | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    const certs = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\s*/g);
    const key = text.match(/-----BEGIN (?:EC |RSA )?PRIVATE KEY-----[\s\S]+?-----END (?:EC |RSA )?PRIVATE KEY-----\s*/);
    if (!certs?.length || !key) return undefined;
    const cert = new X509Certificate(certs[0]!);
    if (Date.parse(cert.validTo) <= now) return undefined;
    return { certPEM: certs.join(''), keyPEM: key[0], cert };
  } catch {
    return undefined;
  }
}

export class CertificateManager {
  private readonly abort = new AbortController();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly client: RESTClient;
  private readonly current: string;

  private readonly k: (typeof KINDS)[keyof typeof KINDS];

  constructor(private readonly o: CertificateManagerOptions) {
    this.k = KINDS[o.kind];
    this.client = new RESTClient({ ...o.rest, userAgent: o.userAgent ?? o.rest.userAgent });
    this.current = join(o.certDir, `${this.k.prefix}-current.pem`);
  }

  /** with the current certificate served (or used) already: its renewal is scheduled, a missing one asked for */
  start(): void {
    const kept = loadPair(this.current, Date.now());
    if (kept) {
      this.o.log.info(`Loaded the ${this.k.what} certificate of --cert-dir`, { path: this.current, expires: kept.cert.validTo });
      this.o.use(kept.certPEM, kept.keyPEM);
      this.schedule(kept.cert);
    } else this.renewNow();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    this.client.close();
  }

  /** the renewal at a point of the certificate's life (70 to 90%, as the kubelet's jitter) */
  private schedule(cert: X509Certificate): void {
    const from = Date.parse(cert.validFrom);
    const to = Date.parse(cert.validTo);
    const at = from + (to - from) * (this.o.renewAt?.() ?? 0.7 + 0.2 * Math.random());
    this.o.log.v(2).info(`Certificate rotation scheduled (${this.k.what})`, { expires: cert.validTo, renewAt: new Date(at).toISOString() });
    this.arm(Math.max(0, at - Date.now()));
  }

  private arm(ms: number): void {
    if (this.abort.signal.aborted) return;
    if (this.timer) clearTimeout(this.timer);
    // (a timer holds at most ~24.8 days: a longer wait is taken in steps)
    const step = Math.min(ms, 2 ** 31 - 1);
    this.timer = setTimeout(() => (step < ms ? this.arm(ms - step) : this.renewNow()), step);
    this.timer.unref?.();
  }

  private renewNow(): void {
    if (this.abort.signal.aborted) return;
    this.running = this.renew().catch((e) => {
      if (this.abort.signal.aborted) return;
      this.o.log.error(e, `Failed to obtain a ${this.k.what} certificate; trying again`, { retryIn: `${RETRY_MS / 1000}s` });
      this.arm(RETRY_MS);
    });
  }

  private async renew(): Promise<void> {
    const { keyPEM, csrPEM } = await makeNodeRequest(this.o.nodeName, this.o.kind === 'server' ? { dns: this.o.hostnames ?? [], ips: this.o.ips ?? [] } : undefined);
    // (the request waits for someone to approve it; after 15 minutes, as the kubelet, a new one)
    const { name, certPEM } = await requestCertificate(this.client, csrPEM, this.k.signer, [...this.k.usages], Date.now() + WAIT_MS, this.o.log, this.k.what, this.abort.signal);
    const path = writeCurrentPair(this.o.certDir, this.k.prefix, certPEM, keyPEM);
    const cert = new X509Certificate(certPEM);
    this.o.log.info(`Certificate rotation: ${this.k.what} certificate issued`, { csr: name, path, expires: cert.validTo });
    this.o.use(certPEM, keyPEM);
    this.schedule(cert);
  }
}
