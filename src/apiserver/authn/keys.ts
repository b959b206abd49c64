// The service account key pair a cluster signs its tokens with when no
// --service-account-signing-key-file is given: `sa.key` (private, mode 0600) and `sa.pub`
// (PKIX public key) in the certificate directory, kubeadm's names. Created on first start and
// loaded afterwards, so tokens outlive restarts. ECDSA P-256 (ES256), which Kubernetes signs and
// verifies as it does RSA keys (kubeadm writes such keys with --encryption-algorithm=ECDSA-P256),
// and which takes a millisecond to generate where an RSA key takes a hundred.
import { createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePrivateKeyPEM } from './jose.js';

export interface ServiceAccountKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  keyPath: string;
  pubPath: string;
  generated: boolean;
}

function writeAtomic(path: string, data: string, mode: number): void {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, data, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/** Loads `<dir>/sa.key` (and rewrites a missing `sa.pub`), or creates both. */
export function ensureServiceAccountKey(dir: string, algorithm: 'ecdsa' | 'rsa' = 'ecdsa'): ServiceAccountKeyPair {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const keyPath = join(dir, 'sa.key');
  const pubPath = join(dir, 'sa.pub');
  if (existsSync(keyPath)) {
    const privateKey = parsePrivateKeyPEM(readFileSync(keyPath));
    const publicKey = createPublicKey(privateKey);
    if (!existsSync(pubPath)) writeAtomic(pubPath, publicKey.export({ type: 'spki', format: 'pem' }) as string, 0o644);
    return { privateKey, publicKey, keyPath, pubPath, generated: false };
  }
  const { privateKey, publicKey } =
    algorithm === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pem = algorithm === 'rsa' ? (privateKey.export({ type: 'pkcs1', format: 'pem' }) as string) : (privateKey.export({ type: 'sec1', format: 'pem' }) as string);
  writeAtomic(keyPath, pem, 0o600);
  writeAtomic(pubPath, publicKey.export({ type: 'spki', format: 'pem' }) as string, 0o644);
  return { privateKey, publicKey, keyPath, pubPath, generated: true };
}
