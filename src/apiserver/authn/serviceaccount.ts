// Service account tokens: JWTs the API server signs (TokenRequest, projected volumes) and
// verifies, and the legacy tokens of kubernetes.io/service-account-token Secrets.
//
// Bound tokens carry Kubernetes 1.33's claims, encoded as go-jose encodes them (every object's
// keys sorted, `aud` always an array):
//   aud, exp, iat, iss, jti,
//   kubernetes.io: { namespace, node?: {name, uid?}, pod?: {name, uid}, secret?: {name, uid},
//                    serviceaccount: {name, uid}, warnafter? },
//   nbf, sub = system:serviceaccount:<namespace>:<name>
// and are accepted when the signature verifies with one of the --service-account-key-file keys
// (the one named by `kid` when the header has one), `iss` is one of the --service-account-issuer
// values, `aud` meets the requested audiences (the API audiences by default), the times hold
// within the one-minute leeway (nbf, exp, iat), and the service account and the bound pod,
// secret or node still exist with the same uid (deleted more than a minute ago counts as gone).
// Legacy tokens (iss `kubernetes/serviceaccount`, no exp) are accepted while their Secret still
// holds them and their service account is the one they name.
import { createPublicKey, randomUUID, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { UserInfo } from '../authz.js';
import { aggregate, AuthenticationError } from './errors.js';
import { b64urlDecodeStrict, keyIDFromPublicKey, parseCompact, signCompact, verifyJWS, type PublicKeyEntry } from './jose.js';
import type { AuthResult, TokenAuthenticator } from './types.js';
import { CREDENTIAL_ID_KEY } from './x509.js';
import { goJSON, goQuote, goQuoteList } from '../../machinery/gostrings.js';

export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
export const SERVICE_ACCOUNT_USERNAME_PREFIX = 'system:serviceaccount:';
export const ALL_SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';
export const SERVICE_ACCOUNT_GROUP_PREFIX = 'system:serviceaccounts:';
export const POD_NAME_KEY = 'authentication.kubernetes.io/pod-name';
export const POD_UID_KEY = 'authentication.kubernetes.io/pod-uid';
export const NODE_NAME_KEY = 'authentication.kubernetes.io/node-name';
export const NODE_UID_KEY = 'authentication.kubernetes.io/node-uid';
export const LEGACY_TOKEN_INVALID_SINCE_LABEL = 'kubernetes.io/legacy-token-invalid-since';
export const LEGACY_TOKEN_LAST_USED_LABEL = 'kubernetes.io/legacy-token-last-used';
/** go-jose's default leeway for nbf, exp and iat, which Kubernetes also allows deleted objects */
export const LEEWAY_MS = 60_000;
/** a projected token of this lifetime is a "warn only" token that is extended (see tokenrequest.ts) */
export const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7;
export const EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60;

// ── the objects tokens are checked against ─────────────────────────────────

export type ReaderResource = 'serviceaccounts' | 'secrets' | 'pods' | 'nodes';

/**
 * Looks up an object of the API (as its JSON form: metadata.uid, metadata.deletionTimestamp,
 * spec, data...) for the token checks: `namespace` is '' for nodes. Undefined when it does not
 * exist. The API server passes a reader over its stores (the watch cache is fine: Kubernetes
 * reads these through informers too).
 */
export type ObjectReader = (resource: ReaderResource, namespace: string, name: string) => any | undefined | Promise<any | undefined>;

// ── user names ─────────────────────────────────────────────────────────────

export function makeUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USERNAME_PREFIX}${namespace}:${name}`;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Kubernetes' SplitUsername: [namespace, name] of `system:serviceaccount:<ns>:<name>`, undefined when not one. */
export function splitUsername(username: string): [string, string] | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_USERNAME_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_USERNAME_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [ns, name] = parts as [string, string];
  if (ns.length > 63 || !DNS1123_LABEL.test(ns)) return undefined;
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) return undefined;
  return [ns, name];
}

export function makeGroupNames(namespace: string): string[] {
  return [ALL_SERVICE_ACCOUNTS_GROUP, SERVICE_ACCOUNT_GROUP_PREFIX + namespace];
}

export interface ServiceAccountInfo {
  namespace: string;
  name: string;
  uid: string;
  podName?: string;
  podUID?: string;
  nodeName?: string;
  nodeUID?: string;
  credentialID?: string;
}

/** The user of a service account token (before system:authenticated is added by the chain). */
export function serviceAccountUser(sa: ServiceAccountInfo): UserInfo {
  const user: UserInfo = { name: makeUsername(sa.namespace, sa.name), groups: makeGroupNames(sa.namespace) };
  if (sa.uid) user.uid = sa.uid;
  const extra: Record<string, string[]> = {};
  if (sa.credentialID) extra[CREDENTIAL_ID_KEY] = [sa.credentialID];
  if (sa.nodeName) {
    extra[NODE_NAME_KEY] = [sa.nodeName];
    if (sa.nodeUID) extra[NODE_UID_KEY] = [sa.nodeUID];
  }
  if (sa.podName && sa.podUID) {
    extra[POD_NAME_KEY] = [sa.podName];
    extra[POD_UID_KEY] = [sa.podUID];
  }
  if (Object.keys(extra).length) user.extra = extra;
  return user;
}

// ── claims ─────────────────────────────────────────────────────────────────

export interface ObjectRef {
  name: string;
  uid?: string;
}

export interface BoundClaimsInput {
  issuer: string;
  serviceAccount: { namespace: string; name: string; uid: string };
  audiences: string[];
  expirationSeconds: number;
  /** seconds after issue when a projected "warn only" token starts being reported as stale */
  warnAfterSeconds?: number;
  pod?: ObjectRef;
  secret?: ObjectRef;
  node?: ObjectRef;
  /** issue time (ms); now by default */
  now?: number;
  /** the token's id; a random UUID by default */
  jti?: string;
}

function ref(r: ObjectRef): Record<string, string> {
  const o: Record<string, string> = {};
  if (r.name) o.name = r.name;
  if (r.uid) o.uid = r.uid;
  return o;
}

/**
 * The claims of a bound token, with the keys in go-jose's (sorted) order. A token is bound to at
 * most one of pod and secret; a pod-bound token also names the pod's node when known.
 */
export function boundClaims(c: BoundClaimsInput): Record<string, unknown> {
  if (c.secret && (c.pod || c.node)) throw new Error('internal error, token can only be bound to one object type');
  const now = Math.floor((c.now ?? Date.now()) / 1000);
  const k8s: Record<string, unknown> = {};
  if (c.serviceAccount.namespace) k8s.namespace = c.serviceAccount.namespace;
  if (c.node) k8s.node = ref(c.node);
  if (c.pod) k8s.pod = ref(c.pod);
  if (c.secret) k8s.secret = ref(c.secret);
  k8s.serviceaccount = ref({ name: c.serviceAccount.name, uid: c.serviceAccount.uid });
  if (c.warnAfterSeconds) k8s.warnafter = now + c.warnAfterSeconds;
  const claims: Record<string, unknown> = {};
  if (c.audiences.length) claims.aud = [...c.audiences];
  claims.exp = now + c.expirationSeconds;
  claims.iat = now;
  if (c.issuer) claims.iss = c.issuer;
  claims.jti = c.jti ?? randomUUID();
  claims['kubernetes.io'] = k8s;
  claims.nbf = now;
  claims.sub = makeUsername(c.serviceAccount.namespace, c.serviceAccount.name);
  return claims;
}

/** The claims of a legacy Secret-based token, in go-jose's order. */
export function legacyClaims(sa: { namespace: string; name: string; uid: string }, secretName: string): Record<string, unknown> {
  return {
    iss: LEGACY_ISSUER,
    'kubernetes.io/serviceaccount/namespace': sa.namespace,
    'kubernetes.io/serviceaccount/secret.name': secretName,
    'kubernetes.io/serviceaccount/service-account.name': sa.name,
    'kubernetes.io/serviceaccount/service-account.uid': sa.uid,
    sub: makeUsername(sa.namespace, sa.name),
  };
}

/** A signer of service account tokens: the first --service-account-issuer and the --service-account-signing-key-file key. */
export interface TokenSigner {
  issuer: string;
  key: KeyObject;
  keyID: string;
}

export function newTokenSigner(issuer: string, privateKey: KeyObject): TokenSigner {
  if (privateKey.type !== 'private') throw new Error('the service account signing key must be a private key');
  return { issuer, key: privateKey, keyID: keyIDFromPublicKey(privateKey) };
}

/** Signs claims as go-jose does for Kubernetes: header {alg, kid}, payload in Go's JSON (encoding/json of the claims, maps: keys sorted). */
export function signToken(signer: TokenSigner, claims: Record<string, unknown>): string {
  return signCompact(signer.key, goJSON(claims), signer.keyID);
}

// ── verification ───────────────────────────────────────────────────────────

/** The public keys tokens are verified with, by key id. */
export class PublicKeySet {
  readonly all: PublicKeyEntry[];
  private readonly byID = new Map<string, PublicKeyEntry[]>();
  constructor(keys: KeyObject[]) {
    this.all = keys.map((k) => ({ key: k.type === 'private' ? createPublicKey(k) : k, keyID: keyIDFromPublicKey(k) }));
    for (const e of this.all) this.byID.set(e.keyID, [...(this.byID.get(e.keyID) ?? []), e]);
  }
  get(kid: string): PublicKeyEntry[] {
    return kid ? (this.byID.get(kid) ?? []) : this.all;
  }
}

/**
 * hasCorrectIssuer: the token is a compact JWT (not JSON) whose unverified payload's `iss` (read
 * as Go's encoding/json reads it, so case-insensitively) is one of `issuers`.
 */
export function hasIssuer(token: string, issuers: Set<string>): boolean {
  if (token.trim().startsWith('{')) return false;
  const parts = token.split('.');
  if (parts.length !== 3) return false;
  const payload = b64urlDecodeStrict(parts[1]!);
  if (!payload) return false;
  let obj: unknown;
  try {
    obj = JSON.parse(payload.toString('utf8'));
  } catch {
    return false;
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return false;
  let iss = '';
  let exact = false;
  for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
    const isExact = k === 'iss';
    if (!isExact && (exact || k.toLowerCase() !== 'iss')) continue;
    if (v === null) continue;
    if (typeof v !== 'string') return false;
    iss = v;
    if (isExact) exact = true;
  }
  return issuers.has(iss);
}

interface PublicClaims {
  iss: string;
  sub: string;
  aud: string[];
  exp?: number;
  nbf?: number;
  iat?: number;
  jti: string;
}

function typeErr(v: unknown, want: string): Error {
  const kind = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v;
  return new Error(`json: cannot unmarshal ${kind} into Go value of type ${want}`);
}

function str(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw typeErr(v, 'string');
  return v;
}

function numericDate(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number') throw new Error('go-jose/go-jose/jwt: expected number value to unmarshal NumericDate');
  return Math.trunc(v);
}

/** The registered claims as go-jose decodes them (case-sensitive keys, `aud` a string or an array of strings). */
function publicClaims(o: Record<string, unknown>): PublicClaims {
  let aud: string[] = [];
  if (o.aud !== undefined) {
    const a = o.aud;
    if (typeof a === 'string') aud = [a];
    else if (Array.isArray(a) && a.every((x) => typeof x === 'string')) aud = a as string[];
    else throw new Error('go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience');
  }
  return { iss: str(o.iss), sub: str(o.sub), aud, exp: numericDate(o.exp), nbf: numericDate(o.nbf), iat: numericDate(o.iat), jti: str(o.jti) };
}

function objectOrEmpty(v: unknown, want: string): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw typeErr(v, want);
  return v as Record<string, unknown>;
}

interface BoundPrivate {
  namespace: string;
  serviceaccount: { name: string; uid: string };
  pod?: { name: string; uid: string };
  secret?: { name: string; uid: string };
  node?: { name: string; uid: string };
  warnafter?: number;
}

function refClaim(v: unknown): { name: string; uid: string } | undefined {
  if (v === undefined || v === null) return undefined;
  const o = objectOrEmpty(v, 'serviceaccount.ref');
  return { name: str(o.name), uid: str(o.uid) };
}

function boundPrivate(o: Record<string, unknown>): BoundPrivate {
  const k = objectOrEmpty(o['kubernetes.io'], 'serviceaccount.kubernetes');
  const sa = refClaim(k.serviceaccount) ?? { name: '', uid: '' };
  return { namespace: str(k.namespace), serviceaccount: sa, pod: refClaim(k.pod), secret: refClaim(k.secret), node: refClaim(k.node), warnafter: numericDate(k.warnafter) };
}

interface LegacyPrivate {
  namespace: string;
  secretName: string;
  serviceAccountName: string;
  serviceAccountUID: string;
}

function legacyPrivate(o: Record<string, unknown>): LegacyPrivate {
  return {
    namespace: str(o['kubernetes.io/serviceaccount/namespace']),
    secretName: str(o['kubernetes.io/serviceaccount/secret.name']),
    serviceAccountName: str(o['kubernetes.io/serviceaccount/service-account.name']),
    serviceAccountUID: str(o['kubernetes.io/serviceaccount/service-account.uid']),
  };
}

function intersect(have: string[], want: string[]): string[] {
  return want.filter((w) => have.includes(w));
}

function deletedBefore(obj: any, limitMs: number): boolean {
  const ts = obj?.metadata?.deletionTimestamp;
  if (!ts) return false;
  const t = Date.parse(ts);
  return !Number.isNaN(t) && t < limitMs;
}

function uidOf(obj: any): string {
  return String(obj?.metadata?.uid ?? '');
}

export interface ServiceAccountTokenOptions {
  /** accepted `iss` values (--service-account-issuer) */
  issuers: string[];
  keys: PublicKeySet;
  /** the API audiences (--api-audiences, by default the issuers) */
  implicitAudiences: string[];
  reader: ObjectReader;
  now?: () => number;
}

export interface LegacyTokenOptions {
  keys: PublicKeySet;
  implicitAudiences: string[];
  /** --service-account-lookup: check the Secret and the service account (default true) */
  lookup?: boolean;
  reader: ObjectReader;
  /** called when a legacy token's Secret lacks today's kubernetes.io/legacy-token-last-used label */
  markLegacyTokenUsed?: (secret: any, date: string) => void;
  now?: () => number;
}

/** The verified claims of a token, or "not mine" (null), or an AuthenticationError. */
function verifyToken(token: string, issuers: Set<string>, keys: PublicKeySet): { payload: Record<string, unknown>; claims: PublicClaims } | null {
  if (!hasIssuer(token, issuers)) return null;
  const jws = parseCompact(token);
  if (!jws) return null;
  const candidates = keys.get(jws.kid);
  if (!candidates.length) throw new AuthenticationError('invalid signature, no keys found');
  const errs: Error[] = [];
  for (const k of candidates) {
    try {
      verifyJWS(jws, k.key);
      let obj: unknown;
      try {
        obj = JSON.parse(jws.payload.toString('utf8'));
      } catch (e) {
        throw new Error(`invalid character in JSON payload: ${(e as Error).message}`);
      }
      if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw typeErr(obj, 'jwt.Claims');
      const payload = obj as Record<string, unknown>;
      const claims = publicClaims(payload);
      if (!issuers.has(claims.iss)) throw new AuthenticationError(`token issuer ${goQuote(claims.iss)} is invalid`);
      return { payload, claims };
    } catch (e) {
      if (e instanceof AuthenticationError) throw e;
      errs.push(e as Error);
    }
  }
  throw aggregate(errs)!;
}

function checkAudiences(claims: PublicClaims, implicit: string[], requested: string[] | undefined): string[] {
  const tokenAuds = claims.aud.length ? claims.aud : implicit;
  const want = requested ?? implicit;
  const auds = intersect(tokenAuds, want);
  if (!auds.length && implicit.length) throw new AuthenticationError(`token audiences ${goQuoteList(tokenAuds)} is invalid for the target audiences ${goQuoteList(want)}`);
  return auds;
}

/** Bound service account tokens (the --service-account-issuer values). */
export class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  private readonly issuers: Set<string>;
  constructor(private readonly opts: ServiceAccountTokenOptions) {
    this.issuers = new Set(opts.issuers);
  }

  async authenticateToken(token: string, audiences?: string[]): Promise<AuthResult | null> {
    const v = verifyToken(token, this.issuers, this.opts.keys);
    if (!v) return null;
    const auds = checkAudiences(v.claims, this.opts.implicitAudiences, audiences);
    const info = await this.validate(v.claims, boundPrivate(v.payload));
    return { user: serviceAccountUser(info), audiences: auds };
  }

  private async validate(pub: PublicClaims, priv: BoundPrivate): Promise<ServiceAccountInfo> {
    const now = this.opts.now?.() ?? Date.now();
    if (pub.nbf !== undefined && now + LEEWAY_MS < pub.nbf * 1000) throw new AuthenticationError('service account token is not valid yet');
    if (pub.exp !== undefined && now - LEEWAY_MS > pub.exp * 1000) throw new AuthenticationError('service account token has expired');
    if (pub.iat !== undefined && now + LEEWAY_MS < pub.iat * 1000) throw new AuthenticationError('service account token is issued in the future');
    const limit = now - LEEWAY_MS;
    const ns = priv.namespace;
    const saRef = priv.serviceaccount;
    const read = this.opts.reader;
    const sa = await read('serviceaccounts', ns, saRef.name);
    if (!sa) throw new AuthenticationError(`serviceaccounts ${goQuote(saRef.name)} not found`);
    if (uidOf(sa) !== saRef.uid) throw new AuthenticationError(`service account UID (${uidOf(sa)}) does not match claim (${saRef.uid})`);
    if (deletedBefore(sa, limit)) throw new AuthenticationError(`service account ${ns}/${saRef.name} has been deleted`);
    if (priv.secret) {
      const secret = await read('secrets', ns, priv.secret.name);
      if (!secret) throw new AuthenticationError('service account token has been invalidated');
      if (priv.secret.uid !== uidOf(secret)) throw new AuthenticationError(`secret UID (${uidOf(secret)}) does not match service account secret ref claim (${priv.secret.uid})`);
      if (deletedBefore(secret, limit)) throw new AuthenticationError('service account token has been invalidated');
    }
    const info: ServiceAccountInfo = { namespace: ns, name: saRef.name, uid: saRef.uid };
    if (priv.pod) {
      const pod = await read('pods', ns, priv.pod.name);
      if (!pod) throw new AuthenticationError('service account token has been invalidated');
      if (priv.pod.uid !== uidOf(pod)) throw new AuthenticationError(`pod UID (${uidOf(pod)}) does not match service account pod ref claim (${priv.pod.uid})`);
      if (deletedBefore(pod, limit)) throw new AuthenticationError('service account token has been invalidated');
      info.podName = priv.pod.name;
      info.podUID = priv.pod.uid;
    }
    if (priv.node) {
      if (priv.pod) {
        // a pod-bound token names the pod's node: reported, not checked
        info.nodeName = priv.node.name;
        info.nodeUID = priv.node.uid;
      } else {
        const node = await read('nodes', '', priv.node.name);
        if (!node) throw new AuthenticationError('service account token has been invalidated');
        if (priv.node.uid !== uidOf(node)) throw new AuthenticationError(`node UID (${uidOf(node)}) does not match service account node ref claim (${priv.node.uid})`);
        if (deletedBefore(node, limit)) throw new AuthenticationError('service account token has been invalidated');
        info.nodeName = priv.node.name;
        info.nodeUID = priv.node.uid;
      }
    }
    if (pub.jti) info.credentialID = `JTI=${pub.jti}`;
    return info;
  }
}

const AUTOGENERATED_WARNING = 'Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens.';

/** Legacy tokens of kubernetes.io/service-account-token Secrets (issuer kubernetes/serviceaccount). */
export class LegacyServiceAccountTokenAuthenticator implements TokenAuthenticator {
  private readonly issuers = new Set([LEGACY_ISSUER]);
  constructor(private readonly opts: LegacyTokenOptions) {}

  async authenticateToken(token: string, audiences?: string[]): Promise<AuthResult | null> {
    const v = verifyToken(token, this.issuers, this.opts.keys);
    if (!v) return null;
    const auds = checkAudiences(v.claims, this.opts.implicitAudiences, audiences);
    const warnings: string[] = [];
    const info = await this.validate(token, v.claims, legacyPrivate(v.payload), warnings);
    const out: AuthResult = { user: serviceAccountUser(info), audiences: auds };
    if (warnings.length) out.warnings = warnings;
    return out;
  }

  private async validate(token: string, pub: PublicClaims, priv: LegacyPrivate, warnings: string[]): Promise<ServiceAccountInfo> {
    if (!pub.sub) throw new AuthenticationError('sub claim is missing');
    const ns = priv.namespace;
    if (!ns) throw new AuthenticationError('namespace claim is missing');
    if (!priv.secretName) throw new AuthenticationError('secretName claim is missing');
    if (!priv.serviceAccountName) throw new AuthenticationError('serviceAccountName claim is missing');
    if (!priv.serviceAccountUID) throw new AuthenticationError('serviceAccountUID claim is missing');
    const split = splitUsername(pub.sub);
    if (!split || split[0] !== ns || split[1] !== priv.serviceAccountName) throw new AuthenticationError('sub claim is invalid');
    if (this.opts.lookup !== false) {
      const read = this.opts.reader;
      const secret = await read('secrets', ns, priv.secretName);
      if (!secret || secret.metadata?.deletionTimestamp) throw new AuthenticationError('Token has been invalidated');
      const stored = Buffer.from(String(secret.data?.token ?? ''), 'base64');
      const given = Buffer.from(token, 'utf8');
      if (stored.length !== given.length || !timingSafeEqual(stored, given)) throw new AuthenticationError("Token does not match server's copy");
      const sa = await read('serviceaccounts', ns, priv.serviceAccountName);
      if (!sa) throw new AuthenticationError(`serviceaccounts ${goQuote(priv.serviceAccountName)} not found`);
      if (sa.metadata?.deletionTimestamp) throw new AuthenticationError(`ServiceAccount ${ns}/${priv.serviceAccountName} has been deleted`);
      if (uidOf(sa) !== priv.serviceAccountUID) throw new AuthenticationError(`ServiceAccount UID (${uidOf(sa)}) does not match claim (${priv.serviceAccountUID})`);
      const now = this.opts.now?.() ?? Date.now();
      const today = new Date(now).toISOString().slice(0, 10);
      const tomorrow = new Date(now + 86_400_000).toISOString().slice(0, 10);
      const labels = secret.metadata?.labels ?? {};
      const markUsed = () => {
        const last = labels[LEGACY_TOKEN_LAST_USED_LABEL];
        if (last !== today && last !== tomorrow) {
          try {
            this.opts.markLegacyTokenUsed?.(secret, today);
          } catch {
            /* best effort, as Kubernetes' patch */
          }
        }
      };
      if (labels[LEGACY_TOKEN_INVALID_SINCE_LABEL]) {
        markUsed();
        throw new AuthenticationError(
          `the token in secret ${ns}/${priv.secretName} for service account ${ns}/${priv.serviceAccountName} has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '${LEGACY_TOKEN_INVALID_SINCE_LABEL}' label from the secret to temporarily allow use of this token`,
        );
      }
      if ((sa.secrets ?? []).some((r: any) => r?.name === secret.metadata?.name)) warnings.push(AUTOGENERATED_WARNING);
      markUsed();
    }
    return { namespace: ns, name: priv.serviceAccountName, uid: priv.serviceAccountUID };
  }
}
