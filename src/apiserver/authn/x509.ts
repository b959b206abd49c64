// X.509 client certificates (kube-apiserver's --client-ca-file): a request whose TLS client
// certificate chains to one of the trusted authorities is the user named by the certificate's
// CommonName, in the groups of its Organization values, with the certificate's UID attribute as
// the user's UID (AllowParsingUserUIDFromCertAuth, on by default in 1.33) and its SHA-256
// fingerprint as the credential id.
//
// The TLS listener asks for a client certificate without requiring one (and accepts any
// authority, since tokens and front-proxy certificates arrive on the same port); each
// authenticator verifies the peer chain against its own pool of authorities here, as Go's
// x509.Certificate.Verify does for kube-apiserver: every certificate in the chain within its
// validity, intermediates that are CAs, and the client-auth extended key usage (or none, or any)
// along the chain. The result is cached per TLS connection until the chain's first expiry.
import { rfc3339 } from '../../machinery/time.js';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../authz.js';
import { parseCertificate, serialDecimal, type NameAttribute, type ParsedCertificate } from './der.js';
import { AuthenticationError } from './errors.js';
import { pemBlocks } from './pem.js';
import type { AuthResult, Authenticator } from './types.js';

export const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const OID_ANY_EKU = '2.5.29.37.0';
const OID_CN = '2.5.4.3';
const OID_O = '2.5.4.10';
/** the LDAP UID attribute (0.9.2342.19200300.100.1.1) Kubernetes reads a user's UID from */
export const OID_UID = '0.9.2342.19200300.100.1.1';
export const CREDENTIAL_ID_KEY = 'authentication.kubernetes.io/credential-id';

/** Extension OIDs Go's x509 package handles (a critical extension outside this list fails verification). */
const HANDLED_CRITICAL = new Set(['2.5.29.15', '2.5.29.19', '2.5.29.17', '2.5.29.37', '2.5.29.30', '2.5.29.32', '2.5.29.14', '2.5.29.35']);

/** A pool of trusted authorities. */
export class CertPool {
  readonly certs: X509Certificate[];
  private readonly raws: Set<string>;
  constructor(certs: X509Certificate[]) {
    this.certs = certs;
    this.raws = new Set(certs.map((c) => c.raw.toString('base64')));
  }
  has(c: X509Certificate): boolean {
    return this.raws.has(c.raw.toString('base64'));
  }
  get size(): number {
    return this.certs.length;
  }
}

/**
 * The certificates of a PEM bundle, as client-go's certutil.ParseCertsPEM reads it: only
 * `CERTIFICATE` blocks without headers count, a malformed one is an error, and a bundle without
 * any is an error.
 */
export function parseCertsPEM(data: string | Buffer): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const b of pemBlocks(data)) {
    if (b.type !== 'CERTIFICATE' || Object.keys(b.headers).length) continue;
    try {
      out.push(new X509Certificate(b.bytes));
    } catch (e) {
      throw new Error(`x509: malformed certificate: ${(e as Error).message}`);
    }
  }
  if (!out.length) throw new Error('data does not contain any valid RSA or ECDSA certificates');
  return out;
}

/** A CA bundle file (--client-ca-file, --requestheader-client-ca-file) as a pool. */
export function loadCertPool(path: string, purpose = 'client-ca-bundle'): CertPool {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (e) {
    throw new Error(`unable to load ${purpose} from ${JSON.stringify(path)}: ${(e as Error).message}`);
  }
  try {
    return new CertPool(parseCertsPEM(data));
  } catch (e) {
    throw new Error(`unable to load ${purpose} from ${JSON.stringify(path)}: ${(e as Error).message}`);
  }
}

function columnSeparatedHex(b: Buffer | undefined): string {
  if (!b || !b.length) return '';
  return b.toString('hex').toUpperCase().match(/../g)!.join(':');
}

/** `SN=<decimal>, SKID=<AA:BB>, AKID=<CC:DD>`: how Kubernetes names a certificate in its errors. */
export function certificateIdentifier(p: ParsedCertificate): string {
  return `SN=${serialDecimal(p.serial)}, SKID=${columnSeparatedHex(p.subjectKeyId)}, AKID=${columnSeparatedHex(p.authorityKeyId)}`;
}


interface Cand {
  cert: X509Certificate;
  parsed?: ParsedCertificate;
  notBefore: number;
  notAfter: number;
}

function cand(cert: X509Certificate): Cand {
  return { cert, notBefore: Date.parse(cert.validFrom), notAfter: Date.parse(cert.validTo) };
}

function timeError(c: Cand, now: number): string | undefined {
  if (now < c.notBefore) return `x509: certificate has expired or is not yet valid: current time ${rfc3339(now)} is before ${rfc3339(c.notBefore)}`;
  if (now > c.notAfter) return `x509: certificate has expired or is not yet valid: current time ${rfc3339(now)} is after ${rfc3339(c.notAfter)}`;
  return undefined;
}

function issuedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

function ekuAllows(c: X509Certificate, usage: string): boolean {
  const eku = c.keyUsage; // Node names the extended key usages keyUsage
  if (!eku || eku.length === 0) return true;
  return eku.includes(OID_ANY_EKU) || eku.includes(usage);
}

export interface VerifiedChain {
  /** leaf first, the trusted root last */
  chain: X509Certificate[];
  /** the earliest notAfter of the chain (ms): the verification holds until then */
  validUntil: number;
}

/**
 * Verifies a client certificate (DER) with the intermediates the client sent against a pool of
 * roots, as Go's Verify does with KeyUsages [ClientAuth]. Throws an Error worded as Go's x509
 * errors on failure.
 */
export function verifyClientCertificate(leafDER: Buffer, intermediatesDER: Buffer[], roots: CertPool, now = Date.now(), usage = OID_CLIENT_AUTH): VerifiedChain {
  const leaf = cand(new X509Certificate(leafDER));
  const lp = parseCertificate(leafDER);
  const unhandled = lp.criticalExtensions.find((o) => !HANDLED_CRITICAL.has(o));
  if (unhandled) throw new Error('x509: unhandled critical extension');
  const te = timeError(leaf, now);
  if (te) throw new Error(te);
  if (roots.has(leaf.cert)) {
    if (!ekuAllows(leaf.cert, usage)) throw new Error('x509: certificate specifies an incompatible key usage');
    return { chain: [leaf.cert], validUntil: leaf.notAfter };
  }
  const inters = intermediatesDER.map((d) => {
    try {
      return cand(new X509Certificate(d));
    } catch {
      return undefined;
    }
  }).filter((c): c is Cand => !!c);
  const rootCands = roots.certs.map(cand);
  let lastErr: string | undefined;
  const chains: Cand[][] = [];
  const build = (path: Cand[]): void => {
    if (path.length > 10 || chains.length > 8) return;
    const cur = path[path.length - 1]!;
    for (const r of rootCands) {
      if (path.some((p) => p.cert.raw.equals(r.cert.raw))) continue;
      if (!issuedBy(cur.cert, r.cert)) continue;
      const e = timeError(r, now);
      if (e) {
        lastErr = e;
        continue;
      }
      chains.push([...path, r]);
    }
    for (const i of inters) {
      if (path.some((p) => p.cert.raw.equals(i.cert.raw))) continue;
      if (!issuedBy(cur.cert, i.cert)) continue;
      const e = timeError(i, now);
      if (e) {
        lastErr = e;
        continue;
      }
      if (!i.cert.ca) {
        lastErr = 'x509: certificate is not authorized to sign other certificates';
        continue;
      }
      build([...path, i]);
    }
  };
  build([leaf]);
  if (!chains.length) throw new Error(lastErr ?? 'x509: certificate signed by unknown authority');
  const ok = chains.find((ch) => ch.every((c) => ekuAllows(c.cert, usage)));
  if (!ok) throw new Error('x509: certificate specifies an incompatible key usage');
  return { chain: ok.map((c) => c.cert), validUntil: Math.min(...ok.map((c) => c.notAfter)) };
}

/** The peer's certificates (DER, leaf first) of a TLS socket, or undefined when it sent none. */
export function peerCertificates(socket: unknown): Buffer[] | undefined {
  const s = socket as { getPeerCertificate?: (detailed: boolean) => any } | undefined;
  if (!s || typeof s.getPeerCertificate !== 'function') return undefined;
  let c: any;
  try {
    c = s.getPeerCertificate(true);
  } catch {
    return undefined;
  }
  if (!c || !c.raw) return undefined;
  const out: Buffer[] = [];
  const seen = new Set<any>();
  while (c && c.raw && !seen.has(c)) {
    seen.add(c);
    out.push(c.raw as Buffer);
    if (c.issuerCertificate === c) break;
    c = c.issuerCertificate;
  }
  return out;
}

function firstString(attrs: NameAttribute[], oid: string, last = false): string {
  let v = '';
  for (const a of attrs) {
    if (a.oid === oid && typeof a.value === 'string') {
      if (!last) return a.value;
      v = a.value;
    }
  }
  return v;
}

/**
 * Kubernetes' CommonNameUserConversion: the user of a verified chain, or null when the leaf has
 * no CommonName (the next authenticator tries). Throws on a malformed UID attribute.
 */
export function commonNameUser(leafDER: Buffer, parseUID = true): UserInfo | null {
  const p = parseCertificate(leafDER);
  const cn = firstString(p.subject, OID_CN, true); // Go keeps the last CN
  if (!cn) return null;
  const groups = p.subject.filter((a) => a.oid === OID_O && typeof a.value === 'string').map((a) => a.value as string);
  let uid = '';
  if (parseUID) {
    const uids: string[] = [];
    for (const a of p.subject) {
      if (a.oid !== OID_UID) continue;
      if (typeof a.value !== 'string') throw new AuthenticationError('unable to parse UID into a string');
      uids.push(a.value);
    }
    if (uids.length > 1) throw new AuthenticationError(`expected 1 UID, but found multiple: ${goListPlain(uids)}`);
    if (uids.length === 1) {
      if (uids[0] === '') throw new AuthenticationError('UID cannot be an empty string');
      uid = uids[0]!;
    }
  }
  const fp = createHash('sha256').update(leafDER).digest('hex');
  const user: UserInfo = { name: cn, groups, extra: { [CREDENTIAL_ID_KEY]: [`X509SHA256=${fp}`] } };
  if (uid) user.uid = uid;
  return user;
}

/** Go's %v of a []string: `[a b]` */
function goListPlain(l: string[]): string {
  return `[${l.join(' ')}]`;
}

interface CacheEntry {
  until: number;
  result?: AuthResult | null;
  error?: Error;
}

export interface X509Options {
  /** AllowParsingUserUIDFromCertAuth (beta and on in Kubernetes 1.33) */
  parseUID?: boolean;
  now?: () => number;
}

/**
 * The DER of the peer's own certificate, without its chain (node's getPeerCertificate(false)), or
 * undefined. The first read of a connection's peer certificate costs ~0.7-0.9 ms in any form
 * (OpenSSL 3); the detailed chain costs ~0.5 ms more each time. (Not getPeerX509Certificate: in
 * Node 20, once it is called, a later getPeerCertificate(true) no longer has the intermediates
 * the client sent.)
 */
function peerLeafDER(socket: object): Buffer | undefined {
  const s = socket as { getPeerCertificate?: (detailed: boolean) => { raw?: unknown } | null | undefined };
  if (typeof s.getPeerCertificate !== 'function') return undefined;
  try {
    const raw = s.getPeerCertificate(false)?.raw;
    return Buffer.isBuffer(raw) && raw.length > 0 ? raw : undefined;
  } catch {
    return undefined;
  }
}

/** how many leaf certificates' results X509Authenticator keeps across connections */
const MAX_VERIFIED_LEAVES = 1024;

/** --client-ca-file: requests with a client certificate chaining to `pool`. */
export class X509Authenticator implements Authenticator {
  private readonly cache = new WeakMap<object, CacheEntry>();
  /**
   * Results of leaf certificates signed directly by a pool CA (or in the pool), by the leaf's
   * DER (base64), for the next connection that presents the same leaf. Such a result does
   * not depend on the intermediates a client sends (a direct chain verifies whatever else it
   * sends), only on the time, which `until` bounds. On this machine the full verification of a
   * new connection (node's detailed getPeerCertificate, parsing the leaf with X509Certificate
   * ~0.4 ms, the signature ~0.14 ms, our DER parses) costs 1.3 to 2.5 ms more than this lookup,
   * on every kubectl command: each opens a connection of its own. Failures are not kept.
   */
  private readonly verifiedLeaves = new Map<string, CacheEntry>();
  constructor(
    private readonly pool: CertPool,
    private readonly opts: X509Options = {},
  ) {}

  authenticate(req: IncomingMessage | { socket?: unknown }): AuthResult | null {
    const sock = req.socket as object | undefined;
    if (!sock) return null;
    const now = this.opts.now?.() ?? Date.now();
    const hit = this.cache.get(sock);
    if (hit && hit.until > now) {
      if (hit.error) throw hit.error;
      return hit.result ? { ...hit.result, user: cloneUser(hit.result.user) } : null;
    }
    const entry = this.compute(sock, now);
    this.cache.set(sock, entry);
    if (entry.error) throw entry.error;
    return entry.result ? { ...entry.result, user: cloneUser(entry.result.user) } : null;
  }

  private keepLeaf(leafKey: string, entry: CacheEntry): void {
    if (this.verifiedLeaves.size >= MAX_VERIFIED_LEAVES) {
      // the oldest goes (insertion order)
      const oldest = this.verifiedLeaves.keys().next().value;
      if (oldest !== undefined) this.verifiedLeaves.delete(oldest);
    }
    this.verifiedLeaves.set(leafKey, entry);
  }

  /**
   * Until when (ms) the last answer for this connection holds: its certificate chain's earliest
   * expiry, Infinity for a connection without a certificate, 0 when there is no answer to reuse.
   */
  validUntil(sock: object): number {
    const e = this.cache.get(sock);
    return e && !e.error ? e.until : 0;
  }

  private compute(sock: object, now: number): CacheEntry {
    const leaf = peerLeafDER(sock);
    const leafKey = leaf?.toString('base64');
    if (leafKey !== undefined) {
      const known = this.verifiedLeaves.get(leafKey);
      if (known) {
        if (known.until > now) return known;
        this.verifiedLeaves.delete(leafKey);
      }
    }
    const certs = peerCertificates(sock);
    if (!certs || !certs.length) return { until: Infinity, result: null };
    let verified: VerifiedChain;
    try {
      verified = verifyClientCertificate(certs[0]!, certs.slice(1), this.pool, now);
    } catch (e) {
      let id = '';
      try {
        id = certificateIdentifier(parseCertificate(certs[0]!));
      } catch {
        id = 'SN=, SKID=, AKID=';
      }
      // a certificate that is not valid yet may become valid: look again in a minute
      return { until: now + 60_000, error: new AuthenticationError(`verifying certificate ${id} failed: ${(e as Error).message}`) };
    }
    try {
      const user = commonNameUser(certs[0]!, this.opts.parseUID !== false);
      const entry: CacheEntry = { until: verified.validUntil, result: user ? { user } : null };
      // (kept under the leaf it was looked up by, when that is the certificate verified)
      if (leafKey !== undefined && verified.chain.length <= 2 && leaf!.equals(certs[0]!)) this.keepLeaf(leafKey, entry);
      return entry;
    } catch (e) {
      return { until: verified.validUntil, error: e instanceof AuthenticationError ? e : new AuthenticationError((e as Error).message) };
    }
  }
}

export function cloneUser(u: UserInfo): UserInfo {
  const out: UserInfo = { name: u.name, groups: [...u.groups] };
  if (u.uid !== undefined) out.uid = u.uid;
  if (u.extra) out.extra = Object.fromEntries(Object.entries(u.extra).map(([k, v]) => [k, [...v]]));
  return out;
}
