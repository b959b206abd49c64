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
import { RESTClient, isAlreadyExists, type RESTConfig } from '../client/rest.js';
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

/** a PEM private key and a PKCS#10 request for the node's client certificate */
async function makeRequest(nodeName: string): Promise<{ keyPEM: string; csrPEM: string }> {
  const x509 = await loadX509();
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: `O=system:nodes, CN=system:node:${nodeName}`, keys, signingAlgorithm: alg }, webcrypto as any);
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPEM = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'sec1' }).toString();
  return { keyPEM, csrPEM: csr.toString('pem') };
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
    const { keyPEM, csrPEM } = await makeRequest(o.nodeName);
    const body = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { generateName: 'csr-' },
      spec: { request: Buffer.from(csrPEM).toString('base64'), signerName: SIGNER, usages: ['digital signature', 'client auth'] },
    };
    let made: any;
    try {
      made = await client.json({ method: 'POST', path: '/apis/certificates.k8s.io/v1/certificatesigningrequests', body });
    } catch (e) {
      if (isAlreadyExists(e)) throw new Error(`cannot create certificate signing request: ${(e as Error).message}`);
      throw new Error(`cannot create certificate signing request: ${(e as Error).message}`);
    }
    const name = made.metadata.name;
    o.log.info('Waiting for client certificate to be issued', { csr: name, signerName: SIGNER });
    const deadline = Date.now() + (o.timeoutMs ?? 15 * 60_000);
    let certPEM = '';
    for (;;) {
      const csr = await client.json({ method: 'GET', path: `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}` });
      const conds: any[] = csr.status?.conditions ?? [];
      const denied = conds.find((c) => c.type === 'Denied' && c.status === 'True');
      const failed = conds.find((c) => c.type === 'Failed' && c.status === 'True');
      if (denied) throw new Error(`certificate signing request ${name} is denied, reason: ${denied.reason}, message: ${denied.message}`);
      if (failed) throw new Error(`certificate signing request ${name} failed, reason: ${failed.reason}, message: ${failed.message}`);
      if (csr.status?.certificate) {
        certPEM = Buffer.from(csr.status.certificate, 'base64').toString('utf8');
        break;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the certificate signing request ${name} to be approved and signed`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    // the pair, written once under a dated name, and the link the kubeconfig names
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
    const pemFile = join(o.certDir, `kubelet-client-${stamp}.pem`);
    writeFileSync(pemFile, certPEM.trimEnd() + '\n' + keyPEM, { mode: 0o600 });
    const current = join(o.certDir, 'kubelet-client-current.pem');
    const tmp = `${current}.tmp`;
    try {
      unlinkSync(tmp);
    } catch {
      /* none */
    }
    symlinkSync(pemFile, tmp);
    renameSync(tmp, current);
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
