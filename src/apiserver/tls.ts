// The secure port as kube-apiserver serves it: TLS 1.2+ (or the --tls-min-version asked for),
// --tls-cipher-suites with Go's (IANA) names mapped to OpenSSL's and picked in Go's server
// order, --tls-sni-cert-key certificates chosen by the name a client asks for (SNI), and HTTP/2
// beside HTTP/1.1 on one port (ALPN offers h2 first, as Go's net/http does, so Go clients and
// kubectl speak h2), with --http2-max-streams-per-connection. The first half is pure parsing and
// selection; SecureListener, the second half, owns the listening socket, its connections and
// their graceful end (GOAWAY on HTTP/2, idle HTTP/1.1 connections closed).
import { createPrivateKey, X509Certificate, constants as cryptoConstants } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP, type Socket } from 'node:net';
import http2 from 'node:http2';
import https from 'node:https';
import tls, { createSecureContext, getCiphers, type SecureContext, type SecureVersion, type TLSSocket } from 'node:tls';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseCertificate } from './authn/der.js';
import { goValidPathEscapes, H1Server, type H1Handler } from './http1.js';
import { isDNS1123Subdomain } from '../machinery/validation.js';

// ---- --tls-min-version ----

const VERSIONS: Record<string, SecureVersion> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/** The accepted --tls-min-version values, sorted (component-base's TLSPossibleVersions). */
export function tlsPossibleVersions(): string[] {
  return Object.keys(VERSIONS).sort();
}

/** Node's name of a --tls-min-version value; empty means the default, TLS 1.2. */
export function parseTLSMinVersion(name: string): SecureVersion {
  if (name === '') return 'TLSv1.2';
  const v = Object.hasOwn(VERSIONS, name) ? VERSIONS[name] : undefined;
  if (!v) throw new Error(`unknown tls version ${JSON.stringify(name)}`);
  return v;
}

// ---- --tls-cipher-suites ----

export interface CipherSuite {
  /** Go's name (crypto/tls), the IANA name */
  name: string;
  id: number;
  /** OpenSSL's name */
  openssl: string;
  /** a TLS 1.3 suite: accepted by the flag but not configurable (as in Go) */
  tls13: boolean;
  /** in Go's InsecureCipherSuites() */
  insecure: boolean;
}

const suite = (name: string, id: number, openssl: string, insecure = false): CipherSuite => ({
  name,
  id,
  openssl,
  tls13: name.startsWith('TLS_AES_') || name === 'TLS_CHACHA20_POLY1305_SHA256',
  insecure,
});

/**
 * Go's CipherSuites() and InsecureCipherSuites() (Go 1.24, which Kubernetes 1.33 is built with:
 * RSA key exchange, 3DES, RC4 and CBC-SHA256 suites are the insecure ones), plus the two legacy
 * ChaCha20 names component-base keeps.
 */
export const CIPHER_SUITES: readonly CipherSuite[] = [
  suite('TLS_AES_128_GCM_SHA256', 0x1301, 'TLS_AES_128_GCM_SHA256'),
  suite('TLS_AES_256_GCM_SHA384', 0x1302, 'TLS_AES_256_GCM_SHA384'),
  suite('TLS_CHACHA20_POLY1305_SHA256', 0x1303, 'TLS_CHACHA20_POLY1305_SHA256'),
  suite('TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 0xc009, 'ECDHE-ECDSA-AES128-SHA'),
  suite('TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 0xc00a, 'ECDHE-ECDSA-AES256-SHA'),
  suite('TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 0xc013, 'ECDHE-RSA-AES128-SHA'),
  suite('TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 0xc014, 'ECDHE-RSA-AES256-SHA'),
  suite('TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 0xc02b, 'ECDHE-ECDSA-AES128-GCM-SHA256'),
  suite('TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 0xc02c, 'ECDHE-ECDSA-AES256-GCM-SHA384'),
  suite('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 0xc02f, 'ECDHE-RSA-AES128-GCM-SHA256'),
  suite('TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 0xc030, 'ECDHE-RSA-AES256-GCM-SHA384'),
  suite('TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 0xcca8, 'ECDHE-RSA-CHACHA20-POLY1305'),
  suite('TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 0xcca9, 'ECDHE-ECDSA-CHACHA20-POLY1305'),
  suite('TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305', 0xcca8, 'ECDHE-RSA-CHACHA20-POLY1305'),
  suite('TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305', 0xcca9, 'ECDHE-ECDSA-CHACHA20-POLY1305'),
  suite('TLS_RSA_WITH_RC4_128_SHA', 0x0005, 'RC4-SHA', true),
  suite('TLS_RSA_WITH_3DES_EDE_CBC_SHA', 0x000a, 'DES-CBC3-SHA', true),
  suite('TLS_RSA_WITH_AES_128_CBC_SHA', 0x002f, 'AES128-SHA', true),
  suite('TLS_RSA_WITH_AES_256_CBC_SHA', 0x0035, 'AES256-SHA', true),
  suite('TLS_RSA_WITH_AES_128_CBC_SHA256', 0x003c, 'AES128-SHA256', true),
  suite('TLS_RSA_WITH_AES_128_GCM_SHA256', 0x009c, 'AES128-GCM-SHA256', true),
  suite('TLS_RSA_WITH_AES_256_GCM_SHA384', 0x009d, 'AES256-GCM-SHA384', true),
  suite('TLS_ECDHE_ECDSA_WITH_RC4_128_SHA', 0xc007, 'ECDHE-ECDSA-RC4-SHA', true),
  suite('TLS_ECDHE_RSA_WITH_RC4_128_SHA', 0xc011, 'ECDHE-RSA-RC4-SHA', true),
  suite('TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA', 0xc012, 'ECDHE-RSA-DES-CBC3-SHA', true),
  suite('TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 0xc023, 'ECDHE-ECDSA-AES128-SHA256', true),
  suite('TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 0xc027, 'ECDHE-RSA-AES128-SHA256', true),
];

const BY_NAME = new Map(CIPHER_SUITES.map((s) => [s.name, s]));
const OPENSSL_OF = new Map(CIPHER_SUITES.map((s) => [s.id, s.openssl]));

/**
 * The order a Go server picks TLS 1.0-1.2 suites in, whatever order they are configured in
 * (crypto/tls since Go 1.17): AEADs with ECDHE, CBC with ECDHE, then RSA key exchange, 3DES,
 * CBC-SHA256, RC4.
 */
const PREFERENCE = [
  0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc009, 0xc013, 0xc00a, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035, 0xc012, 0x000a, 0xc023, 0xc027, 0x003c, 0xc007, 0xc011,
  0x0005,
];

/** Go's default TLS 1.0-1.2 suites (no RSA key exchange, 3DES, CBC-SHA256 or RC4), in its order. */
const GO_DEFAULT_TLS12 = [0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc009, 0xc013, 0xc00a, 0xc014];

/** TLS 1.3's suites in Go's order: always on, as Go does not let them be configured. */
const TLS13_SUITES = 'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256';

/** The secure cipher suite names (component-base's PreferredTLSCipherNames), sorted. */
export function preferredTLSCipherNames(): string[] {
  return CIPHER_SUITES.filter((s) => !s.insecure).map((s) => s.name).sort();
}

/** The insecure cipher suite names (component-base's InsecureTLSCipherNames), sorted. */
export function insecureTLSCipherNames(): string[] {
  return CIPHER_SUITES.filter((s) => s.insecure).map((s) => s.name).sort();
}

export interface CipherSelection {
  /** Node's `ciphers` option: the chosen TLS 1.0-1.2 suites in Go's preference order, then TLS 1.3's */
  ciphers: string;
  /** names given that are in Go's insecure list (kube-apiserver warns about each) */
  insecure: string[];
  /** names given that this build's OpenSSL cannot negotiate (RC4 and 3DES are not built in); left out */
  unavailable: string[];
}

/** The cipher string of a server without --tls-cipher-suites: Go's defaults. */
export function defaultCiphers(): string {
  return [...GO_DEFAULT_TLS12.map((id) => OPENSSL_OF.get(id)!), TLS13_SUITES].join(':');
}

/**
 * --tls-cipher-suites: Go's names to Node's cipher string. Unknown names fail as
 * component-base's TLSCipherSuites does. An empty list means Go's defaults (undefined here).
 */
export function parseCipherSuites(names: readonly string[], available: readonly string[] = getCiphers()): CipherSelection | undefined {
  if (!names.length) return undefined;
  const have = new Set(available.map((c) => c.toLowerCase()));
  const chosen = new Set<number>();
  const insecure: string[] = [];
  const unavailable: string[] = [];
  let tls12Asked = false;
  for (const n of names) {
    const s = BY_NAME.get(n);
    if (!s) throw new Error(`Cipher suite ${n} not supported or doesn't exist`);
    if (s.insecure && !insecure.includes(n)) insecure.push(n);
    if (s.tls13) continue;
    tls12Asked = true;
    if (!have.has(s.openssl.toLowerCase())) {
      if (!unavailable.includes(n)) unavailable.push(n);
      continue;
    }
    chosen.add(s.id);
  }
  if (tls12Asked && chosen.size === 0) {
    throw new Error(`none of the cipher suites in --tls-cipher-suites can be negotiated: ${unavailable.join(', ')} not available in this build's TLS library`);
  }
  const list = PREFERENCE.filter((id) => chosen.has(id)).map((id) => OPENSSL_OF.get(id)!);
  return { ciphers: [...list, TLS13_SUITES].join(':'), insecure, unavailable };
}

/**
 * Go's HTTP/2 server refuses a TLS 1.2 suite list without one of the two suites HTTP/2 requires
 * (ECDHE with AES-128-GCM); kube-apiserver then fails to start. Undefined when the list is fine.
 */
export function http2CipherError(names: readonly string[], minVersion: SecureVersion): string | undefined {
  if (!names.length || minVersion === 'TLSv1.3') return undefined;
  if (names.some((n) => BY_NAME.get(n)?.id === 0xc02f || BY_NAME.get(n)?.id === 0xc02b)) return undefined;
  return 'http2: TLSConfig.CipherSuites is missing an HTTP/2-required AES_128_GCM_SHA256 cipher (need at least one of TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)';
}

/**
 * The cipher string the listener uses. TLS 1.0 and 1.1 sign with SHA-1, which OpenSSL 3 refuses
 * at its default security level: a minimum below TLS 1.2 lowers it, as Go would serve them.
 */
export function effectiveCiphers(selection: CipherSelection | undefined, minVersion: SecureVersion): string {
  const ciphers = selection?.ciphers ?? defaultCiphers();
  const old = minVersion === 'TLSv1' || minVersion === 'TLSv1.1';
  return old ? `${ciphers}:@SECLEVEL=0` : ciphers;
}

// ---- --http2-max-streams-per-connection ----

/** kube-apiserver's limit when the flag is 0 (it matches what Go's HTTP/2 clients assume). */
export const DEFAULT_HTTP2_MAX_STREAMS = 100;

export function http2MaxStreams(flag: number): number {
  return flag > 0 ? flag : DEFAULT_HTTP2_MAX_STREAMS;
}

/** kube-apiserver's per-stream receive buffer and frame size: most API bodies fit in one frame. */
export const HTTP2_STREAM_WINDOW = 256 * 1024;

// ---- certificates and --tls-sni-cert-key ----

export interface SNICertKey {
  /** PEM, the certificate first (a chain may follow) */
  cert: Buffer | string;
  key: Buffer | string;
  /** explicit domain patterns; empty takes the certificate's names */
  names: string[];
  /** where it came from, for messages */
  source?: string;
}

function dnsSANs(c: X509Certificate): string[] {
  const san = c.subjectAltName;
  if (!san) return [];
  const out: string[] = [];
  // Node writes `DNS:a, DNS:b, IP Address:1.2.3.4`; a name with special characters is JSON-quoted
  const re = /(?:^|, )DNS:("(?:[^"\\]|\\.)*"|[^,]*)/g;
  for (let m = re.exec(san); m; m = re.exec(san)) {
    const v = m[1]!;
    out.push(v.startsWith('"') ? (JSON.parse(v) as string) : v);
  }
  return out;
}

/**
 * The names a certificate serves when no patterns are given (kube-apiserver's
 * getCertificateNames): its CommonName when that is a DNS name or a wildcard of one (an IP is
 * not), then its DNS SANs. IP SANs are not names: SNI never carries an address.
 */
export function certificateNames(certPEM: Buffer | string): string[] {
  const c = new X509Certificate(certPEM);
  const names: string[] = [];
  let cn = '';
  for (const a of parseCertificate(c.raw).subject) if (a.oid === '2.5.4.3' && typeof a.value === 'string') cn = a.value; // Go keeps the last
  const domainLike = cn === '*' || (cn !== '' && isDNS1123Subdomain(cn.startsWith('*.') ? cn.slice(2) : cn).length === 0);
  if (cn && !isIP(cn) && domainLike) names.push(cn);
  names.push(...dnsSANs(c));
  return names;
}

/** A certificate and key pair that belong together, or an error worded as Go's tls.X509KeyPair's. */
export function checkKeyPair(cert: Buffer | string, key: Buffer | string): void {
  let c: X509Certificate;
  try {
    c = new X509Certificate(cert);
  } catch {
    throw new Error('tls: failed to find any PEM data in certificate input');
  }
  let k;
  try {
    k = createPrivateKey(key);
  } catch {
    throw new Error('tls: failed to find any PEM data in key input');
  }
  if (!c.checkPrivateKey(k)) throw new Error('tls: private key does not match public key');
}

/** os.ReadFile's error words for a file that cannot be read. */
function readFileGo(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`open ${path}: no such file or directory`);
    if (code === 'EACCES') throw new Error(`open ${path}: permission denied`);
    if (code === 'EISDIR') throw new Error(`read ${path}: is a directory`);
    throw new Error(`open ${path}: ${(e as Error).message}`);
  }
}

/**
 * A serving certificate and key from files, checked as kube-apiserver's dynamic serving content
 * loads them (both names, both non-empty, a matching pair).
 */
export function loadCertKeyFiles(purpose: string, certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  if (!certFile || !keyFile) throw new Error('missing filename for serving cert');
  const cert = readFileGo(certFile);
  const key = readFileGo(keyFile);
  if (!cert.length || !key.length) throw new Error(`missing content for serving cert "${purpose}::${certFile}::${keyFile}"`);
  checkKeyPair(cert, key);
  return { cert, key };
}

/** --tls-sni-cert-key values loaded; errors as kube-apiserver words them. */
export function loadSNICertKeys(values: readonly { certFile: string; keyFile: string; names: string[] }[]): SNICertKey[] {
  return values.map((v) => {
    try {
      const { cert, key } = loadCertKeyFiles('sni-serving-cert', v.certFile, v.keyFile);
      return { cert, key, names: [...v.names], source: `${v.certFile},${v.keyFile}` };
    } catch (e) {
      throw new Error(`failed to load SNI cert and key: ${(e as Error).message}`);
    }
  });
}

/**
 * The SNI table: server name (lower case) to the index of its certificate. Earlier flags win a
 * name over later ones; explicit patterns win over names taken from certificates.
 */
export function sniNameTable(entries: readonly SNICertKey[]): Map<string, number> {
  const table = new Map<string, number>();
  const explicit = new Map<string, number>();
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.names.length) for (const n of e.names) explicit.set(n.toLowerCase(), i);
    else for (const n of certificateNames(e.cert)) table.set(n.toLowerCase(), i);
  }
  for (const [n, i] of explicit) table.set(n, i);
  return table;
}

/**
 * The certificate index for a server name, as Go's tls.Config picks from NameToCertificate: the
 * exact name, else the name with its first label replaced by `*`; undefined means the default
 * certificate. A trailing dot is ignored.
 */
export function selectSNI(table: ReadonlyMap<string, number>, servername: string): number | undefined {
  let name = servername.toLowerCase();
  while (name.endsWith('.')) name = name.slice(0, -1);
  if (!name) return undefined;
  const exact = table.get(name);
  if (exact !== undefined) return exact;
  const dot = name.indexOf('.');
  const wildcard = dot < 0 ? '*' : `*${name.slice(dot)}`;
  return table.get(wildcard);
}

// ---- the secure serving configuration ----

export interface SecureServingOptions {
  cert: string | Buffer;
  key: string | Buffer;
  /** CA bundle whose names are sent in the certificate request (client certificates are verified by authentication) */
  clientCA?: string | Buffer;
  /** --tls-min-version ('' is VersionTLS12) */
  minVersion?: string;
  /** --tls-cipher-suites, Go's names ([] is Go's defaults) */
  cipherSuites?: string[];
  /** --tls-sni-cert-key, loaded */
  sniCertKeys?: SNICertKey[];
  /** --http2-max-streams-per-connection (0 is 100) */
  http2MaxStreamsPerConnection?: number;
  /** --disable-http2-serving */
  disableHTTP2?: boolean;
  /** --permit-port-sharing (SO_REUSEPORT) */
  permitPortSharing?: boolean;
}

export interface PreparedServing {
  tls: {
    cert: string | Buffer;
    key: string | Buffer;
    ca?: string | Buffer;
    minVersion: SecureVersion;
    ciphers: string;
    honorCipherOrder: true;
    secureOptions: number;
  };
  sniContexts: SecureContext[];
  sniTable: Map<string, number>;
  /** the default certificate's context, for SNI names that match no --tls-sni-cert-key */
  defaultContext?: SecureContext;
  /** explicit IP patterns (canonical form) to their SNI context: a client that sends no SNI gets the certificate of the address it reached */
  ipContexts: Map<string, SecureContext>;
  http2: boolean;
  maxStreams: number;
  permitPortSharing: boolean;
  /** --tls-cipher-suites names in Go's insecure list (kube-apiserver warns: "Use of insecure cipher '...' detected.") */
  insecureCiphers: string[];
  /** --tls-cipher-suites names this runtime's TLS library lacks (left out) */
  unavailableCiphers: string[];
}

/** An address as a socket reports it, comparable with a pattern: IPv4-mapped IPv6 as IPv4, IPv6 compressed. */
export function canonicalIP(ip: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (v4) return v4[1]!;
  if (isIP(ip) === 6) return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  return ip;
}

/** Node 22.12 and later bind with SO_REUSEPORT (`reusePort`); older runtimes cannot share a port. */
function reusePortSupported(): boolean {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 12);
}

/** Validates the secure serving options and builds what the listener needs; throws start-up errors in kube-apiserver's words. */
export function prepareServing(o: SecureServingOptions): PreparedServing {
  const minVersion = parseTLSMinVersion(o.minVersion ?? '');
  const selection = parseCipherSuites(o.cipherSuites ?? []);
  checkKeyPair(o.cert, o.key);
  const h2err = o.disableHTTP2 ? undefined : http2CipherError(o.cipherSuites ?? [], minVersion);
  if (h2err) throw new Error(`error configuring http2: ${h2err}`);
  if (o.permitPortSharing && !reusePortSupported()) {
    throw new Error(`failed to create listener: SO_REUSEPORT (--permit-port-sharing) needs Node.js 22.12 or later, this is ${process.version}`);
  }
  const tls = {
    cert: o.cert,
    key: o.key,
    ca: o.clientCA,
    minVersion,
    ciphers: effectiveCiphers(selection, minVersion),
    honorCipherOrder: true as const,
    // Go picks ChaCha20 first for clients that prefer it (no AES hardware)
    secureOptions: cryptoConstants.SSL_OP_PRIORITIZE_CHACHA ?? 0,
  };
  const sni = o.sniCertKeys ?? [];
  const sniContexts = sni.map((e, i) => {
    try {
      return createSecureContext({ ...tls, cert: e.cert, key: e.key });
    } catch (err) {
      throw new Error(`invalid SNI cert keypair [${i}/"${e.source ?? i}"]: ${(err as Error).message}`);
    }
  });
  const sniTable = sniNameTable(sni);
  const ipContexts = new Map<string, SecureContext>();
  for (const [name, i] of sniTable) if (isIP(name)) ipContexts.set(canonicalIP(name), sniContexts[i]!);
  return {
    tls,
    sniContexts,
    sniTable,
    defaultContext: sniContexts.length ? createSecureContext(tls) : undefined,
    ipContexts,
    http2: !o.disableHTTP2,
    maxStreams: http2MaxStreams(o.http2MaxStreamsPerConnection ?? 0),
    permitPortSharing: o.permitPortSharing === true,
    insecureCiphers: selection?.insecure ?? [],
    unavailableCiphers: selection?.unavailable ?? [],
  };
}

// ---- the listener ----

/** Headers that belong to an HTTP/1.1 connection; HTTP/2 forbids them (RFC 9113 §8.2.2). */
const CONNECTION_HEADERS = new Set(['connection', 'transfer-encoding', 'keep-alive', 'proxy-connection', 'upgrade']);

/**
 * An HTTP/2 request as the handlers expect a request: `socket` is the connection's TLS socket
 * (the same object for every stream of a session, so per-connection caches such as client
 * certificate verification work), and `headersDistinct` keeps each value of a repeated header
 * (kubectl sends `Impersonate-Group` once per group).
 */
class H2Request extends http2.Http2ServerRequest {
  private distinct?: Record<string, string[]>;
  get headersDistinct(): Record<string, string[]> {
    if (!this.distinct) {
      const d: Record<string, string[]> = Object.create(null);
      const raw = this.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const k = raw[i]!.toLowerCase();
        if (k.charCodeAt(0) === 58 /* ':' */) continue;
        (d[k] ??= []).push(raw[i + 1]!);
      }
      this.distinct = d;
    }
    return this.distinct;
  }
}

const streamSocket = Object.getOwnPropertyDescriptor(http2.Http2ServerRequest.prototype, 'socket')!.get!;
Object.defineProperty(H2Request.prototype, 'socket', {
  configurable: true,
  get(this: H2Request) {
    return this.stream.session?.socket ?? streamSocket.call(this);
  },
});

/** An HTTP/2 response that drops HTTP/1.1 connection headers instead of failing the stream. */
class H2Response extends http2.Http2ServerResponse {
  override setHeader(name: string, value: number | string | readonly string[]): any {
    if (CONNECTION_HEADERS.has(name.toLowerCase())) return this;
    return super.setHeader(name, value as any);
  }
}

/** the first five bytes of a request that Go's server takes for plain HTTP (tlsRecordHeaderLooksLikeHTTP) */
const HTTP_RECORD_HEADERS = new Set(['GET /', 'HEAD ', 'POST ', 'PUT /', 'OPTIO']);
/** the shorter beginnings of those (a first read of fewer than five bytes that may still be one) */
const HTTP_PREFIXES = new Set([...HTTP_RECORD_HEADERS].flatMap((h) => [1, 2, 3, 4].map((n) => h.slice(0, n))));

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The secure port: one TLS listener that speaks HTTP/2 and HTTP/1.1 (ALPN), with Go's
 * net/http settings as kube-apiserver configures them (90 s idle connections, 3 min TCP
 * keep-alive, 1 MiB of request headers, 256 KiB HTTP/2 stream windows and frames).
 */
export class SecureListener {
  readonly server: http2.Http2SecureServer | https.Server;
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly sockets = new Set<TLSSocket>();
  private closing = false;
  /** HTTP/1.1 connections, served by Keelson's own layer (http1.ts) unless KEELSON_NODE_HTTP1=1 */
  private readonly h1?: H1Server;

  constructor(
    private p: PreparedServing,
    handler: RequestHandler,
    /** a failed handshake, worded as Go's server logs it (kube-apiserver logs these at V(5)) */
    onHandshakeError?: (message: string) => void,
  ) {
    const common = {
      ...p.tls,
      requestCert: true,
      rejectUnauthorized: false,
      // (this.p, not p: certificates are replaced when their files change)
      SNICallback: p.sniContexts.length
        ? (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void) => {
            const i = selectSNI(this.p.sniTable, servername);
            cb(null, i === undefined ? this.p.defaultContext : this.p.sniContexts[i]);
          }
        : undefined,
      keepAlive: true,
      keepAliveInitialDelay: 180_000,
      // TCP_NODELAY on every accepted connection, as Go sets it on every TCP connection: node:https
      // sets it by default, node:http2's server does not, and with Nagle's algorithm a small write
      // (a watch event, an HTTP/2 frame) behind one not yet acknowledged waits for the peer's
      // delayed ACK (up to 40 ms on Linux)
      noDelay: true,
    };
    // --disable-http2-serving: a plain HTTPS server, whose ALPN offers HTTP/1.1 only
    const server: http2.Http2SecureServer | https.Server = !p.http2
      ? https.createServer({ ...common, ALPNProtocols: ['http/1.1'] }, handler)
      : http2.createSecureServer(
          {
            ...common,
            allowHTTP1: true,
            settings: {
              maxConcurrentStreams: p.maxStreams,
              initialWindowSize: HTTP2_STREAM_WINDOW,
              maxFrameSize: HTTP2_STREAM_WINDOW,
              maxHeaderListSize: 1 << 20,
            },
            // queued watch output counts against this; a watcher is cut off at 64 MiB (watch.ts)
            maxSessionMemory: 128,
            Http2ServerRequest: H2Request as unknown as typeof http2.Http2ServerRequest,
            Http2ServerResponse: H2Response as unknown as typeof http2.Http2ServerResponse,
          } as http2.SecureServerOptions,
          ((req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
            // a path Go cannot parse (url.ParseRequestURI: a bad %-escape) is a stream error in Go's
            // HTTP/2 server: the stream is reset with PROTOCOL_ERROR, no handler sees it (as http1.ts
            // answers Go's 400 for HTTP/1.1)
            if (req.url.includes('%') && !goValidPathEscapes(req.url)) {
              req.stream.close(http2.constants.NGHTTP2_PROTOCOL_ERROR);
              return;
            }
            (handler as any)(req, res);
          }) as any,
        );
    // HTTP/1.1 on the same port: Go's IdleTimeout and MaxHeaderBytes; long requests (watches) have no deadline
    const h1 = server as unknown as { headersTimeout: number; requestTimeout: number; keepAliveTimeout: number; maxHeaderSize: number };
    h1.headersTimeout = 60_000;
    h1.requestTimeout = 0;
    h1.keepAliveTimeout = 90_000;
    h1.maxHeaderSize = 1 << 20;
    // HTTP/1.1 connections go to http1.ts instead of node:http: the listeners Node installed for
    // 'secureConnection' (node:http's, or node:http2's, which hands HTTP/1.1 on to node:http) are
    // kept for HTTP/2 only. KEELSON_NODE_HTTP1=1 leaves node:http in place (a diagnostic switch,
    // for comparing the two: bench/duel.ts).
    if (process.env['KEELSON_NODE_HTTP1'] !== '1') {
      const h1 = new H1Server(handler as unknown as H1Handler, { maxHeaderSize: 1 << 20, headersTimeoutMs: 60_000, keepAliveTimeoutMs: 90_000 });
      this.h1 = h1;
      const builtin = server.listeners('secureConnection') as ((s: TLSSocket) => void)[];
      server.removeAllListeners('secureConnection');
      server.on('secureConnection', (sock: TLSSocket) => {
        if (p.http2 && sock.alpnProtocol === 'h2') for (const l of builtin) l.call(server, sock);
        else h1.attach(sock);
      });
    }
    server.on('secureConnection', (sock: TLSSocket) => {
      this.sockets.add(sock);
      sock.once('close', () => this.sockets.delete(sock));
    });
    server.on('session', (session: http2.ServerHttp2Session) => this.track(session));
    if (p.ipContexts.size) this.selectByLocalAddress(server);
    // a failed handshake is the client's problem: Node ends that socket
    server.on('tlsClientError', (err: Error, sock: TLSSocket) => {
      if (!onHandshakeError) return;
      const addr = sock.remoteAddress ?? '';
      const why = (err as { reason?: string }).reason ?? err.message.trim();
      onHandshakeError(`http: TLS handshake error from ${addr.includes(':') ? `[${addr}]` : addr}:${sock.remotePort ?? ''}: ${why}`);
    });
    this.answerPlainHTTP(server);
    this.server = server;
  }

  /**
   * A client that speaks plain HTTP to the secure port (`http://` for `https://`) is answered as
   * Go's net/http server answers it: when the first five bytes, where a TLS record header belongs,
   * look like an HTTP request (`GET /`, `HEAD `, `POST `, `PUT /`, `OPTIO`: Go's
   * tlsRecordHeaderLooksLikeHTTP), a 400 with "Client sent an HTTP request to an HTTPS server." in
   * plain text, and the connection closed. Without it the TLS layer drops the connection with
   * nothing said, which clients take for a network failure and retry. Each new connection's first
   * bytes are read before the TLS layer takes it (and given back to it: Node's TLS socket takes up
   * what the plain socket already holds), once per connection, not per request.
   */
  private answerPlainHTTP(server: http2.Http2SecureServer | https.Server): void {
    const tlsListeners = server.listeners('connection') as ((s: Socket) => void)[];
    server.removeAllListeners('connection');
    const pending = this.pendingConnections;
    server.on('connection', (raw: Socket) => {
      pending.add(raw);
      // (as Node's TLS handshake timeout, 120 s, would have ended a connection that sends nothing)
      raw.setTimeout(120_000, () => raw.destroy());
      // the bytes read so far, while fewer than five that could still begin an HTTP request (a
      // request line split across writes: Go reads the whole five-byte record header before deciding)
      let held: Buffer | undefined;
      const first = () => {
        const got = raw.read() as Buffer | null;
        if (got === null && held === undefined) return;
        const head = held && got ? Buffer.concat([held, got]) : (got ?? held)!;
        if (head.length < 5 && HTTP_PREFIXES.has(head.toString('latin1'))) {
          held = head;
          return;
        }
        raw.off('readable', first);
        raw.off('close', gone);
        raw.setTimeout(0);
        pending.delete(raw);
        if (head.length >= 5 && HTTP_RECORD_HEADERS.has(head.subarray(0, 5).toString('latin1'))) {
          // (then closed, as Go closes it: the rest of the request is not read)
          raw.end('HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n', () => raw.destroy());
          return;
        }
        raw.unshift(head);
        if (this.closing || raw.destroyed) {
          raw.destroy();
          return;
        }
        for (const l of tlsListeners) l.call(server, raw);
      };
      const gone = () => {
        raw.off('readable', first);
        pending.delete(raw);
      };
      raw.on('readable', first);
      raw.once('close', gone);
    });
  }

  /** connections not yet past their first bytes (answerPlainHTTP): ended with the listener */
  private readonly pendingConnections = new Set<Socket>();

  /**
   * kube-apiserver's choice for a client that sends no SNI: the certificate whose explicit
   * pattern is the local address the client reached. Node asks for a certificate only when SNI
   * is present, so the TLS socket of such a connection is created with that certificate's
   * context: the server's shared context is swapped around Node's own connection listener
   * (listeners run synchronously, in order), then restored.
   */
  private selectByLocalAddress(server: http2.Http2SecureServer | https.Server): void {
    const shared = server as unknown as { _sharedCreds: SecureContext };
    let saved: SecureContext | undefined;
    server.prependListener('connection', (raw: Socket) => {
      const ctx = this.p.ipContexts.get(canonicalIP(raw.localAddress ?? ''));
      if (!ctx) return;
      saved = shared._sharedCreds;
      shared._sharedCreds = ctx;
    });
    server.on('connection', () => {
      if (saved === undefined) return;
      shared._sharedCreds = saved;
      saved = undefined;
    });
  }

  private track(session: http2.ServerHttp2Session): void {
    if (this.closing) {
      session.close();
      return;
    }
    this.sessions.add(session);
    let streams = 0;
    session.on('stream', (st) => {
      streams++;
      st.once('close', () => streams--);
    });
    // the connection window holds a full window for every stream it may carry
    session.once('remoteSettings', () => {
      try {
        session.setLocalWindowSize(HTTP2_STREAM_WINDOW * this.p.maxStreams);
      } catch {
        /* the session is already gone */
      }
    });
    // Go's IdleTimeout: a session without streams for 90 s is told to go away
    session.setTimeout(90_000, () => {
      if (streams === 0) session.close();
    });
    session.on('error', () => {});
    session.once('close', () => this.sessions.delete(session));
  }

  /**
   * New certificates (the same flags, files whose contents changed), as kube-apiserver's
   * dynamic serving certificates: new connections get them, open connections keep theirs.
   */
  updateCertificates(p: PreparedServing): void {
    (this.server as tls.Server).setSecureContext(p.tls);
    this.p = { ...this.p, tls: p.tls, sniContexts: p.sniContexts, sniTable: p.sniTable, defaultContext: p.defaultContext, ipContexts: p.ipContexts };
  }

  listen(port: number, host: string): Promise<void> {
    const server = this.server;
    return new Promise<void>((resolve, reject) => {
      // kube-apiserver's words for a port it cannot take (Go's net errors)
      const onError = (e: NodeJS.ErrnoException) => {
        const why = { EADDRINUSE: 'address already in use', EACCES: 'permission denied', EADDRNOTAVAIL: 'cannot assign requested address' }[e.code ?? ''];
        if (!why) return reject(e);
        const at = `${host.includes(':') ? `[${host}]` : host}:${port}`;
        reject(new Error(`failed to create listener: failed to listen on ${at}: listen tcp ${at}: bind: ${why}`));
      };
      server.once('error', onError);
      const opts: Record<string, unknown> = { port, host };
      if (this.p.permitPortSharing) opts['reusePort'] = true;
      server.listen(opts, () => {
        server.off('error', onError);
        resolve();
      });
    });
  }

  /** `host:port` (IPv6 in brackets) the server listens on */
  get address(): string {
    const a = this.server.address();
    if (!a || typeof a !== 'object') return '';
    return `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}`;
  }

  /**
   * Graceful end, first step: stop accepting connections, send GOAWAY on every HTTP/2 session
   * (their open streams finish; new streams go to a new connection) and close idle HTTP/1.1
   * connections. Resolves when every connection is gone.
   */
  beginShutdown(): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    for (const s of this.pendingConnections) s.destroy();
    for (const s of this.sessions) s.close();
    this.h1?.shutdown();
    (this.server as unknown as { closeIdleConnections?(): void }).closeIdleConnections?.();
    return closed;
  }

  /** Graceful end, last step (no request in flight): close what is left. */
  closeAll(): void {
    for (const s of this.pendingConnections) s.destroy();
    for (const s of this.sessions) s.destroy();
    for (const s of this.sockets) s.destroy();
  }
}
