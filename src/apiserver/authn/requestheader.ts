// Front-proxy authentication (--requestheader-*): a proxy that has authenticated the user sends
// the identity in headers (X-Remote-User, X-Remote-Group, X-Remote-Extra-<key>, X-Remote-Uid),
// and the API server believes them only from a connection whose client certificate chains to
// --requestheader-client-ca-file and, when --requestheader-allowed-names is set, whose
// CommonName is in that list. Otherwise the headers are ignored (the request is authenticated by
// the other means, its certificate included).
import type { UserInfo } from '../authz.js';
import { parseCertificate } from './der.js';
import { AuthenticationError } from './errors.js';
import { headerFirst, headerNames, headerValues, unescapeExtraKey, type AuthnRequest } from './request.js';
import type { AuthResult, Authenticator } from './types.js';
import { OID_CLIENT_AUTH, peerCertificates, verifyClientCertificate, type CertPool } from './x509.js';

export interface RequestHeaderConfig {
  /** --requestheader-client-ca-file */
  pool: CertPool;
  /** --requestheader-allowed-names: empty allows any certificate the pool verifies */
  allowedNames: string[];
  /** --requestheader-username-headers */
  usernameHeaders: string[];
  /** --requestheader-uid-headers (RemoteRequestHeaderUID) */
  uidHeaders: string[];
  /** --requestheader-group-headers */
  groupHeaders: string[];
  /** --requestheader-extra-headers-prefix */
  extraHeaderPrefixes: string[];
  now?: () => number;
}

/** The user named by front-proxy headers, or null when no username header has a value. */
export function userFromHeaders(req: AuthnRequest, c: Pick<RequestHeaderConfig, 'usernameHeaders' | 'uidHeaders' | 'groupHeaders' | 'extraHeaderPrefixes'>): UserInfo | null {
  let name = '';
  for (const h of c.usernameHeaders) {
    name = headerFirst(req, h.trim());
    if (name) break;
  }
  if (!name) return null;
  let uid = '';
  for (const h of c.uidHeaders) {
    uid = headerFirst(req, h.trim());
    if (uid) break;
  }
  const groups: string[] = [];
  for (const h of c.groupHeaders) for (const v of headerValues(req, h.trim())) if (v) groups.push(v);
  const extra: Record<string, string[]> = {};
  const names = headerNames(req);
  for (const prefix of c.extraHeaderPrefixes) {
    const p = prefix.trim().toLowerCase();
    for (const n of names) {
      if (n.length < p.length || n.slice(0, p.length) !== p) continue;
      const key = unescapeExtraKey(n.slice(p.length).toLowerCase());
      (extra[key] ??= []).push(...headerValues(req, n));
    }
  }
  const user: UserInfo = { name, groups, extra };
  if (uid) user.uid = uid;
  return user;
}

interface Verdict {
  until: number;
  error?: Error;
}

export class RequestHeaderAuthenticator implements Authenticator {
  private readonly verdicts = new WeakMap<object, Verdict>();
  constructor(private readonly c: RequestHeaderConfig) {}

  /** The headers this authenticator reads, for clearing them once a request is authenticated. */
  get headers(): { names: string[]; prefixes: string[] } {
    return { names: [...this.c.usernameHeaders, ...this.c.uidHeaders, ...this.c.groupHeaders], prefixes: [...this.c.extraHeaderPrefixes] };
  }

  authenticate(req: AuthnRequest): AuthResult | null {
    const sock = req.socket as object | undefined;
    if (!sock) return null;
    // no username header: nothing to believe, and so nothing to verify. Kubernetes verifies the
    // certificate first and then finds no header, which ends the same way (no user from this
    // authenticator; its verification error only shows in the log when every other one fails
    // too); here a connection that is not a front proxy's (every kubectl command's) is spared the
    // detailed read of its certificate chain and a verification against the front-proxy CA
    if (!this.hasUsername(req)) return null;
    const now = this.c.now?.() ?? Date.now();
    let v = this.verdicts.get(sock);
    if (!v || v.until <= now) {
      const certs = peerCertificates(sock);
      if (!certs || !certs.length) return null;
      v = this.verify(certs, now);
      this.verdicts.set(sock, v);
    }
    if (v.error) throw v.error;
    const user = userFromHeaders(req, this.c);
    return user ? { user } : null;
  }

  private hasUsername(req: AuthnRequest): boolean {
    for (const h of this.c.usernameHeaders) if (headerFirst(req, h.trim())) return true;
    return false;
  }

  private verify(certs: Buffer[], now: number): Verdict {
    let until: number;
    try {
      until = verifyClientCertificate(certs[0]!, certs.slice(1), this.c.pool, now, OID_CLIENT_AUTH).validUntil;
    } catch (e) {
      return { until: now + 60_000, error: new AuthenticationError((e as Error).message) };
    }
    if (this.c.allowedNames.length) {
      let cn = '';
      try {
        for (const a of parseCertificate(certs[0]!).subject) if (a.oid === '2.5.4.3' && typeof a.value === 'string') cn = a.value;
      } catch {
        cn = '';
      }
      if (!this.c.allowedNames.includes(cn)) return { until, error: new AuthenticationError(`x509: subject with cn=${cn} is not in the allowed list`) };
    }
    return { until };
  }
}
