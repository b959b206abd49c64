// Test helpers for authentication: certificates of any shape (made with @peculiar/x509 on
// WebCrypto ECDSA keys), fake TLS sockets that present a chain the way Node's
// getPeerCertificate(true) does, and service account keys and objects.
import { webcrypto, X509Certificate, createPrivateKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { loadX509 } from '../../src/apiserver/pki.js';

type CryptoKeyPair = webcrypto.CryptoKeyPair;

export interface TestCert {
  der: Buffer;
  pem: string;
  cert: X509Certificate;
  keys: CryptoKeyPair;
  keyPEM: string;
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIG = { name: 'ECDSA', hash: 'SHA-256' } as const;
let serial = 1;

export interface CertSpec {
  /** a distinguished name string (`CN=a, O=b`) or a JSON name (`[{ '2.5.4.3': ['a'] }]`) */
  subject: string | Record<string, string[]>[];
  issuer?: TestCert;
  isCA?: boolean;
  /** extended key usages (OIDs); undefined: client auth; []: no EKU extension */
  eku?: string[];
  notBefore?: Date;
  notAfter?: Date;
}

export const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
export const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

export async function makeCert(spec: CertSpec): Promise<TestCert> {
  const x509 = await loadX509();
  x509.cryptoProvider.set(webcrypto as any);
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const exts: any[] = [];
  exts.push(new x509.BasicConstraintsExtension(!!spec.isCA, undefined, true));
  exts.push(new x509.KeyUsagesExtension(spec.isCA ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.cRLSign : x509.KeyUsageFlags.digitalSignature, true));
  const eku = spec.eku ?? (spec.isCA ? [] : [CLIENT_AUTH]);
  if (eku.length) exts.push(new x509.ExtendedKeyUsageExtension(eku, false));
  exts.push(await x509.SubjectKeyIdentifierExtension.create(keys.publicKey));
  if (spec.issuer) exts.push(await x509.AuthorityKeyIdentifierExtension.create(spec.issuer.keys.publicKey));
  const name = spec.subject as any;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: (serial++).toString(16).padStart(2, '0'),
    subject: name,
    issuer: spec.issuer ? await x509Name(spec.issuer) : name,
    notBefore: spec.notBefore ?? new Date(now - 3600_000),
    notAfter: spec.notAfter ?? new Date(now + 86400_000),
    signingAlgorithm: SIG,
    publicKey: keys.publicKey,
    signingKey: spec.issuer ? spec.issuer.keys.privateKey : keys.privateKey,
    extensions: exts,
  });
  const der = Buffer.from(cert.rawData);
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPEM = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ type: 'sec1', format: 'pem' }) as string;
  return { der, pem: cert.toString('pem') + '\n', cert: new X509Certificate(der), keys, keyPEM };
}

/** the issuer's subject exactly as encoded (peculiar re-encodes string names; take the parsed certificate's) */
async function x509Name(c: TestCert): Promise<any> {
  const x509 = await loadX509();
  return new x509.X509Certificate(c.der).subjectName;
}

/** A stand-in for a TLS socket presenting `chain` (leaf first), shaped as getPeerCertificate(true) answers. */
export function fakeSocket(chain: Buffer[]): { getPeerCertificate(detailed?: boolean): any } {
  const objs = chain.map((raw) => ({ raw }) as any);
  for (let i = 0; i < objs.length; i++) objs[i].issuerCertificate = objs[i + 1] ?? objs[i];
  return { getPeerCertificate: () => objs[0] ?? {} };
}

export function noCertSocket(): { getPeerCertificate(): any } {
  return { getPeerCertificate: () => ({}) };
}

export function rsaKey(): KeyObject {
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
}

export function ecKey(curve = 'prime256v1'): KeyObject {
  return generateKeyPairSync('ec', { namedCurve: curve }).privateKey;
}

/** A tiny object store for the token checks. */
export class Objects {
  readonly map = new Map<string, any>();
  reader = (resource: string, namespace: string, name: string) => this.map.get(`${resource}/${namespace}/${name}`);
  put(resource: string, namespace: string, obj: any): any {
    obj.metadata ??= {};
    obj.metadata.uid ??= randomUUID();
    obj.metadata.namespace = namespace || undefined;
    this.map.set(`${resource}/${namespace}/${obj.metadata.name}`, obj);
    return obj;
  }
  sa(namespace: string, name: string): any {
    return this.put('serviceaccounts', namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
  }
  delete(resource: string, namespace: string, name: string): void {
    this.map.delete(`${resource}/${namespace}/${name}`);
  }
}

export function decodeJWT(token: string): { header: any; payload: any; rawPayload: string } {
  const [h, p] = token.split('.');
  const rawPayload = Buffer.from(p!, 'base64url').toString('utf8');
  return { header: JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')), payload: JSON.parse(rawPayload), rawPayload };
}

/** A compact JWS over arbitrary header and payload JSON, signed with node:crypto (for forged and malformed tokens). */
export function jws(header: object | string, payload: object | string, sign: (input: Buffer) => Buffer): string {
  const h = Buffer.from(typeof header === 'string' ? header : JSON.stringify(header)).toString('base64url');
  const p = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)).toString('base64url');
  const input = `${h}.${p}`;
  return `${input}.${sign(Buffer.from(input)).toString('base64url')}`;
}
