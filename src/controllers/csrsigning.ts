// The certificate signing controller (kube-controller-manager's csrsigning, pkg/controller/
// certificates/signer): an approved CertificateSigningRequest of one of Kubernetes' signers gets
// its certificate, signed by that signer's CA.
//
//   - kubernetes.io/kube-apiserver-client: usages among digital signature, key encipherment and
//     client auth, client auth required;
//   - kubernetes.io/kube-apiserver-client-kubelet and kubernetes.io/kubelet-serving: the node's
//     subject (O=system:nodes, CN=system:node:<name>), their fixed usages and subject alternative
//     names (none for a client; a DNS name or an IP address required for serving);
//   - kubernetes.io/legacy-unknown: anything.
// A request its signer refuses gets the condition Failed (reason SignerValidationFailure, the
// reason as message). The certificate: the request's subject, public key and subject alternative
// names, the usages asked for, not a CA, valid from five minutes ago for
// min(--cluster-signing-duration, spec.expirationSeconds (at least ten minutes)), less the five
// minutes for one of eight hours or more, and never beyond the CA's own end. Requests not yet
// approved, failed ones, those already signed and other signers are left alone.
import { createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
import type { Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { loadX509 } from '../codec/x509.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import { runQueueWorkers } from './workers.js';

const CSRS = { group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests' };
export const SIGNERS = ['kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving', 'kubernetes.io/legacy-unknown'] as const;
const BACKDATE_MS = 5 * 60_000;
const SHORT_MS = 8 * 3600_000;
const MIN_TTL_MS = 10 * 60_000;

/** a signer's CA, PEM */
export interface SigningCA {
  certPEM: string;
  keyPEM: string;
}

const KEY_USAGES: Record<string, number> = {
  signing: 1,
  'digital signature': 1,
  'content commitment': 2,
  'key encipherment': 4,
  'data encipherment': 8,
  'key agreement': 16,
  'cert sign': 32,
  'crl sign': 64,
  'encipher only': 128,
  'decipher only': 256,
};
const EXT_KEY_USAGES: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** what a request asks for, read from its PKCS#10 */
export interface Request {
  csr: any;
  orgs: string[];
  cn: string;
  dns: string[];
  ips: string[];
  emails: string[];
  uris: string[];
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));

/** the signer's refusal of a request, in Kubernetes' words; undefined when it takes it */
export function signerRefusal(signer: string, r: Request, usages: string[]): string | undefined {
  const u = [...new Set(usages)];
  if (signer === 'kubernetes.io/kube-apiserver-client') {
    for (const x of usages) if (!['digital signature', 'key encipherment', 'client auth'].includes(x)) return `invalid usage for client certificate: ${x}`;
    return usages.includes('client auth') ? undefined : 'missing required usage for client certificate: client auth';
  }
  const node = (): string | undefined => {
    if (!(r.orgs.length === 1 && r.orgs[0] === 'system:nodes')) return 'subject organization is not system:nodes';
    return undefined;
  };
  if (signer === 'kubernetes.io/kube-apiserver-client-kubelet') {
    const n = node();
    if (n) return n;
    if (r.dns.length) return 'DNS subjectAltNames are not allowed';
    if (r.emails.length) return 'Email subjectAltNames are not allowed';
    if (r.ips.length) return 'IP subjectAltNames are not allowed';
    if (r.uris.length) return 'URI subjectAltNames are not allowed';
    if (!r.cn.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
    if (!sameSet(u, ['client auth', 'digital signature', 'key encipherment']) && !sameSet(u, ['client auth', 'digital signature'])) return 'usages did not match [client auth digital signature key encipherment]';
    return undefined;
  }
  if (signer === 'kubernetes.io/kubelet-serving') {
    const n = node();
    if (n) return n;
    if (!r.dns.length && !r.ips.length) return 'DNS or IP subjectAltName is required';
    if (r.emails.length) return 'Email subjectAltNames are not allowed';
    if (r.uris.length) return 'URI subjectAltNames are not allowed';
    if (!r.cn.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
    if (!sameSet(u, ['digital signature', 'key encipherment', 'server auth']) && !sameSet(u, ['digital signature', 'server auth'])) return 'usages did not match [digital signature key encipherment server auth]';
    return undefined;
  }
  return undefined;
}

export async function parseRequest(pemB64: string): Promise<Request> {
  const x509 = await loadX509();
  const csr = new x509.Pkcs10CertificateRequest(Buffer.from(pemB64, 'base64').toString('utf8'));
  const san = csr.extensions.find((e) => e instanceof x509.SubjectAlternativeNameExtension) as InstanceType<typeof x509.SubjectAlternativeNameExtension> | undefined;
  const names: readonly any[] = san?.names.items ?? [];
  const of = (t: string) => names.filter((n: any) => n.type === t).map((n: any) => String(n.value));
  return { csr, orgs: csr.subjectName.getField('O'), cn: csr.subjectName.getField('CN')[0] ?? '', dns: of('dns'), ips: of('ip'), emails: of('email'), uris: of('url') };
}

/** the WebCrypto key and signature algorithm of a CA key */
async function signingKeyOf(keyPEM: string): Promise<{ key: webcrypto.CryptoKey; alg: any }> {
  const k = createPrivateKey(keyPEM);
  const der = k.export({ type: 'pkcs8', format: 'der' });
  if (k.asymmetricKeyType === 'ec') {
    const curve = (k.asymmetricKeyDetails?.namedCurve ?? 'prime256v1') as string;
    const [namedCurve, hash] = curve === 'secp384r1' ? ['P-384', 'SHA-384'] : curve === 'secp521r1' ? ['P-521', 'SHA-512'] : ['P-256', 'SHA-256'];
    const key = await webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve }, false, ['sign']);
    return { key, alg: { name: 'ECDSA', hash } };
  }
  if (k.asymmetricKeyType === 'rsa') {
    const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    return { key: await webcrypto.subtle.importKey('pkcs8', der, alg, false, ['sign']), alg };
  }
  throw new Error(`unsupported CA key type ${k.asymmetricKeyType}`);
}

/** the certificate (PEM) of an approved request, signed by `ca` */
export async function signRequest(r: Request, usages: string[], ttlMs: number, ca: SigningCA, now = Date.now()): Promise<string> {
  const x509 = await loadX509();
  const caCert = new x509.X509Certificate(ca.certPEM);
  const caEnd = caCert.notAfter.getTime();
  let notAfter = now + (ttlMs < SHORT_MS ? ttlMs : ttlMs - BACKDATE_MS);
  const notBefore = now - BACKDATE_MS;
  if (notBefore >= caEnd) throw new Error(`the signer has expired: NotAfter=${caCert.notAfter.toISOString()}`);
  if (notAfter >= caEnd) notAfter = caEnd;
  if (now >= caEnd) throw new Error(`refusing to sign a certificate that expired in the past: NotAfter=${caCert.notAfter.toISOString()}`);
  let flags = 0;
  const ext: string[] = [];
  for (const u of usages) {
    if (KEY_USAGES[u] !== undefined) {
      if ((flags & KEY_USAGES[u]!) === 0) flags |= KEY_USAGES[u]!;
    } else if (EXT_KEY_USAGES[u] !== undefined) {
      if (!ext.includes(EXT_KEY_USAGES[u]!)) ext.push(EXT_KEY_USAGES[u]!);
    } else throw new Error(`unrecognized usage: ${u}`);
  }
  const extensions: any[] = [new x509.BasicConstraintsExtension(false, undefined, true)];
  if (flags) extensions.push(new x509.KeyUsagesExtension(flags, true));
  if (ext.length) extensions.push(new x509.ExtendedKeyUsageExtension(ext, false));
  const san = r.csr.extensions.find((e: unknown) => e instanceof x509.SubjectAlternativeNameExtension);
  if (san) extensions.push(new x509.SubjectAlternativeNameExtension(san.names.toJSON(), false));
  const ski = caCert.getExtension(x509.SubjectKeyIdentifierExtension);
  if (ski) extensions.push(new x509.AuthorityKeyIdentifierExtension(ski.keyId, false));
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const { key, alg } = await signingKeyOf(ca.keyPEM);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial.toString('hex'),
    subject: r.csr.subjectName,
    issuer: caCert.subjectName,
    notBefore: new Date(notBefore),
    notAfter: new Date(notAfter),
    publicKey: r.csr.publicKey,
    signingKey: key,
    signingAlgorithm: alg,
    extensions,
  });
  return cert.toString('pem') + '\n';
}

/** a request's condition of this type with status True, if any */
export const trueCondition = (csr: any, type: string): any => (csr?.status?.conditions ?? []).find((c: any) => c?.type === type && c.status === 'True');
const isTrue = (csr: any, type: string): boolean => trueCondition(csr, type) !== undefined;

export interface CSRSigningOptions {
  client: RESTClient;
  csrs: Informer<any>;
  /** the CA of each signer this controller signs for */
  cas: Partial<Record<(typeof SIGNERS)[number], SigningCA>>;
  /** --cluster-signing-duration */
  durationMs: number;
  log?: Logger;
}

export class CSRSigningController {
  readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'certificate');
  private readonly log: Logger;

  constructor(private readonly o: CSRSigningOptions) {
    this.log = o.log ?? nopLogger;
    const add = (csr: any) => {
      if (csr?.metadata?.name) this.queue.add(csr.metadata.name);
    };
    o.csrs.addEventHandler({ add, update: (_old, csr) => add(csr) });
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    await runQueueWorkers({ name: 'certificate controller "csrsigning"', log: this.log, queue: this.queue, informers: [this.o.csrs], sync: (k, s) => this.sync(k, s), failure: 'Signing a CertificateSigningRequest failed' }, workers, signal);
  }

  async sync(name: string, signal: AbortSignal): Promise<void> {
    const cached = this.o.csrs.get(name);
    if (!cached || !isTrue(cached, 'Approved') || isTrue(cached, 'Failed') || cached.status?.certificate) return;
    const signer = cached.spec?.signerName as (typeof SIGNERS)[number];
    const ca = this.o.cas[signer];
    if (!ca) return;
    const csr = structuredClone(cached);
    const usages: string[] = Array.isArray(csr.spec?.usages) ? csr.spec.usages : [];
    let req: Request;
    try {
      req = await parseRequest(String(csr.spec?.request ?? ''));
    } catch (e) {
      throw new Error(`unable to parse csr "${name}": ${(e as Error).message}`);
    }
    const refusal = signerRefusal(signer, req, usages);
    csr.status ??= {};
    if (refusal) {
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      csr.status.conditions = [...(csr.status.conditions ?? []), { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: refusal, lastUpdateTime: now, lastTransitionTime: now }];
    } else {
      const exp = csr.spec?.expirationSeconds;
      const ttl = typeof exp === 'number' ? Math.min(this.o.durationMs, Math.max(MIN_TTL_MS, exp * 1000)) : this.o.durationMs;
      csr.status.certificate = Buffer.from(await signRequest(req, usages, ttl, ca)).toString('base64');
    }
    try {
      await new ResourceClient<any>(this.o.client, CSRS).updateSubresource(csr, 'status', { signal });
      this.log.v(2).info(refusal ? 'Refused a certificate signing request' : 'Signed a certificate signing request', { csr: name, signer });
    } catch (e) {
      // (gone, or changed meanwhile: its update event brings it back)
      if (isNotFound(e) || isConflict(e)) return;
      throw e;
    }
  }
}

export const csrSigningControllerDescriptor: ControllerDescriptor = {
  name: 'certificatesigningrequest-signing-controller',
  async run(ctx) {
    const cas = ctx.signingCAs ?? {};
    if (!Object.keys(cas).length) {
      ctx.log.info('Skipping CSR signer controller because no csr cert/key was specified');
      return;
    }
    await withClient(ctx, 'certificate-controller', undefined, async (client) => {
      const c = new CSRSigningController({ client, csrs: informerOf<any>(ctx, CSRS), cas, durationMs: ctx.options.clusterSigningDurationMs, log: ctx.log });
      await c.run(5, ctx.signal);
    });
  },
};
