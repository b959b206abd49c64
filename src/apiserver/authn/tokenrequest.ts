// TokenRequest (POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token, what
// `kubectl create token` sends): a bound token for a service account, as Kubernetes 1.33's
// TokenREST issues it.
//
// In order: metadata.name and metadata.namespace must match the URL when given (422); the
// service account must exist (404); audiences default to the API audiences; expirationSeconds
// (default 3600) must be at least 600 and at most 2^32 (422); a boundObjectRef must name an
// existing Pod (running as this service account), Secret or Node, with the same uid when one is
// given (400, 404, 409); a lifetime over --service-account-max-token-expiration is shortened with
// a warning; a pod-bound token asking for 3607 seconds (what a projected volume asks for) for API
// audiences only is made to last a year with `warnafter` at 3607 seconds
// (--service-account-extend-token-expiration). The answer is the request with
// metadata.creationTimestamp and status {token, expirationTimestamp}.
import { rfc3339 } from '../../machinery/time.js';
import { errors, field, StatusError } from '../../machinery/errors.js';
import { OBJECT_META_ORDER, ordered } from '../../machinery/objectmeta.js';
import { EXPIRATION_EXTENSION_SECONDS, boundClaims, signToken, WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS, type ObjectReader, type ObjectRef, type TokenSigner } from './serviceaccount.js';

export const MIN_TOKEN_EXPIRATION_SECONDS = 600;
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;
const MAX_TOKEN_EXPIRATION_SECONDS = 2 ** 32;

export interface TokenRequestOptions {
  signer: TokenSigner;
  /** --api-audiences (by default the issuers): the default audiences */
  apiAudiences: string[];
  /** --service-account-max-token-expiration in seconds; 0 for none */
  maxExpirationSeconds?: number;
  /** --service-account-extend-token-expiration (default true) */
  extendExpiration?: boolean;
  /** the extended lifetime of "warn only" tokens (a year) */
  maxExtendedExpirationSeconds?: number;
  reader: ObjectReader;
  now?: () => number;
  newJTI?: () => string;
}

export interface TokenRequestResult {
  /** the TokenRequest to answer with (201) */
  object: any;
  /** Warning headers for the answer */
  warnings: string[];
  /** the token's id, for audit (authentication.kubernetes.io/issued-credential-id: JTI=<id>) */
  credentialID: string;
}

const GK = { group: 'authentication.k8s.io', name: 'TokenRequest' };


/** Go's ParseGroupVersion + FromAPIVersionAndKind: a malformed apiVersion gives an empty group and version. */
function gvkOf(apiVersion: string, kind: string): { group: string; version: string; kind: string } {
  const parts = apiVersion.split('/');
  if (apiVersion === '') return { group: '', version: '', kind };
  if (parts.length === 1) return { group: '', version: parts[0]!, kind };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]!, kind };
  return { group: '', version: '', kind };
}

function gvkString(g: { group: string; version: string; kind: string }): string {
  return `${g.group}/${g.version}, Kind=${g.kind}`;
}

/** Kubernetes' `Name parameter required.` when a bound object has no name. */
function nameRequired(): StatusError {
  return errors.badRequest('Name parameter required.');
}

/**
 * Issues the token of a TokenRequest for service account `name` in `namespace`. `body` is the
 * decoded TokenRequest (authentication.k8s.io/v1). Throws StatusErrors worded as Kubernetes'.
 */
export async function createTokenRequest(
  opts: TokenRequestOptions,
  namespace: string,
  name: string,
  body: any,
  /** the validating admission plugins, given the request as it will be issued */
  admit?: (req: any) => Promise<void>,
): Promise<TokenRequestResult> {
  const req = body && typeof body === 'object' ? structuredClone(body) : {};
  req.apiVersion = 'authentication.k8s.io/v1';
  req.kind = 'TokenRequest';
  req.metadata = req.metadata && typeof req.metadata === 'object' ? req.metadata : {};
  req.spec = req.spec && typeof req.spec === 'object' ? req.spec : {};
  if (!namespace) throw errors.badRequest('namespace is required');
  if (req.metadata.name && req.metadata.name !== name) {
    throw errors.invalid(GK, name, [field.invalid('metadata.name', req.metadata.name, 'must match the service account name if specified')]);
  }
  if (req.metadata.namespace && req.metadata.namespace !== namespace) {
    throw errors.invalid(GK, name, [field.invalid('metadata.namespace', req.metadata.namespace, 'must match the service account namespace if specified')]);
  }
  const read = opts.reader;
  const sa = await read('serviceaccounts', namespace, name);
  if (!sa) throw errors.notFound({ group: '', name: 'serviceaccounts' }, name);

  const spec = req.spec;
  if (!Array.isArray(spec.audiences) || spec.audiences.length === 0) spec.audiences = [...opts.apiAudiences];
  if (spec.expirationSeconds === undefined || spec.expirationSeconds === null) spec.expirationSeconds = DEFAULT_TOKEN_EXPIRATION_SECONDS;
  if (spec.boundObjectRef === undefined) spec.boundObjectRef = null;
  if (!req.metadata.name) req.metadata.name = sa.metadata?.name ?? name;
  if (!req.metadata.namespace) req.metadata.namespace = sa.metadata?.namespace ?? namespace;
  const now = opts.now?.() ?? Date.now();
  req.metadata.creationTimestamp = rfc3339(now);
  delete req.status;

  // (an int64: beyond 2^53 a bigint, compared and reported exactly)
  const exp0: number | bigint = typeof spec.expirationSeconds === 'bigint' ? spec.expirationSeconds : Number(spec.expirationSeconds);
  const errs = [];
  if (exp0 < MIN_TOKEN_EXPIRATION_SECONDS) errs.push(field.invalid('spec.expirationSeconds', exp0, 'may not specify a duration less than 10 minutes'));
  if (exp0 > MAX_TOKEN_EXPIRATION_SECONDS) errs.push(field.invalid('spec.expirationSeconds', exp0, 'may not specify a duration larger than 2^32 seconds'));
  if (errs.length) throw errors.invalid(GK, '', errs);
  // validating admission, after the static validation, as TokenREST.Create runs it
  if (admit) await admit(structuredClone(req));

  let pod: ObjectRef | undefined;
  let secret: ObjectRef | undefined;
  let node: ObjectRef | undefined;
  const ref = spec.boundObjectRef;
  if (ref) {
    const gvk = gvkOf(String(ref.apiVersion ?? ''), String(ref.kind ?? ''));
    const refName = String(ref.name ?? '');
    let uid = '';
    if (gvk.group === '' && gvk.kind === 'Pod') {
      if (!refName) throw nameRequired();
      const p = await read('pods', namespace, refName);
      if (!p) throw errors.notFound({ group: '', name: 'pods' }, refName);
      if (name !== (p.spec?.serviceAccountName ?? '')) {
        throw errors.badRequest(`cannot bind token for serviceaccount "${name}" to pod running with different serviceaccount name.`);
      }
      uid = String(p.metadata?.uid ?? '');
      pod = { name: p.metadata?.name ?? refName, uid };
      const nodeName = p.spec?.nodeName;
      if (nodeName) {
        const n = await read('nodes', '', nodeName);
        // an unknown node is still named, without a uid
        node = n ? { name: n.metadata?.name ?? nodeName, uid: String(n.metadata?.uid ?? '') } : { name: nodeName };
      }
    } else if (gvk.group === '' && gvk.kind === 'Node') {
      if (!refName) throw nameRequired();
      const n = await read('nodes', '', refName);
      if (!n) throw errors.notFound({ group: '', name: 'nodes' }, refName);
      uid = String(n.metadata?.uid ?? '');
      node = { name: n.metadata?.name ?? refName, uid };
    } else if (gvk.group === '' && gvk.kind === 'Secret') {
      if (!refName) throw nameRequired();
      const s = await read('secrets', namespace, refName);
      if (!s) throw errors.notFound({ group: '', name: 'secrets' }, refName);
      uid = String(s.metadata?.uid ?? '');
      secret = { name: s.metadata?.name ?? refName, uid };
    } else {
      throw errors.badRequest(`cannot bind token to object of type ${gvkString(gvk)}`);
    }
    if (ref.uid && ref.uid !== uid) {
      throw errors.conflict(
        { group: gvk.group, name: gvk.kind },
        refName,
        `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
  }

  const warnings: string[] = [];
  const max = opts.maxExpirationSeconds ?? 0;
  if (max > 0 && spec.expirationSeconds > max) {
    warnings.push(`requested expiration of ${spec.expirationSeconds} seconds shortened to ${max} seconds`);
    spec.expirationSeconds = max;
  }
  let exp = Number(spec.expirationSeconds);
  let warnAfter = 0;
  const kubeAudiences = (spec.audiences as string[]).every((a) => opts.apiAudiences.includes(a));
  if (opts.extendExpiration !== false && pod && exp === WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS && kubeAudiences) {
    warnAfter = exp;
    exp = opts.maxExtendedExpirationSeconds ?? EXPIRATION_EXTENSION_SECONDS;
  }

  const jti = opts.newJTI?.() ?? undefined;
  const claims = boundClaims({
    issuer: opts.signer.issuer,
    serviceAccount: { namespace: sa.metadata?.namespace ?? namespace, name: sa.metadata?.name ?? name, uid: String(sa.metadata?.uid ?? '') },
    audiences: spec.audiences,
    expirationSeconds: exp,
    warnAfterSeconds: warnAfter,
    pod,
    secret,
    node,
    now,
    jti,
  });
  const token = signToken(opts.signer, claims);
  req.status = { token, expirationTimestamp: rfc3339(now + Number(spec.expirationSeconds) * 1000) };
  return { object: inGoFieldOrder(req), warnings, credentialID: `JTI=${claims.jti as string}` };
}

/** the TokenRequest with its fields in the order Kubernetes encodes them (whatever order the client sent) */
function inGoFieldOrder(req: any): any {
  return {
    kind: req.kind,
    apiVersion: req.apiVersion,
    metadata: ordered(req.metadata, OBJECT_META_ORDER),
    spec: ordered(req.spec, ['audiences', 'expirationSeconds', 'boundObjectRef']),
    status: req.status,
  };
}

