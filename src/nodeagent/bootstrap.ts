// The kubelet's TLS bootstrap (--bootstrap-kubeconfig): when the --kubeconfig file does not exist
// (or its client certificate has expired), the kubelet asks for a client certificate of its own
// with the bootstrap credentials: a new P-256 key, a CertificateSigningRequest for
// `CN=system:node:<node>, O=system:nodes` with signer kubernetes.io/kube-apiserver-client-kubelet
// and usages digital signature and client auth, then waits until it is approved (the
// certificatesigningrequest-approving-controller approves a node's own request when the
// requester may create certificatesigningrequests/nodeclient) and signed. The certificate and key
// are written together to <cert-dir>/kubelet-client-<time>.pem, with the link
// kubelet-client-current.pem pointing at it, and the --kubeconfig written to use that file, as
// the kubelet's certificate manager and bootstrap.go do.
import { createPrivateKey, X509Certificate, webcrypto } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import type { Logger } from '../client/log.js';
import { RESTClient, type RESTConfig } from '../client/rest.js';
import { sleep } from '../client/flowcontrol.js';
import { loadX509 } from '../codec/x509.js';

export interface BootstrapOptions {
  bootstrapRest: RESTConfig;
  /** the server and CA of the bootstrap kubeconfig, for the kubeconfig written */
  server: string;
  caPEM?: string;
  insecureSkipTLSVerify?: boolean;
  nodeName: string;
  certDir: string;
  kubeconfigPath: string;
  userAgent: string;
  log: Logger;
  /** how long to wait for the certificate (default 15 minutes, as the kubelet's) */
  timeoutMs?: number;
}

const SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';

/** the absolute path of the kubeconfig's client certificate file, if it names one */
export function kubeconfigClientCertPath(path: string): string | undefined {
  try {
    const kc = YAML.parse(readFileSync(path, 'utf8'));
    const f = kc?.users?.[0]?.user?.['client-certificate'];
    if (typeof f !== 'string' || !f) return undefined;
    return f.startsWith('/') ? f : join(dirname(path), f);
  } catch {
    return undefined;
  }
}

/** whether the kubeconfig exists with a client certificate that is still valid */
export function kubeconfigUsable(path: string): boolean {
  if (!existsSync(path)) return false;
  try {
    const kc = YAML.parse(readFileSync(path, 'utf8'));
    const user = kc?.users?.[0]?.user ?? {};
    let pem = '';
    if (user['client-certificate-data']) pem = Buffer.from(user['client-certificate-data'], 'base64').toString('utf8');
    else if (user['client-certificate']) {
      const f: string = user['client-certificate'];
      pem = readFileSync(f.startsWith('/') ? f : join(dirname(path), f), 'utf8');
    }
    else return true; // (a token or other credentials: the kubeconfig is used as it is)
    const cert = new X509Certificate(pem);
    return Date.parse(cert.validTo) > Date.now();
  } catch {
    return false;
  }
}

/**
 * a PEM private key (P-256) and a PKCS#10 request for a certificate of the node
 * (`CN=system:node:<node>, O=system:nodes`), with `san`'s names for a serving certificate
 */
export async function makeNodeRequest(nodeName: string, san?: { dns: string[]; ips: string[] }): Promise<{ keyPEM: string; csrPEM: string }> {
  const x509 = await loadX509();
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const names = san ? [...san.dns.map((value) => ({ type: 'dns' as const, value })), ...san.ips.map((value) => ({ type: 'ip' as const, value }))] : [];
  const extensions = names.length ? [new x509.SubjectAlternativeNameExtension(names)] : undefined;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: `O=system:nodes, CN=system:node:${nodeName}`, keys, signingAlgorithm: alg, extensions }, webcrypto as any);
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPEM = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'sec1' }).toString();
  return { keyPEM, csrPEM: csr.toString('pem') };
}

/**
 * a CertificateSigningRequest for `csrPEM` (generateName csr-), then its certificate once it is
 * approved and signed; refused when it is denied or fails, or at `deadline`
 */
export async function requestCertificate(
  client: RESTClient,
  csrPEM: string,
  signerName: string,
  usages: string[],
  deadline: number,
  log: Logger,
  what: string,
  signal?: AbortSignal,
): Promise<{ name: string; certPEM: string }> {
  const body = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { generateName: 'csr-' },
    spec: { request: Buffer.from(csrPEM).toString('base64'), signerName, usages },
  };
  let made: any;
  try {
    made = await client.json({ method: 'POST', path: '/apis/certificates.k8s.io/v1/certificatesigningrequests', body, signal });
  } catch (e) {
    throw new Error(`cannot create certificate signing request: ${(e as Error).message}`);
  }
  const name = made.metadata.name;
  log.info(`Waiting for ${what} certificate to be issued`, { csr: name, signerName });
  for (;;) {
    const csr = await client.json({ method: 'GET', path: `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`, signal });
    const conds: any[] = csr.status?.conditions ?? [];
    const denied = conds.find((c) => c.type === 'Denied' && c.status === 'True');
    const failed = conds.find((c) => c.type === 'Failed' && c.status === 'True');
    if (denied) throw new Error(`certificate signing request ${name} is denied, reason: ${denied.reason}, message: ${denied.message}`);
    if (failed) throw new Error(`certificate signing request ${name} failed, reason: ${failed.reason}, message: ${failed.message}`);
    if (csr.status?.certificate) return { name, certPEM: Buffer.from(csr.status.certificate, 'base64').toString('utf8') };
    if (Date.now() > deadline) throw new Error(`timed out waiting for the certificate signing request ${name} to be approved and signed`);
    if (signal?.aborted) throw new Error('stopped');
    await sleep(1000, signal).catch(() => {
      throw new Error('stopped');
    });
  }
}

/** the pair written once under a dated name in `dir`, and `<prefix>-current.pem` linked to it; returns the link */
export function writeCurrentPair(dir: string, prefix: string, certPEM: string, keyPEM: string): string {
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  const pemFile = join(dir, `${prefix}-${stamp}.pem`);
  writeFileSync(pemFile, certPEM.trimEnd() + '\n' + keyPEM, { mode: 0o600 });
  const current = join(dir, `${prefix}-current.pem`);
  const tmp = `${current}.tmp`;
  try {
    unlinkSync(tmp);
  } catch {
    /* none */
  }
  symlinkSync(pemFile, tmp);
  renameSync(tmp, current);
  return current;
}

/** runs the bootstrap unless the kubeconfig is usable; resolves once the kubeconfig is written */
export async function bootstrapClientCertificate(o: BootstrapOptions): Promise<void> {
  if (kubeconfigUsable(o.kubeconfigPath)) {
    o.log.info('Kubeconfig exists and is valid, skipping bootstrap', { path: o.kubeconfigPath });
    return;
  }
  o.log.info('Using bootstrap kubeconfig to generate TLS client cert, key and kubeconfig file', { kubeconfig: o.kubeconfigPath });
  mkdirSync(o.certDir, { recursive: true });
  const client = new RESTClient({ ...o.bootstrapRest, userAgent: o.userAgent });
  try {
    const { keyPEM, csrPEM } = await makeNodeRequest(o.nodeName);
    const { name, certPEM } = await requestCertificate(client, csrPEM, SIGNER, ['digital signature', 'client auth'], Date.now() + (o.timeoutMs ?? 15 * 60_000), o.log, 'client');
    // the pair, written once under a dated name, and the link the kubeconfig names
    const current = writeCurrentPair(o.certDir, 'kubelet-client', certPEM, keyPEM);
    const kc = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'default-cluster', cluster: { server: o.server, ...(o.caPEM ? { 'certificate-authority-data': Buffer.from(o.caPEM).toString('base64') } : {}), ...(o.insecureSkipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}) } }],
      contexts: [{ name: 'default-context', context: { cluster: 'default-cluster', namespace: 'default', user: 'default-auth' } }],
      'current-context': 'default-context',
      users: [{ name: 'default-auth', user: { 'client-certificate': current, 'client-key': current } }],
      preferences: {},
    };
    mkdirSync(dirname(o.kubeconfigPath), { recursive: true });
    writeFileSync(o.kubeconfigPath, YAML.stringify(kc), { mode: 0o600 });
    o.log.info('Certificate issued; wrote the kubeconfig', { csr: name, kubeconfig: o.kubeconfigPath, certificate: current });
  } finally {
    client.close();
  }
}
