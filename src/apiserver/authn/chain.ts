// The authentication chain, assembled as kube-apiserver assembles it:
//
//   union(
//     loopback bearer tokens,                       (the privileged loopback token; none by default)
//     failOnError(
//       authenticatedGroupAdder(union(
//         front proxy headers  (--requestheader-*, audience-agnostic),
//         client certificates  (--client-ca-file),
//         bearer token         (Authorization: Bearer <token>)       ─┐ token cache over
//         websocket token      (Sec-WebSocket-Protocol bearer form)  ─┘ union(token file, legacy SA, bound SA)
//       )),
//       anonymous            (--anonymous-auth)
//     ))
//
// A union answers with its first member that authenticates, else with the aggregate of its
// members' errors; failOnError stops at the first error, so a rejected credential is never
// taken for an anonymous request. A bearer token no authenticator recognizes is an error
// ("invalid bearer token"), a malformed Authorization header is no credential at all. The
// authenticated user gets system:authenticated. Results that depend only on the TLS connection
// (client certificate verification) are cached per connection, token results (success only,
// 10 s) per token and audiences, as Kubernetes caches them.
import { createHash, randomBytes } from 'node:crypto';
import type { UserInfo } from '../authz.js';
import { errors, type StatusError } from '../../machinery/errors.js';
import { aggregate, asError, AuthenticationError } from './errors.js';
import { publicKeysFromFile } from './jose.js';
import { headerFirst, headerValues, syntheticRequest, type AuthnRequest } from './request.js';
import { RequestHeaderAuthenticator } from './requestheader.js';
import { LegacyServiceAccountTokenAuthenticator, PublicKeySet, ServiceAccountTokenAuthenticator, type ObjectReader } from './serviceaccount.js';
import { StaticTokenAuthenticator } from './tokenfile.js';
import type { AuthResult, TokenAuthenticator } from './types.js';
import { CertPool, cloneUser, loadCertPool, X509Authenticator } from './x509.js';
import type { KeyObject } from 'node:crypto';

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const INVALID_BEARER_TOKEN = 'invalid bearer token';
export const EXTRA_SPACE_WARNING = 'the provided Authorization header contains extra space before the bearer token, and is ignored';

type MaybePromise<T> = T | Promise<T>;

/** What one link of the chain answers: a result, "not mine" (null), or a thrown error. */
type RequestAuth = (req: AuthnRequest, ctx: RequestContext) => MaybePromise<AuthResult | null>;
type TokenAuth = (token: string, audiences: string[] | undefined) => MaybePromise<AuthResult | null>;

interface RequestContext {
  /** the audiences the request is for (the API audiences; a TokenReview's own) */
  audiences?: string[];
  warnings: string[];
}

function intersect(have: string[], want: string[]): string[] {
  return want.filter((w) => have.includes(w));
}

function union(members: RequestAuth[], failOnError = false): RequestAuth {
  if (members.length === 1) return members[0]!;
  return async (req, ctx) => {
    const errs: Error[] = [];
    for (const m of members) {
      try {
        const r = await m(req, ctx);
        if (r) return r;
      } catch (e) {
        if (failOnError) throw e;
        errs.push(asError(e));
      }
    }
    const err = aggregate(errs);
    if (err) throw err;
    return null;
  };
}

function tokenUnion(members: TokenAuth[]): TokenAuth {
  if (members.length === 1) return members[0]!;
  return async (token, auds) => {
    const errs: Error[] = [];
    for (const m of members) {
      try {
        const r = await m(token, auds);
        if (r) return r;
      } catch (e) {
        errs.push(asError(e));
      }
    }
    const err = aggregate(errs);
    if (err) throw err;
    return null;
  };
}

/** Authenticators that know no audiences answer for the API audiences the request is for, if any. */
function audienceAgnostic(implicit: string[], auth: RequestAuth): RequestAuth {
  return async (req, ctx) => {
    if (!ctx.audiences) return auth(req, ctx);
    const auds = intersect(implicit, ctx.audiences);
    if (!auds.length) return null;
    const r = await auth(req, ctx);
    if (!r) return null;
    if (r.audiences?.length) throw new AuthenticationError(`audience agnostic authenticator wrapped an authenticator that returned audiences: ${JSON.stringify(r.audiences)}`);
    return { ...r, audiences: auds };
  };
}

function audienceAgnosticToken(implicit: string[], auth: TokenAuth): TokenAuth {
  return async (token, audiences) => {
    if (!audiences) return auth(token, audiences);
    const auds = intersect(implicit, audiences);
    if (!auds.length) return null;
    const r = await auth(token, audiences);
    if (!r) return null;
    if (r.audiences?.length) throw new AuthenticationError(`audience agnostic authenticator wrapped an authenticator that returned audiences: ${JSON.stringify(r.audiences)}`);
    return { ...r, audiences: auds };
  };
}

/** Authorization: Bearer <token> (case-insensitive scheme, surrounding space trimmed). */
export function bearerTokenOf(req: AuthnRequest, warnings?: string[]): string | undefined {
  const auth = headerFirst(req, 'authorization').trim();
  if (!auth) return undefined;
  const parts = splitN(auth, ' ', 3);
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  const token = parts[1]!;
  if (!token) {
    if (parts.length === 3) warnings?.push(EXTRA_SPACE_WARNING);
    return undefined;
  }
  return token;
}

function splitN(s: string, sep: string, n: number): string[] {
  const out: string[] = [];
  let rest = s;
  while (out.length < n - 1) {
    const i = rest.indexOf(sep);
    if (i < 0) break;
    out.push(rest.slice(0, i));
    rest = rest.slice(i + sep.length);
  }
  out.push(rest);
  return out;
}

function bearer(tokens: TokenAuth): RequestAuth {
  return async (req, ctx) => {
    const token = bearerTokenOf(req, ctx.warnings);
    if (token === undefined) return null;
    const r = await tokens(token, ctx.audiences);
    if (!r) throw new AuthenticationError(INVALID_BEARER_TOKEN);
    return r;
  };
}

const WS_BEARER_PREFIX = 'base64url.bearer.authorization.k8s.io.';

/** kubectl's websocket form: `Sec-WebSocket-Protocol: base64url.bearer.authorization.k8s.io.<token>, <protocol>` */
function websocketProtocol(tokens: TokenAuth): RequestAuth {
  return async (req, ctx) => {
    const conn = headerValues(req, 'connection').join(',').toLowerCase();
    const upgrade = headerFirst(req, 'upgrade').toLowerCase();
    if (!conn.split(',').some((t) => t.trim() === 'upgrade') || upgrade !== 'websocket') return null;
    let token = '';
    let sawToken = false;
    const others: string[] = [];
    for (const hv of headerValues(req, 'sec-websocket-protocol')) {
      for (let p of hv.split(',')) {
        p = p.trim();
        if (!p.startsWith(WS_BEARER_PREFIX)) {
          others.push(p);
          continue;
        }
        if (sawToken) throw new AuthenticationError('multiple base64.bearer.authorization tokens specified');
        sawToken = true;
        const enc = p.slice(WS_BEARER_PREFIX.length);
        if (!/^[A-Za-z0-9_-]*$/.test(enc) || enc.length % 4 === 1) throw new AuthenticationError('invalid base64.bearer.authorization token encoding');
        const dec = Buffer.from(enc, 'base64url');
        const s = dec.toString('utf8');
        if (!Buffer.from(s, 'utf8').equals(dec)) throw new AuthenticationError('invalid base64.bearer.authorization token');
        token = s;
      }
    }
    if (token && !others.length) throw new AuthenticationError('missing additional subprotocol');
    if (!token) return null;
    const r = await tokens(token, ctx.audiences);
    if (!r) throw new AuthenticationError(INVALID_BEARER_TOKEN);
    return r;
  };
}

function withAuthenticatedGroup(auth: RequestAuth): RequestAuth {
  return async (req, ctx) => {
    const r = await auth(req, ctx);
    if (!r) return null;
    const u = r.user;
    if (u.name === ANONYMOUS_USER || u.groups.some((g) => g === AUTHENTICATED_GROUP || g === UNAUTHENTICATED_GROUP)) return r;
    return { ...r, user: { ...u, groups: [...u.groups, AUTHENTICATED_GROUP] } };
  };
}

const anonymousAuth: RequestAuth = (_req, ctx) => {
  const r: AuthResult = { user: { name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] } };
  if (ctx.audiences) r.audiences = [...ctx.audiences];
  return r;
};

// ── token cache ────────────────────────────────────────────────────────────

interface CacheRecord {
  expires: number;
  result: AuthResult | null;
  error?: Error;
}

/** Kubernetes' cached token authenticator: results by HMAC(token, audiences), successes for successTTL, failures for failureTTL. */
function cachedTokens(auth: TokenAuth, successTTL: number, failureTTL: number, now: () => number, maxEntries = 4096): TokenAuth {
  if (successTTL <= 0 && failureTTL <= 0) return auth;
  const secret = randomBytes(32);
  const cache = new Map<string, CacheRecord>();
  const inflight = new Map<string, Promise<CacheRecord>>();
  const keyOf = (token: string, auds: string[] | undefined) => {
    const h = createHash('sha256').update(secret);
    const parts = [token, ...(auds ?? [])];
    for (const p of parts) h.update(String(Buffer.byteLength(p)) + ':').update(p);
    h.update(auds ? 'a' : 'n');
    return h.digest('base64');
  };
  const record = async (token: string, auds: string[] | undefined): Promise<CacheRecord> => {
    try {
      const r = await auth(token, auds);
      return { expires: 0, result: r };
    } catch (e) {
      return { expires: 0, result: null, error: asError(e) };
    }
  };
  return async (token, auds) => {
    const key = keyOf(token, auds);
    const t = now();
    let rec = cache.get(key);
    if (rec && rec.expires <= t) {
      cache.delete(key);
      rec = undefined;
    }
    if (!rec) {
      let p = inflight.get(key);
      if (!p) {
        p = record(token, auds).finally(() => inflight.delete(key));
        inflight.set(key, p);
      }
      rec = await p;
      const ok = !!rec.result && !rec.error;
      const ttl = ok ? successTTL : failureTTL;
      if (ttl > 0 && !cache.has(key)) {
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
        cache.set(key, { ...rec, expires: now() + ttl });
      }
    }
    if (rec.error) throw rec.error;
    return rec.result ? { ...rec.result, user: cloneUser(rec.result.user), audiences: rec.result.audiences && [...rec.result.audiences] } : null;
  };
}

// ── the chain ──────────────────────────────────────────────────────────────

export interface ServiceAccountAuthOptions {
  /** --service-account-issuer: accepted issuers (the first signs) */
  issuers: string[];
  /** --service-account-key-file keys (private keys are reduced to their public keys) */
  publicKeys: KeyObject[];
  /** --service-account-lookup (default true): legacy tokens are checked against their Secret */
  lookup?: boolean;
  reader: ObjectReader;
  markLegacyTokenUsed?: (secret: any, date: string) => void;
}

export interface RequestHeaderOptions {
  pool: CertPool;
  allowedNames?: string[];
  usernameHeaders?: string[];
  uidHeaders?: string[];
  groupHeaders?: string[];
  extraHeaderPrefixes?: string[];
}

export interface AuthenticationOptions {
  /** --anonymous-auth (default true) */
  anonymous?: boolean;
  /** --client-ca-file (Keelson adds its own cluster CA) */
  clientCA?: CertPool;
  /** AllowParsingUserUIDFromCertAuth (default true, as in Kubernetes 1.33) */
  parseCertUID?: boolean;
  requestHeader?: RequestHeaderOptions;
  /** --token-auth-file */
  tokenFile?: StaticTokenAuthenticator;
  serviceAccounts?: ServiceAccountAuthOptions;
  /** --api-audiences; by default the service account issuers */
  apiAudiences?: string[];
  /** tokens of the API server's own loopback clients (the privileged loopback token) */
  loopbackTokens?: Map<string, UserInfo>;
  /** Kubernetes: 10 s */
  tokenSuccessCacheTTLMs?: number;
  /** Kubernetes: 0 (failures are not cached) */
  tokenFailureCacheTTLMs?: number;
  /** called with the reason a request was refused (Kubernetes logs "Unable to authenticate the request") */
  onError?: (err: Error) => void;
  now?: () => number;
}

export interface TokenReviewUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** TokenReview status as Kubernetes fills it (empty fields omitted). */
export interface TokenReviewStatus {
  authenticated?: boolean;
  user: TokenReviewUser;
  audiences?: string[];
  error?: string;
}

export interface RequestAuthenticator {
  /**
   * The user of a request, with the audiences it authenticated for; null when the request is
   * refused (bad credentials of any kind, or none while anonymous requests are off): answer 401.
   * Never throws. A request answered from its connection's kept result is answered at once
   * (no promise).
   */
  (req: AuthnRequest): (AuthResult & { warnings?: string[] }) | null | Promise<(AuthResult & { warnings?: string[] }) | null>;
  /**
   * TokenReview: authenticates `token` as a bearer token of a request for `audiences` (the
   * review's spec.audiences; the API audiences when empty) and answers its status. Throws a 500
   * StatusError ("Internal error occurred: error validating audiences") when an authenticator
   * answers for none of the audiences asked, as Kubernetes does.
   */
  authenticateToken(token: string, audiences?: string[]): Promise<TokenReviewStatus>;
  /** the API audiences in effect (--api-audiences, else the issuers) */
  readonly apiAudiences: string[];
  /** the request headers a successful authentication should remove (front-proxy identity headers, Authorization) */
  readonly credentialHeaders: { names: string[]; prefixes: string[] };
}

/** TokenReview's answer when an authenticator answered for none of the audiences asked (500, as Kubernetes' badAuthenticatorAuds). */
export function audienceValidationError(): StatusError {
  return errors.internal(new Error('error validating audiences'));
}

function acceptableAudiences(api: string[], got: string[] | undefined): boolean {
  if (!api.length || !got || !got.length) return true;
  return intersect(api, got).length > 0;
}

/** Builds the request authenticator of the given options (see the top of this file). */
export function buildAuthenticator(opts: AuthenticationOptions): RequestAuthenticator {
  const now = opts.now ?? Date.now;
  const issuers = opts.serviceAccounts?.issuers ?? [];
  const apiAudiences = opts.apiAudiences && opts.apiAudiences.length ? [...opts.apiAudiences] : [...issuers];

  const requestAuths: RequestAuth[] = [];
  const credentialHeaders = {
    names: ['authorization', 'x-remote-user', 'x-remote-uid', 'x-remote-group'],
    prefixes: ['x-remote-extra-'],
  };
  if (opts.requestHeader) {
    const rh = opts.requestHeader;
    const a = new RequestHeaderAuthenticator({
      pool: rh.pool,
      allowedNames: rh.allowedNames ?? [],
      usernameHeaders: rh.usernameHeaders ?? [],
      uidHeaders: rh.uidHeaders ?? [],
      groupHeaders: rh.groupHeaders ?? [],
      extraHeaderPrefixes: rh.extraHeaderPrefixes ?? [],
      now,
    });
    credentialHeaders.names.push(...a.headers.names.map((n) => n.trim().toLowerCase()));
    credentialHeaders.prefixes.push(...a.headers.prefixes.map((n) => n.trim().toLowerCase()));
    requestAuths.push(audienceAgnostic(apiAudiences, (req) => a.authenticate(req)));
  }
  let x509: X509Authenticator | undefined;
  if (opts.clientCA) {
    const a = new X509Authenticator(opts.clientCA, { parseUID: opts.parseCertUID !== false, now });
    x509 = a;
    requestAuths.push((req) => a.authenticate(req));
  }
  const tokenAuths: TokenAuth[] = [];
  if (opts.tokenFile) {
    const tf = opts.tokenFile;
    tokenAuths.push(audienceAgnosticToken(apiAudiences, (t) => tf.authenticateToken(t)));
  }
  if (opts.serviceAccounts) {
    const sa = opts.serviceAccounts;
    const keys = new PublicKeySet(sa.publicKeys);
    const legacy = new LegacyServiceAccountTokenAuthenticator({ keys, implicitAudiences: apiAudiences, lookup: sa.lookup, reader: sa.reader, markLegacyTokenUsed: sa.markLegacyTokenUsed, now });
    tokenAuths.push((t, auds) => legacy.authenticateToken(t, auds));
    if (sa.issuers.length) {
      const bound = new ServiceAccountTokenAuthenticator({ issuers: sa.issuers, keys, implicitAudiences: apiAudiences, reader: sa.reader, now });
      tokenAuths.push((t, auds) => bound.authenticateToken(t, auds));
    }
  }
  if (tokenAuths.length) {
    const tokens = cachedTokens(tokenUnion(tokenAuths), opts.tokenSuccessCacheTTLMs ?? 10_000, opts.tokenFailureCacheTTLMs ?? 0, now);
    requestAuths.push(bearer(tokens), websocketProtocol(tokens));
  }

  let main: RequestAuth | undefined;
  if (requestAuths.length) {
    main = withAuthenticatedGroup(union(requestAuths));
    if (opts.anonymous !== false) main = union([main, anonymousAuth], true);
  } else if (opts.anonymous !== false) {
    main = anonymousAuth;
  }
  // the loopback token authenticator sits in front of everything, as in kube-apiserver: it
  // answers "invalid bearer token" for every other token, which is why Kubernetes' messages for
  // rejected tokens read "[invalid bearer token, <reason>]"
  const loopbackUsers = opts.loopbackTokens ?? new Map<string, UserInfo>();
  const loopback = bearer(
    audienceAgnosticToken(apiAudiences, (t) => {
      const u = loopbackUsers.get(t);
      return u ? { user: cloneUser(u) } : null;
    }),
  );
  const chain: RequestAuth = main ? union([loopback, main]) : loopback;

  const run = async (req: AuthnRequest, audiences: string[] | undefined): Promise<{ result: AuthResult | null; error?: Error; warnings: string[] }> => {
    const ctx: RequestContext = { audiences, warnings: [] };
    try {
      const result = await chain(req, ctx);
      return { result, warnings: ctx.warnings };
    } catch (e) {
      return { result: null, error: asError(e), warnings: ctx.warnings };
    }
  };

  // A request that carries no credential in its headers is authenticated by its connection alone
  // (its client certificate, or none: anonymous), so the answer is kept per connection for as long
  // as the certificate's verification holds, and the chain is not walked again for each request
  // of a keep-alive connection or HTTP/2 session.
  // (an array: a Set's iterator is an allocation per request)
  const credentialNames = [...new Set([...credentialHeaders.names, 'sec-websocket-protocol'])];
  const carriesCredentials = (req: AuthnRequest): boolean => {
    const h = req.headers;
    for (let i = 0; i < credentialNames.length; i++) if (h[credentialNames[i]!] !== undefined) return true;
    if (credentialHeaders.prefixes.length) {
      for (const k in h) if (credentialHeaders.prefixes.some((p) => k.startsWith(p))) return true;
    }
    return false;
  };
  const byConnection = new WeakMap<object, { until: number; result: AuthResult }>();
  // the kept answer is shared by the connection's requests: frozen, so that nothing can change it
  const frozen = (r: AuthResult): AuthResult => {
    const u = cloneUser(r.user);
    Object.freeze(u.groups);
    if (u.extra) {
      for (const v of Object.values(u.extra)) Object.freeze(v);
      Object.freeze(u.extra);
    }
    const out: AuthResult = { user: Object.freeze(u) };
    if (r.audiences) out.audiences = Object.freeze([...r.audiences]) as string[];
    return Object.freeze(out);
  };

  const authenticate = (req: AuthnRequest): AuthResult | null | Promise<AuthResult | null> => {
    const sock = req.socket as object | undefined;
    const connectionOnly = x509 !== undefined && sock !== undefined && !carriesCredentials(req);
    if (connectionOnly) {
      const hit = byConnection.get(sock);
      if (hit && hit.until > now()) return hit.result;
    }
    return authenticateChain(req, sock, connectionOnly);
  };

  const authenticateChain = async (req: AuthnRequest, sock: object | undefined, connectionOnly: boolean): Promise<AuthResult | null> => {
    const { result, error, warnings } = await run(req, apiAudiences.length ? apiAudiences : undefined);
    if (!result) {
      if (error) opts.onError?.(error);
      return null;
    }
    if (!acceptableAudiences(apiAudiences, result.audiences)) {
      opts.onError?.(new AuthenticationError(`unable to match the audience: ${JSON.stringify(result.audiences)} , accepted: ${JSON.stringify(apiAudiences)}`));
      return null;
    }
    const all = [...new Set([...warnings, ...(result.warnings ?? [])])];
    const out: AuthResult = { user: result.user };
    if (result.audiences) out.audiences = result.audiences;
    if (all.length) out.warnings = all;
    else if (connectionOnly && sock) {
      const until = x509!.validUntil(sock);
      if (until > now()) byConnection.set(sock, { until, result: frozen(out) });
    }
    return out;
  };

  const authenticateToken = async (token: string, audiences?: string[]): Promise<TokenReviewStatus> => {
    const auds = audiences && audiences.length ? audiences : apiAudiences;
    const { result, error } = await run(syntheticRequest({ authorization: `Bearer ${token}` }), auds.length ? auds : undefined);
    const status: TokenReviewStatus = { user: {} };
    if (result) status.authenticated = true;
    if (error && error.message) status.error = error.message;
    if (auds.length && result && intersect(auds, result.audiences ?? []).length === 0) throw audienceValidationError();
    if (result) {
      const u = result.user;
      const user: TokenReviewUser = {};
      if (u.name) user.username = u.name;
      if (u.uid) user.uid = u.uid;
      if (u.groups.length) user.groups = [...u.groups];
      if (u.extra && Object.keys(u.extra).length) user.extra = Object.fromEntries(Object.keys(u.extra).sort().map((k) => [k, [...u.extra![k]!]]));
      status.user = user;
      if (result.audiences?.length) status.audiences = [...result.audiences];
    }
    return status;
  };

  return Object.assign(authenticate, { authenticateToken, apiAudiences, credentialHeaders });
}

// ── from flags ─────────────────────────────────────────────────────────────

/** kube-apiserver's authentication flags, by their names (see the report of issue 5 for their declaration). */
export interface AuthenticationFlags {
  /** --anonymous-auth, default true */
  anonymousAuth: boolean;
  /** --client-ca-file */
  clientCAFile: string;
  /** --token-auth-file */
  tokenAuthFile: string;
  /** --service-account-key-file (stringArray) */
  serviceAccountKeyFiles: string[];
  /** --service-account-signing-key-file */
  serviceAccountSigningKeyFile: string;
  /** --service-account-issuer (stringArray) */
  serviceAccountIssuers: string[];
  /** --service-account-jwks-uri: the key set's URI in the issuer discovery document */
  serviceAccountJWKSURI: string;
  /** --api-audiences (strings) */
  apiAudiences: string[];
  /** --service-account-lookup, default true */
  serviceAccountLookup: boolean;
  /** --service-account-max-token-expiration (ms; 0 = none) */
  serviceAccountMaxTokenExpiration: number;
  /** --service-account-extend-token-expiration, default true */
  serviceAccountExtendTokenExpiration: boolean;
  /** --requestheader-client-ca-file */
  requestheaderClientCAFile: string;
  /** --requestheader-allowed-names */
  requestheaderAllowedNames: string[];
  /** --requestheader-username-headers */
  requestheaderUsernameHeaders: string[];
  /** --requestheader-uid-headers */
  requestheaderUIDHeaders: string[];
  /** --requestheader-group-headers */
  requestheaderGroupHeaders: string[];
  /** --requestheader-extra-headers-prefix */
  requestheaderExtraHeadersPrefix: string[];
}

export function defaultAuthenticationFlags(): AuthenticationFlags {
  return {
    anonymousAuth: true,
    clientCAFile: '',
    tokenAuthFile: '',
    serviceAccountKeyFiles: [],
    serviceAccountSigningKeyFile: '',
    serviceAccountIssuers: [],
    serviceAccountJWKSURI: '',
    apiAudiences: [],
    serviceAccountLookup: true,
    serviceAccountMaxTokenExpiration: 0,
    serviceAccountExtendTokenExpiration: true,
    requestheaderClientCAFile: '',
    requestheaderAllowedNames: [],
    requestheaderUsernameHeaders: ['X-Remote-User'],
    requestheaderUIDHeaders: [],
    requestheaderGroupHeaders: ['X-Remote-Group'],
    requestheaderExtraHeadersPrefix: ['X-Remote-Extra-'],
  };
}

function blank(list: string[]): boolean {
  return list.some((h) => h.trim() === '');
}

/**
 * kube-apiserver's checks of the authentication flags, with its messages (an empty list when
 * they are fine). `gates` is the feature gate state (RemoteRequestHeaderUID).
 */
export function validateAuthenticationFlags(f: AuthenticationFlags, gates: { RemoteRequestHeaderUID?: boolean } = {}): string[] {
  const errs: string[] = [];
  const seen = new Set<string>();
  for (const iss of f.serviceAccountIssuers) {
    if (iss.includes(':')) {
      try {
        // Go's url.Parse accepts far more than WHATWG's URL; only reject what both reject
        if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(iss) || iss.startsWith('/')) new URL(iss, 'http://localhost');
      } catch (e) {
        errs.push(`service-account-issuer ${JSON.stringify(iss)} contained a ':' but was not a valid URL: ${(e as Error).message}`);
        continue;
      }
    }
    if (iss === '') {
      errs.push('service-account-issuer should not be an empty string');
      continue;
    }
    if (seen.has(iss)) {
      errs.push(`service-account-issuer ${JSON.stringify(iss)} is already specified`);
      continue;
    }
    seen.add(iss);
  }
  if (f.serviceAccountJWKSURI) {
    if (!f.serviceAccountIssuers.length) errs.push('service-account-jwks-uri requires service-account-issuer');
    let scheme = '';
    try {
      scheme = new URL(f.serviceAccountJWKSURI).protocol.replace(/:$/, '');
    } catch {
      scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(f.serviceAccountJWKSURI)?.[1]?.toLowerCase() ?? '';
    }
    if (scheme !== 'https') errs.push(`service-account-jwks-uri requires https scheme, parsed as: ${f.serviceAccountJWKSURI}`);
  }
  if (f.serviceAccountMaxTokenExpiration !== 0) {
    const ms = f.serviceAccountMaxTokenExpiration;
    if (ms < 3_600_000 || ms > 2 ** 32 * 1000) errs.push('the service-account-max-token-expiration must be between 1 hour and 2^32 seconds');
  }
  if (blank(f.requestheaderUsernameHeaders)) errs.push('empty value in "requestheader-username-headers"');
  if (blank(f.requestheaderGroupHeaders)) errs.push('empty value in "requestheader-group-headers"');
  if (blank(f.requestheaderExtraHeadersPrefix)) errs.push('empty value in "requestheader-extra-headers-prefix"');
  if (blank(f.requestheaderAllowedNames)) errs.push('empty value in "requestheader-allowed-names"');
  if (!gates.RemoteRequestHeaderUID) {
    if (f.requestheaderUIDHeaders.length) errs.push('--requestheader-uid-headers requires the "RemoteRequestHeaderUID" feature to be enabled');
  } else {
    if (blank(f.requestheaderUIDHeaders)) errs.push('empty value in "requestheader-uid-headers"');
    if (f.requestheaderUIDHeaders.length && !f.requestheaderUIDHeaders.some((h) => h.toLowerCase() === 'x-remote-uid')) {
      errs.push('--requestheader-uid-headers is set without specifying the standard X-Remote-Uid header - API aggregation will not work');
    }
  }
  if (f.clientCAFile && f.requestheaderClientCAFile && f.requestheaderAllowedNames.length === 0) {
    try {
      const a = loadCertPool(f.clientCAFile);
      const b = loadCertPool(f.requestheaderClientCAFile);
      if (a.certs.some((c) => b.has(c))) {
        errs.push('--requestheader-client-ca-file and --client-ca-file contain overlapping certificates; --requestheader-allowed-names must be specified to ensure regular client certificates cannot set authenticating proxy headers for arbitrary users');
      }
    } catch {
      /* unreadable files are reported when they are loaded */
    }
  }
  return errs;
}

/** kube-apiserver's warnings for request-header flags without the standard headers. */
export function authenticationFlagWarnings(f: AuthenticationFlags): string[] {
  const w: string[] = [];
  const has = (l: string[], h: string) => l.some((x) => x.toLowerCase() === h.toLowerCase());
  if (f.requestheaderUsernameHeaders.length && !has(f.requestheaderUsernameHeaders, 'X-Remote-User')) w.push('--requestheader-username-headers is set without specifying the standard X-Remote-User header - API aggregation will not work');
  if (f.requestheaderGroupHeaders.length && !has(f.requestheaderGroupHeaders, 'X-Remote-Group')) w.push('--requestheader-group-headers is set without specifying the standard X-Remote-Group header - API aggregation will not work');
  if (f.requestheaderExtraHeadersPrefix.length && !has(f.requestheaderExtraHeadersPrefix, 'X-Remote-Extra-')) w.push('--requestheader-extra-headers-prefix is set without specifying the standard X-Remote-Extra- header prefix - API aggregation will not work');
  return w;
}

export interface FromFlagsDeps {
  reader: ObjectReader;
  /** CA certificates trusted for client certificates besides --client-ca-file (Keelson's cluster CA) */
  extraClientCAs?: CertPool;
  /** keys to verify with when --service-account-key-file is not given (the signing key, a generated key) */
  defaultServiceAccountKeys?: KeyObject[];
  gates?: { AllowParsingUserUIDFromCertAuth?: boolean; RemoteRequestHeaderUID?: boolean };
  warn?: (msg: string) => void;
  onError?: (err: Error) => void;
  markLegacyTokenUsed?: (secret: any, date: string) => void;
  loopbackTokens?: Map<string, UserInfo>;
}

/** the keys service account tokens are verified with: --service-account-key-file's, else the defaults (the signing key's) */
export function serviceAccountVerificationKeys(f: Pick<AuthenticationFlags, 'serviceAccountKeyFiles'>, defaults: KeyObject[]): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const file of f.serviceAccountKeyFiles) keys.push(...publicKeysFromFile(file));
  return keys.length ? keys : defaults;
}

/** Loads the files the flags name and builds the chain. Throws an Error with Kubernetes' wording for unreadable or malformed files. */
export function buildAuthenticatorFromFlags(f: AuthenticationFlags, deps: FromFlagsDeps): RequestAuthenticator {
  let clientCA: CertPool | undefined = deps.extraClientCAs;
  if (f.clientCAFile) {
    const pool = loadCertPool(f.clientCAFile, 'client CA file');
    clientCA = clientCA ? mergePools(clientCA, pool) : pool;
  }
  const tokenFile = f.tokenAuthFile ? StaticTokenAuthenticator.fromFile(f.tokenAuthFile, deps.warn) : undefined;
  const keys = serviceAccountVerificationKeys(f, deps.defaultServiceAccountKeys ?? []);
  const requestHeader: RequestHeaderOptions | undefined = f.requestheaderClientCAFile
    ? {
        pool: loadCertPool(f.requestheaderClientCAFile, 'request-header CA file'),
        allowedNames: f.requestheaderAllowedNames,
        usernameHeaders: f.requestheaderUsernameHeaders,
        uidHeaders: deps.gates?.RemoteRequestHeaderUID ? f.requestheaderUIDHeaders : [],
        groupHeaders: f.requestheaderGroupHeaders,
        extraHeaderPrefixes: f.requestheaderExtraHeadersPrefix,
      }
    : undefined;
  return buildAuthenticator({
    anonymous: f.anonymousAuth,
    clientCA,
    parseCertUID: deps.gates?.AllowParsingUserUIDFromCertAuth !== false,
    requestHeader,
    tokenFile,
    serviceAccounts: keys.length ? { issuers: f.serviceAccountIssuers, publicKeys: keys, lookup: f.serviceAccountLookup, reader: deps.reader, markLegacyTokenUsed: deps.markLegacyTokenUsed } : undefined,
    apiAudiences: f.apiAudiences,
    loopbackTokens: deps.loopbackTokens,
    onError: deps.onError,
  });
}

function mergePools(a: CertPool, b: CertPool): CertPool {
  const all = [...a.certs];
  for (const c of b.certs) if (!a.has(c)) all.push(c);
  return new CertPool(all);
}
