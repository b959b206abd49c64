// The cluster's certificates: a CA, the API server's serving certificate and the admin client
// certificate, created on first start and loaded (not regenerated) on restart.
//
// Keys are ECDSA P-256 (as k3s uses): Go's crypto/tls, kubectl, client-go and Node accept them,
// and they take about a millisecond to generate. Key files are PEM "EC PRIVATE KEY" (SEC1), the
// form kubeadm and k3s write, mode 0600; certificates are PEM, mode 0644. Certificates are
// DER-encoded here and signed with node:crypto (see "DER" below for why not @peculiar/x509);
// loading and checking use Node's own X509Certificate. loadX509() still offers @peculiar/x509
// to code that needs to parse richer structures (CSRs, for the certificate signer).
//
// Layout of `dir` (kubeadm's names):
//   ca.crt, ca.key                 cluster CA, 10 years
//   apiserver.crt, apiserver.key   serving certificate, 1 year, renewed when a requested SAN is
//                                  missing or fewer than 30 days remain
//   admin.crt, admin.key           CN=kubernetes-admin, O=system:masters, client auth, 1 year

import { loadX509 } from '../codec/x509.js';
export { loadX509 };
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync, chmodSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { join } from 'node:path';
import { isIP } from 'node:net';


const DAY_MS = 24 * 60 * 60 * 1000;
/** Certificates start this long before "now", tolerating clock skew between machines (kubeadm's backdate). */
const BACKDATE_MS = 5 * 60 * 1000;
export const CA_VALIDITY_DAYS = 3650;
export const LEAF_VALIDITY_DAYS = 365;
/** A leaf certificate with less validity left than this is renewed at start. */
export const RENEW_BEFORE_DAYS = 30;

const OID_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

export const ADMIN_CN = 'kubernetes-admin';
export const ADMIN_ORG = 'system:masters';


// ── types ──────────────────────────────────────────────────────────────────

/** A certificate with its private key, in PEM and parsed form. */
export interface CertKey {
  certPEM: string;
  keyPEM: string;
  cert: X509Certificate;
  key: KeyObject;
}

export interface SubjectAltNames {
  dns: string[];
  ips: string[];
}

export interface EnsurePKIOptions {
  /** Extra DNS names for the serving certificate (the host name and Kubernetes' names are always in). */
  hostnames?: string[];
  /** Extra IP addresses (127.0.0.1 and ::1 are always in). Pass the `kubernetes` Service IP here. */
  ips?: string[];
  /** The cluster domain for `kubernetes.default.svc.<domain>`; cluster.local by default. */
  clusterDomain?: string;
  /** Common name of a new CA; `kubernetes` by default (as kubeadm). */
  caCommonName?: string;
}

export interface PKI {
  dir: string;
  ca: CertKey;
  serving: CertKey;
  admin: CertKey;
  /** The SANs requested for the serving certificate. */
  sans: SubjectAltNames;
  paths: {
    caCert: string; caKey: string;
    servingCert: string; servingKey: string;
    adminCert: string; adminKey: string;
  };
  /** Which files were (re)written by this call. */
  generated: { ca: boolean; serving: boolean; admin: boolean };
}

export class PKIError extends Error {
  override name = 'PKIError';
}

// ── keys ───────────────────────────────────────────────────────────────────

/** A new ECDSA P-256 private key. */
export function generateKey(): KeyObject {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
}

/** PEM of a private key in the form kubeadm writes: SEC1 for EC, PKCS#1 for RSA, else PKCS#8. */
export function keyToPEM(key: KeyObject): string {
  switch (key.asymmetricKeyType) {
    case 'ec': return key.export({ type: 'sec1', format: 'pem' }) as string;
    case 'rsa': return key.export({ type: 'pkcs1', format: 'pem' }) as string;
    default: return key.export({ type: 'pkcs8', format: 'pem' }) as string;
  }
}

// ── DER ────────────────────────────────────────────────────────────────────
// Certificates are encoded here directly: importing @peculiar/x509 and its ASN.1 stack costs
// 200-400 ms and each certificate ~40 ms, against ~1 ms for this encoder plus Node's signer,
// which keeps a first start well under the 300 ms budget. The tests check the output with
// @peculiar/x509, openssl and real TLS handshakes.

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const seq = (...c: Buffer[]) => tlv(0x30, ...c);
const octets = (b: Buffer) => tlv(0x04, b);
const bitString = (b: Buffer, unused = 0) => tlv(0x03, Buffer.from([unused]), b);
const derBool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));

function derInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0 && (bytes[i + 1]! & 0x80) === 0) i++;
  let b = bytes.subarray(i);
  if (b[0]! & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(0x02, b);
}

function derOID(oid: string): Buffer {
  const parts = oid.split('.').map(Number);
  const out: number[] = [parts[0]! * 40 + parts[1]!];
  for (const p of parts.slice(2)) {
    const stack: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) stack.unshift((v & 0x7f) | 0x80);
    out.push(...stack);
  }
  return tlv(0x06, Buffer.from(out));
}

function derString(s: string): Buffer {
  // Go marshals a name as PrintableString when it can, else as UTF8String.
  return /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(s) ? tlv(0x13, Buffer.from(s, 'latin1')) : tlv(0x0c, Buffer.from(s, 'utf8'));
}

function derTime(d: Date): Buffer {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const y = d.getUTCFullYear();
  const rest = `${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  if (y >= 1950 && y < 2050) return tlv(0x17, Buffer.from(p(y % 100) + rest, 'latin1'));
  return tlv(0x18, Buffer.from(p(y, 4) + rest, 'latin1'));
}

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  keyUsage: '2.5.29.15',
  basicConstraints: '2.5.29.19',
  extKeyUsage: '2.5.29.37',
  subjectKeyId: '2.5.29.14',
  authorityKeyId: '2.5.29.35',
  subjectAltName: '2.5.29.17',
  ecdsaSHA256: '1.2.840.10045.4.3.2',
  ecdsaSHA384: '1.2.840.10045.4.3.3',
  ecdsaSHA512: '1.2.840.10045.4.3.4',
  rsaSHA256: '1.2.840.113549.1.1.11',
};

/** A Name: one RDN with every O (as Go writes it), then the CN. */
function derName(cn: string, orgs: string[] = []): Buffer {
  const rdns: Buffer[] = [];
  if (orgs.length) {
    const atvs = orgs.map((o) => seq(derOID(OID.organization), derString(o))).sort(Buffer.compare);
    rdns.push(tlv(0x31, ...atvs));
  }
  rdns.push(tlv(0x31, seq(derOID(OID.commonName), derString(cn))));
  return seq(...rdns);
}

/** Reads one TLV at `off`: [tag, content start, end]. */
function derRead(buf: Buffer, off: number): [number, number, number] {
  const tag = buf[off]!;
  let len = buf[off + 1]!;
  let start = off + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i]!;
    start += n;
  }
  return [tag, start, start + len];
}

/** The children of a constructed TLV as [tag, start, end, tlvStart]. */
function derChildren(buf: Buffer, start: number, end: number): [number, number, number, number][] {
  const out: [number, number, number, number][] = [];
  for (let off = start; off < end;) {
    const [tag, s, e] = derRead(buf, off);
    out.push([tag, s, e, off]);
    off = e;
  }
  return out;
}

/** The raw subject Name and the subject key identifier of a certificate. */
function certSubjectAndKeyId(der: Buffer): { subject: Buffer; keyId?: Buffer } {
  const [, cs, ce] = derRead(der, 0);
  const [, ts, te] = derRead(der, derChildren(der, cs, ce)[0]![3]);
  const tbs = derChildren(der, ts, te);
  const fields = tbs[0]![0] === 0xa0 ? tbs.slice(1) : tbs; // skip the version
  const subj = fields[4]!;
  const subject = der.subarray(subj[3], subj[2]);
  let keyId: Buffer | undefined;
  const ext = tbs.find((c) => c[0] === 0xa3);
  if (ext) {
    const [, ls, le] = derRead(der, ext[1]);
    for (const [, es, ee] of derChildren(der, ls, le)) {
      const parts = derChildren(der, es, ee);
      const oid = der.subarray(parts[0]![3], parts[0]![2]);
      if (oid.equals(derOID(OID.subjectKeyId))) {
        const value = parts[parts.length - 1]!; // OCTET STRING wrapping an OCTET STRING
        const [, ks, ke] = derRead(der, value[1]);
        keyId = Buffer.from(der.subarray(ks, ke));
      }
    }
  }
  return { subject: Buffer.from(subject), keyId };
}

/** RFC 5280 method 1 key identifier: SHA-1 of the subjectPublicKey bits (what Go uses). */
function keyIdentifier(spkiDER: Buffer): Buffer {
  const [, s, e] = derRead(spkiDER, 0);
  const parts = derChildren(spkiDER, s, e);
  const bits = parts[1]!;
  return createHash('sha1').update(spkiDER.subarray(bits[1] + 1, bits[2])).digest();
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  let text = ip;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, v4.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  const [h, t] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const head = h ? h.split(':').map((x) => parseInt(x, 16)) : [];
  const rest = t ? t.split(':').map((x) => parseInt(x, 16)) : [];
  const fill = t !== undefined ? new Array<number>(8 - head.length - rest.length).fill(0) : [];
  const out = Buffer.alloc(16);
  [...head, ...fill, ...rest].forEach((g, i) => out.writeUInt16BE(g & 0xffff, i * 2));
  return out;
}

function keyUsageBits(bits: number[]): Buffer {
  let v = 0;
  for (const b of bits) v |= 0x80 >> b;
  let unused = 0;
  while (unused < 8 && !(v & (1 << unused))) unused++;
  return bitString(Buffer.from([v]), unused === 8 ? 0 : unused);
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(derOID(oid), derBool(true), octets(value)) : seq(derOID(oid), octets(value));
}

function signatureAlgorithm(key: KeyObject): { der: Buffer; hash: string } {
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'secp384r1') return { der: seq(derOID(OID.ecdsaSHA384)), hash: 'sha384' };
    if (curve === 'secp521r1') return { der: seq(derOID(OID.ecdsaSHA512)), hash: 'sha512' };
    return { der: seq(derOID(OID.ecdsaSHA256)), hash: 'sha256' };
  }
  if (key.asymmetricKeyType === 'rsa') return { der: seq(derOID(OID.rsaSHA256), tlv(0x05)), hash: 'sha256' };
  throw new PKIError(`unsupported key type ${key.asymmetricKeyType}: use an ECDSA or RSA key`);
}

// ── issuing ────────────────────────────────────────────────────────────────

interface IssueSpec {
  commonName: string;
  organizations?: string[];
  days: number;
  isCA?: boolean;
  serverAuth?: boolean;
  clientAuth?: boolean;
  sans?: SubjectAltNames;
  key?: KeyObject;
}

function makeCertKey(certPEM: string, keyPEM: string): CertKey {
  return { certPEM, keyPEM, cert: new X509Certificate(certPEM), key: createPrivateKey(keyPEM) };
}

function issueSync(spec: IssueSpec, ca: CertKey | undefined): CertKey {
  const key = spec.key ?? generateKey();
  const signer = ca ? ca.key : key;
  const alg = signatureAlgorithm(signer);
  const spkiDER = createPublicKey(key).export({ type: 'spki', format: 'der' });
  const now = Date.now();
  const notBefore = new Date(now - BACKDATE_MS);
  let notAfter = new Date(now + spec.days * DAY_MS);
  if (ca) {
    const caEnd = new Date(Date.parse(ca.cert.validTo));
    if (notAfter > caEnd) notAfter = caEnd; // never outlive the issuer
  }
  const subject = derName(spec.commonName, spec.organizations);
  let issuer = subject;
  let authorityKeyId: Buffer | undefined;
  if (ca) {
    const info = certSubjectAndKeyId(ca.cert.raw);
    issuer = info.subject; // byte-identical to the CA's subject: Go matches raw names
    authorityKeyId = info.keyId ?? keyIdentifier(createPublicKey(ca.key).export({ type: 'spki', format: 'der' }));
  }
  const exts: Buffer[] = [
    // digitalSignature(0), keyEncipherment(2), keyCertSign(5)
    extension(OID.keyUsage, true, keyUsageBits(spec.isCA ? [0, 2, 5] : [0, 2])),
  ];
  const eku: Buffer[] = [];
  if (spec.serverAuth) eku.push(derOID(OID_SERVER_AUTH));
  if (spec.clientAuth) eku.push(derOID(OID_CLIENT_AUTH));
  if (eku.length) exts.push(extension(OID.extKeyUsage, false, seq(...eku)));
  exts.push(extension(OID.basicConstraints, true, spec.isCA ? seq(derBool(true)) : seq()));
  exts.push(extension(OID.subjectKeyId, false, octets(keyIdentifier(spkiDER))));
  if (authorityKeyId) exts.push(extension(OID.authorityKeyId, false, seq(tlv(0x80, authorityKeyId))));
  if (spec.sans && (spec.sans.dns.length || spec.sans.ips.length)) {
    const names = [
      ...spec.sans.dns.map((d) => tlv(0x82, Buffer.from(d, 'latin1'))),
      ...spec.sans.ips.map((ip) => tlv(0x87, ipBytes(ip))),
    ];
    exts.push(extension(OID.subjectAltName, false, seq(...names)));
  }
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive, no leading zero byte
  const tbs = seq(
    tlv(0xa0, derInteger(Buffer.from([2]))), // v3
    derInteger(serial),
    alg.der,
    issuer,
    seq(derTime(notBefore), derTime(notAfter)),
    subject,
    spkiDER,
    tlv(0xa3, seq(...exts)),
  );
  const sig = sign(alg.hash, tbs, { key: signer, dsaEncoding: 'der' });
  const der = seq(tbs, alg.der, bitString(sig));
  const certPEM = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
  return { certPEM, keyPEM: keyToPEM(key), cert: new X509Certificate(der), key };
}

async function issue(spec: IssueSpec, ca: CertKey | undefined): Promise<CertKey> {
  return issueSync(spec, ca);
}

/** A new self-signed CA (`CN=kubernetes` by default), valid `days`. */
export function createCA(commonName = 'kubernetes', days = CA_VALIDITY_DAYS, key?: KeyObject): Promise<CertKey> {
  return issue({ commonName, days, isCA: true, key }, undefined);
}

/** A CA from PEM files' contents; throws if the key does not belong to the certificate or it is not a CA. */
export function loadCA(certPEM: string, keyPEM: string): CertKey {
  const ck = makeCertKey(certPEM, keyPEM);
  if (!ck.cert.ca) throw new PKIError(`certificate ${ck.cert.subject.replace(/\n/g, ', ')} is not a CA`);
  if (!ck.cert.checkPrivateKey(ck.key)) throw new PKIError('the CA key does not match the CA certificate');
  return ck;
}

/** A client certificate (client auth usage), e.g. `issueClientCert(ca, 'system:kube-controller-manager')`. */
export function issueClientCert(ca: CertKey, commonName: string, organizations: string[] = [], days = LEAF_VALIDITY_DAYS, key?: KeyObject): Promise<CertKey> {
  return issue({ commonName, organizations, days, clientAuth: true, key }, ca);
}

/**
 * A serving certificate for `sans` (server auth usage; `clientAuth` adds client auth, as
 * kubelet serving certificates sometimes need).
 */
export function issueServingCert(ca: CertKey, commonName: string, sans: SubjectAltNames, days = LEAF_VALIDITY_DAYS, opts: { organizations?: string[]; clientAuth?: boolean; key?: KeyObject } = {}): Promise<CertKey> {
  return issue({ commonName, organizations: opts.organizations, days, serverAuth: true, clientAuth: opts.clientAuth, sans, key: opts.key }, ca);
}

// ── checking ───────────────────────────────────────────────────────────────

/** The requested SANs the certificate does not cover (exact DNS names, any IP notation). */
export function missingSANs(cert: X509Certificate, sans: SubjectAltNames): string[] {
  const missing: string[] = [];
  for (const d of sans.dns) {
    if (cert.checkHost(d, { subject: 'never', wildcards: false }) === undefined) missing.push(d);
  }
  for (const ip of sans.ips) {
    if (cert.checkIP(ip) === undefined) missing.push(ip);
  }
  return missing;
}

/** Milliseconds of validity left. */
export function remainingValidity(cert: X509Certificate, now = Date.now()): number {
  return Date.parse(cert.validTo) - now;
}

function hasEKU(cert: X509Certificate, oid: string): boolean {
  return (cert.keyUsage ?? []).includes(oid);
}

function subjectOf(cert: X509Certificate): { cn: string[]; o: string[] } {
  const cn: string[] = [];
  const o: string[] = [];
  for (const line of cert.subject.split('\n')) {
    const i = line.indexOf('=');
    const k = line.slice(0, i);
    const v = line.slice(i + 1);
    if (k === 'CN') cn.push(v);
    if (k === 'O') o.push(v);
  }
  return { cn, o };
}

/** Why a leaf certificate should be reissued, or undefined if it is fine. */
function leafProblem(ck: CertKey, ca: CertKey, want: { cn?: string; orgs?: string[]; serverAuth?: boolean; clientAuth?: boolean; sans?: SubjectAltNames }): string | undefined {
  if (!ck.cert.checkPrivateKey(ck.key)) return 'key does not match certificate';
  if (!ck.cert.verify(ca.cert.publicKey) || !ck.cert.checkIssued(ca.cert)) return 'not signed by the cluster CA';
  if (remainingValidity(ck.cert) < RENEW_BEFORE_DAYS * DAY_MS) return `expires ${ck.cert.validTo}`;
  if (want.serverAuth && !hasEKU(ck.cert, OID_SERVER_AUTH)) return 'no server auth usage';
  if (want.clientAuth && !hasEKU(ck.cert, OID_CLIENT_AUTH)) return 'no client auth usage';
  const subj = subjectOf(ck.cert);
  if (want.cn !== undefined && !subj.cn.includes(want.cn)) return `CN is not ${want.cn}`;
  if (want.orgs && want.orgs.some((o) => !subj.o.includes(o))) return `O is not ${want.orgs.join(',')}`;
  if (want.sans) {
    const missing = missingSANs(ck.cert, want.sans);
    if (missing.length) return `SANs ${missing.join(', ')} not covered`;
  }
  return undefined;
}

// ── files ──────────────────────────────────────────────────────────────────

function writeAtomic(path: string, data: string, mode: number): void {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, data, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

function writePair(certPath: string, keyPath: string, ck: CertKey): void {
  writeAtomic(keyPath, ck.keyPEM, 0o600);
  writeAtomic(certPath, ck.certPEM, 0o644);
}

function readPair(certPath: string, keyPath: string): CertKey | undefined {
  if (!existsSync(certPath) || !existsSync(keyPath)) return undefined;
  try {
    return makeCertKey(readFileSync(certPath, 'utf8'), readFileSync(keyPath, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The serving certificate's SANs: loopback, the host name, Kubernetes' service names, and extras. */
export function servingSANs(opts: EnsurePKIOptions = {}): SubjectAltNames {
  const domain = opts.clusterDomain ?? 'cluster.local';
  const dns = ['localhost', osHostname().toLowerCase(), 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${domain}`];
  const ips = ['127.0.0.1', '::1'];
  for (const h of opts.hostnames ?? []) {
    if (!h) continue;
    if (isIP(h)) ips.push(h);
    else dns.push(h.toLowerCase());
  }
  for (const ip of opts.ips ?? []) {
    if (!ip) continue;
    if (!isIP(ip)) throw new PKIError(`${JSON.stringify(ip)} is not an IP address`);
    ips.push(ip);
  }
  const uniqIPs: string[] = [];
  const seen = new Set<string>();
  for (const ip of ips) {
    const k = ipBytes(ip).toString('hex');
    if (!seen.has(k)) { seen.add(k); uniqIPs.push(ip); }
  }
  return { dns: [...new Set(dns.filter((d) => d))], ips: uniqIPs };
}

/**
 * Creates (first start) or loads (restart) the cluster's CA, API serving certificate and admin
 * client certificate in `dir`. Leaf certificates are reissued from the same CA when they do not
 * cover the requested SANs, expire within 30 days, or do not match their key or the CA. A
 * present but unusable CA is an error, never silently replaced: everything trusts it.
 */
export async function ensurePKI(dir: string, opts: EnsurePKIOptions = {}): Promise<PKI> {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const paths = {
    caCert: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'), servingKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'), adminKey: join(dir, 'admin.key'),
  };
  const generated = { ca: false, serving: false, admin: false };
  const sans = servingSANs(opts);

  let ca: CertKey;
  const haveCert = existsSync(paths.caCert);
  const haveKey = existsSync(paths.caKey);
  if (haveCert || haveKey) {
    if (!haveCert || !haveKey) throw new PKIError(`${haveCert ? paths.caKey : paths.caCert} is missing while ${haveCert ? paths.caCert : paths.caKey} exists; restore it or remove both to create a new CA`);
    try {
      ca = loadCA(readFileSync(paths.caCert, 'utf8'), readFileSync(paths.caKey, 'utf8'));
    } catch (e) {
      throw new PKIError(`cannot use the CA in ${dir}: ${(e as Error).message}`);
    }
    if (remainingValidity(ca.cert) <= 0) throw new PKIError(`the CA certificate ${paths.caCert} expired on ${ca.cert.validTo}`);
  } else {
    ca = await createCA(opts.caCommonName ?? 'kubernetes');
    writePair(paths.caCert, paths.caKey, ca);
    generated.ca = true;
  }

  const servingWant = { serverAuth: true, sans };
  let serving = generated.ca ? undefined : readPair(paths.servingCert, paths.servingKey);
  let admin = generated.ca ? undefined : readPair(paths.adminCert, paths.adminKey);
  const adminWant = { cn: ADMIN_CN, orgs: [ADMIN_ORG], clientAuth: true };
  const needServing = !serving || leafProblem(serving, ca, servingWant) !== undefined;
  const needAdmin = !admin || leafProblem(admin, ca, adminWant) !== undefined;

  const [s, a] = await Promise.all([
    needServing ? issueServingCert(ca, 'kube-apiserver', sans) : Promise.resolve(serving!),
    needAdmin ? issueClientCert(ca, ADMIN_CN, [ADMIN_ORG]) : Promise.resolve(admin!),
  ]);
  serving = s;
  admin = a;
  if (needServing) { writePair(paths.servingCert, paths.servingKey, serving); generated.serving = true; }
  if (needAdmin) { writePair(paths.adminCert, paths.adminKey, admin); generated.admin = true; }

  return { dir, ca, serving, admin, sans, paths, generated };
}

/**
 * TLS options for the API server's listener: the serving pair, the CA for client certificates,
 * and client certificates requested but not required (tokens and anonymous requests still work).
 */
export function servingTLSOptions(pki: PKI): { cert: string; key: string; ca: string; requestCert: boolean; rejectUnauthorized: boolean } {
  return { cert: pki.serving.certPEM, key: pki.serving.keyPEM, ca: pki.ca.certPEM, requestCert: true, rejectUnauthorized: false };
}

// ── the front proxy ────────────────────────────────────────────────────────
// kubeadm's front-proxy-ca.crt/key (a CA of its own, so that a certificate of the cluster CA
// cannot pass for the aggregator) and front-proxy-client.crt/key (CN front-proxy-client, client
// auth): the certificate the API server presents to extension API servers, which trust it
// through requestheader-client-ca-file of kube-system/extension-apiserver-authentication.

export const FRONT_PROXY_CLIENT_CN = 'front-proxy-client';

export interface FrontProxyPKI {
  ca: CertKey;
  client: CertKey;
  paths: { caCert: string; caKey: string; clientCert: string; clientKey: string };
}

/** Creates (first start) or loads the front-proxy CA and client certificate in `dir`, reissuing the client certificate as ensurePKI does. */
export async function ensureFrontProxyPKI(dir: string): Promise<FrontProxyPKI> {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const paths = {
    caCert: join(dir, 'front-proxy-ca.crt'), caKey: join(dir, 'front-proxy-ca.key'),
    clientCert: join(dir, 'front-proxy-client.crt'), clientKey: join(dir, 'front-proxy-client.key'),
  };
  let ca = readPair(paths.caCert, paths.caKey);
  let newCA = false;
  if (ca) {
    if (!ca.cert.ca || !ca.cert.checkPrivateKey(ca.key)) throw new PKIError(`cannot use the front-proxy CA in ${dir}: not a CA, or its key does not match`);
    if (remainingValidity(ca.cert) <= 0) throw new PKIError(`the front-proxy CA certificate ${paths.caCert} expired on ${ca.cert.validTo}`);
  } else {
    if (existsSync(paths.caCert) || existsSync(paths.caKey)) throw new PKIError(`the front-proxy CA in ${dir} cannot be read; restore it or remove both files to create a new one`);
    ca = await createCA('front-proxy-ca');
    writePair(paths.caCert, paths.caKey, ca);
    newCA = true;
  }
  let client = newCA ? undefined : readPair(paths.clientCert, paths.clientKey);
  if (!client || leafProblem(client, ca, { cn: FRONT_PROXY_CLIENT_CN, clientAuth: true }) !== undefined) {
    client = await issueClientCert(ca, FRONT_PROXY_CLIENT_CN);
    writePair(paths.clientCert, paths.clientKey, client);
  }
  return { ca, client, paths };
}
