// The API server's side of its connections to kubelets (pods/log: apiserver/connect.ts):
// kube-apiserver's --kubelet-* flags, loaded into a KubeletClientConfig.
//
// `keelson server`, given neither --kubelet-client-certificate nor --kubelet-client-key, presents a
// client certificate it issues itself from the cluster CA, kept in <cert-dir> as kubeadm names it
// (apiserver-kubelet-client.crt and .key; reissued when it is not the CA's, expires within 30 days,
// or names another user): CN kube-apiserver-kubelet-client, as kubeadm's, and O system:masters, as
// kubeadm gave it up to Kubernetes 1.28. (kubeadm 1.29 and later give O kubeadm:cluster-admins and
// create ClusterRoleBindings for that group and for the user; keelson server creates no such
// bindings, and a kubelet authorizing with --authorization-mode=Webhook asks the API server about
// this user, which RBAC allows through system:masters' cluster-admin binding.) A kubelet started with
// --client-ca-file=<cert-dir>/ca.crt thus knows the API server. `keelson apiserver` presents no
// certificate unless given one, as kube-apiserver.
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FlagSet } from './flags.js';
import { issueClientCert, type CertKey } from '../apiserver/pki.js';
import { checkKeyPair } from '../apiserver/tls.js';
import type { KubeletClientConfig } from '../apiserver/connect.js';
import type { Logger } from '../client/log.js';

export interface KubeletClientFlags {
  clientCertificate: string;
  clientKey: string;
  certificateAuthority: string;
  preferredAddressTypes: string[];
  /** ms */
  timeout: number;
}

export const KUBELET_CLIENT_CN = 'kube-apiserver-kubelet-client';
export const KUBELET_CLIENT_ORG = 'system:masters';

export function declareKubeletClientFlags(fs: FlagSet, o: KubeletClientFlags, allInOne: boolean): void {
  fs.stringVar(o, 'certificateAuthority', 'kubelet-certificate-authority', 'Path to a cert file for the certificate authority. (Without it the kubelet\'s serving certificate is not verified, as kube-apiserver does.)');
  fs.stringVar(
    o,
    'clientCertificate',
    'kubelet-client-certificate',
    `Path to a client cert file for TLS.${allInOne ? ` (keelson server, without it and --kubelet-client-key: a certificate of the cluster CA for ${KUBELET_CLIENT_CN} (O=${KUBELET_CLIENT_ORG}), kept as <cert-dir>/apiserver-kubelet-client.crt and .key.)` : ''}`,
  );
  fs.stringVar(o, 'clientKey', 'kubelet-client-key', 'Path to a client key file for TLS.');
  fs.stringsVar(o, 'preferredAddressTypes', 'kubelet-preferred-address-types', 'List of the preferred NodeAddressTypes to use for kubelet connections.');
  fs.durationVar(o, 'timeout', 'kubelet-timeout', 'Timeout for kubelet operations. (The connection to the kubelet and its TLS handshake; a log stream lasts as long as its client reads it.)');
}

function readFlagFile(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(`${flag}: open ${path}: ${code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : (e as Error).message}`);
  }
}

/** the API server's kubelet client certificate in <cert-dir>, made or renewed from the cluster CA */
export async function ensureKubeletClientCert(certDir: string, ca: CertKey): Promise<{ cert: string; key: string; certFile: string; keyFile: string; generated: boolean }> {
  const certFile = join(certDir, 'apiserver-kubelet-client.crt');
  const keyFile = join(certDir, 'apiserver-kubelet-client.key');
  if (existsSync(certFile) && existsSync(keyFile)) {
    try {
      const cert = readFileSync(certFile, 'utf8');
      const key = readFileSync(keyFile, 'utf8');
      checkKeyPair(cert, key);
      const x = new X509Certificate(cert);
      const subject = x.subject.split('\n');
      const fresh = Date.parse(x.validTo) - Date.now() > 30 * 24 * 3600 * 1000;
      if (fresh && x.checkIssued(ca.cert) && x.verify(ca.cert.publicKey) && subject.includes(`CN=${KUBELET_CLIENT_CN}`) && subject.includes(`O=${KUBELET_CLIENT_ORG}`)) {
        return { cert, key, certFile, keyFile, generated: false };
      }
    } catch {
      /* made again below */
    }
  }
  const ck = await issueClientCert(ca, KUBELET_CLIENT_CN, [KUBELET_CLIENT_ORG]);
  mkdirSync(certDir, { recursive: true, mode: 0o755 });
  writeFileSync(keyFile, ck.keyPEM, { mode: 0o600 });
  writeFileSync(certFile, ck.certPEM, { mode: 0o644 });
  return { cert: ck.certPEM, key: ck.keyPEM, certFile, keyFile, generated: true };
}

/**
 * The kubelet client of the flags. `clusterCA` (keelson server) issues the client certificate
 * when no --kubelet-client-certificate is given. Throws start-up errors.
 */
export async function kubeletClientFromFlags(o: KubeletClientFlags, certDir: string, clusterCA: CertKey | undefined, log: Logger): Promise<KubeletClientConfig> {
  if (!o.preferredAddressTypes.length) throw new Error('--kubelet-preferred-address-types must be non-empty');
  const cfg: KubeletClientConfig = { preferredAddressTypes: [...o.preferredAddressTypes], timeoutMs: o.timeout };
  if (o.certificateAuthority) cfg.ca = readFlagFile('--kubelet-certificate-authority', o.certificateAuthority);
  if (o.clientCertificate || o.clientKey) {
    if (!o.clientCertificate || !o.clientKey) throw new Error('--kubelet-client-certificate and --kubelet-client-key must be given together');
    cfg.cert = readFlagFile('--kubelet-client-certificate', o.clientCertificate);
    cfg.key = readFlagFile('--kubelet-client-key', o.clientKey);
    try {
      checkKeyPair(cfg.cert, cfg.key);
    } catch (e) {
      throw new Error(`--kubelet-client-certificate and --kubelet-client-key: ${(e as Error).message}`);
    }
  } else if (clusterCA) {
    const made = await ensureKubeletClientCert(certDir, clusterCA);
    cfg.cert = made.cert;
    cfg.key = made.key;
    if (made.generated) log.info('Issued the client certificate the API server presents to kubelets', { path: made.certFile, user: KUBELET_CLIENT_CN, group: KUBELET_CLIENT_ORG });
  }
  return cfg;
}
