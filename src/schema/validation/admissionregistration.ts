// Validation of MutatingWebhookConfiguration and ValidatingWebhookConfiguration
// (admissionregistration.k8s.io/v1), with Kubernetes 1.33's rules, paths and wording: webhook
// names, rules, policies, side effects (None or NoneOnDryRun on create; an update may keep what
// the stored object already had), timeouts, selectors, the client config (an https URL or a
// Service) and the AdmissionReview versions. matchConditions (CEL) are checked by the admission
// plugin when it compiles them, not here.
import { child, duplicate, goStrings, idx, invalid, notSupported, required, type Errs } from './errs.js';
import { arr, isDNS1035Label, isDNS1123Subdomain, isValidPortNum, validateLabelSelector } from './util.js';

export const FAILURE_POLICIES = ['Fail', 'Ignore'];
export const MATCH_POLICIES = ['Equivalent', 'Exact'];
const ALL_SIDE_EFFECTS = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const REINVOCATION = ['IfNeeded', 'Never'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

interface Options {
  /** sideEffects must be None or NoneOnDryRun (always on create) */
  noSideEffects: boolean;
  /** admissionReviewVersions must name a version this server speaks */
  knownReviewVersion: boolean;
  /** webhook names must be unique in the configuration */
  uniqueNames: boolean;
  /** label values in selectors are not checked (kept from older objects) */
  lenientSelectors: boolean;
}

const CREATE: Options = { noSideEffects: true, knownReviewVersion: true, uniqueNames: true, lenientSelectors: false };

/** utilvalidation.IsFullyQualifiedName */
function fullyQualifiedName(path: string, name: string): Errs {
  if (!name) return [required(path, '')];
  const bad = isDNS1123Subdomain(name);
  if (bad.length) return [invalid(path, name, bad.join(','))];
  if (name.split('.').length < 3) return [invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

function validateResources(resources: string[], path: string): Errs {
  const errs: Errs = [];
  if (!resources.length) errs.push(required(path, ''));
  const wildSub = new Set<string>();
  const wildRes = new Set<string>();
  let doubleWild = false;
  let singleWild = false;
  let plain = false;
  resources.forEach((rs, i) => {
    if (rs === '') {
      errs.push(required(idx(path, i), ''));
      return;
    }
    if (rs === '*/*') doubleWild = true;
    if (rs === '*') singleWild = true;
    const slash = rs.indexOf('/');
    if (slash < 0) {
      plain = rs !== '*';
      return;
    }
    const res = rs.slice(0, slash);
    const sub = rs.slice(slash + 1);
    if (wildSub.has(res)) errs.push(invalid(idx(path, i), rs, `if '${res}/*' is present, must not specify ${rs}`));
    if (wildRes.has(sub)) errs.push(invalid(idx(path, i), rs, `if '*/${sub}' is present, must not specify ${rs}`));
    if (sub === '*') wildSub.add(res);
    if (res === '*') wildRes.add(sub);
  });
  if (resources.length > 1 && doubleWild) errs.push(invalid(path, goStrings(resources), "if '*/*' is present, must not specify other resources"));
  if (singleWild && plain) errs.push(invalid(path, goStrings(resources), "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

/** validateRuleWithOperations: operations, then the rule (API groups, versions, resources with
 *  subresources, scope); shared with ValidatingAdmissionPolicy's resource rules (vap.ts) */
export function validateRule(rule: any, path: string): Errs {
  const errs: Errs = [];
  const ops = arr<string>(rule?.operations);
  if (!ops.length) errs.push(required(child(path, 'operations'), ''));
  if (ops.length > 1 && ops.includes('*')) errs.push(invalid(child(path, 'operations'), goStrings(ops, '[]admissionregistration.OperationType'), "if '*' is present, must not specify other operations"));
  ops.forEach((o, i) => {
    if (!OPERATIONS.includes(o)) errs.push(notSupported(idx(child(path, 'operations'), i), o, OPERATIONS));
  });
  const groups = arr<string>(rule?.apiGroups);
  if (!groups.length) errs.push(required(child(path, 'apiGroups'), ''));
  if (groups.length > 1 && groups.includes('*')) errs.push(invalid(child(path, 'apiGroups'), goStrings(groups), "if '*' is present, must not specify other API groups"));
  const versions = arr<string>(rule?.apiVersions);
  if (!versions.length) errs.push(required(child(path, 'apiVersions'), ''));
  if (versions.length > 1 && versions.includes('*')) errs.push(invalid(child(path, 'apiVersions'), goStrings(versions), "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(required(idx(child(path, 'apiVersions'), i), ''));
  });
  errs.push(...validateResources(arr<string>(rule?.resources), child(path, 'resources')));
  if (rule?.scope != null && !SCOPES.includes(rule.scope)) errs.push(notSupported(child(path, 'scope'), rule.scope, SCOPES));
  return errs;
}

const URL_FORM = '; desired format: https://host[/path]';

/** webhook.ValidateWebhookURL with https required */
function validateURL(path: string, raw: string): Errs {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    // what Go's url.Parse accepts and the WHATWG parser does not (no scheme, no host): report those
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(raw)?.[1]?.toLowerCase() ?? '';
    const errs: Errs = [];
    if (scheme !== 'https') errs.push(invalid(path, scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
    errs.push(invalid(path, '', `host must be specified${URL_FORM}`));
    return errs;
  }
  const errs: Errs = [];
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'https') errs.push(invalid(path, scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  if (!u.host) errs.push(invalid(path, u.host, `host must be specified${URL_FORM}`));
  if (u.username || u.password) errs.push(invalid(path, u.password ? `${u.username}:${u.password}` : u.username, 'user information is not permitted in the URL'));
  if (u.hash.length > 1 || raw.includes('#')) errs.push(invalid(path, u.hash.slice(1), 'fragments are not permitted in the URL'));
  if (u.search.length > 1) errs.push(invalid(path, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return errs;
}

/**
 * webhook.ValidateWebhookService. Kubernetes passes the service's name where the function takes
 * the namespace and the other way round, so an empty namespace is reported on `name` and an empty
 * name on `namespace`; kept as it is.
 */
function validateService(path: string, svc: any): Errs {
  const errs: Errs = [];
  const asNamespace = String(svc?.name ?? '');
  const asName = String(svc?.namespace ?? '');
  if (!asName) errs.push(required(child(path, 'name'), 'service name is required'));
  if (!asNamespace) errs.push(required(child(path, 'namespace'), 'service namespace is required'));
  const port = svc?.port ?? 443;
  const portErrs = isValidPortNum(Number(port));
  if (portErrs.length) errs.push(invalid(child(path, 'port'), port, `port is not valid: ${portErrs.join(', ')}`));
  const p = svc?.path;
  if (p == null || p === '' || p === '/') return errs;
  if (p === '//') return [...errs, invalid(child(path, 'path'), p, 'segment[0] may not be empty')];
  if (!p.startsWith('/')) errs.push(invalid(child(path, 'path'), p, "must start with a '/'"));
  let rest = p.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step: string, i: number) => {
    if (!step) {
      errs.push(invalid(child(path, 'path'), p, `segment[${i}] may not be empty`));
      return;
    }
    for (const m of isDNS1123Subdomain(step)) errs.push(invalid(child(path, 'path'), p, `segment[${i}]: ${m}`));
  });
  return errs;
}

function validateHook(hook: any, mutating: boolean, o: Options, path: string): Errs {
  const errs = fullyQualifiedName(child(path, 'name'), String(hook?.name ?? ''));
  arr(hook?.rules).forEach((r, i) => errs.push(...validateRule(r, idx(child(path, 'rules'), i))));
  if (hook?.failurePolicy != null && !FAILURE_POLICIES.includes(hook.failurePolicy)) errs.push(notSupported(child(path, 'failurePolicy'), hook.failurePolicy, FAILURE_POLICIES));
  if (hook?.matchPolicy != null && !MATCH_POLICIES.includes(hook.matchPolicy)) errs.push(notSupported(child(path, 'matchPolicy'), hook.matchPolicy, MATCH_POLICIES));
  const allowed = o.noSideEffects ? NO_SIDE_EFFECTS : ALL_SIDE_EFFECTS;
  if (hook?.sideEffects == null) errs.push(required(child(path, 'sideEffects'), `must specify one of ${allowed.join(', ')}`));
  else if (!allowed.includes(hook.sideEffects)) errs.push(notSupported(child(path, 'sideEffects'), hook.sideEffects, allowed));
  const t = hook?.timeoutSeconds;
  if (t != null && (t > 30 || t < 1)) errs.push(invalid(child(path, 'timeoutSeconds'), t, 'the timeout value must be between 1 and 30 seconds'));
  if (hook?.namespaceSelector != null) errs.push(...validateLabelSelector(hook.namespaceSelector, child(path, 'namespaceSelector'), o.lenientSelectors));
  if (hook?.objectSelector != null) errs.push(...validateLabelSelector(hook.objectSelector, child(path, 'objectSelector'), o.lenientSelectors));
  if (mutating && hook?.reinvocationPolicy != null && !REINVOCATION.includes(hook.reinvocationPolicy)) errs.push(notSupported(child(path, 'reinvocationPolicy'), hook.reinvocationPolicy, REINVOCATION));
  const cc = hook?.clientConfig ?? {};
  const hasURL = cc.url != null;
  const hasService = cc.service != null;
  if (hasURL === hasService) errs.push(required(child(path, 'clientConfig'), 'exactly one of url or service is required'));
  else if (hasURL) errs.push(...validateURL(child(path, 'clientConfig', 'url'), String(cc.url)));
  else errs.push(...validateService(child(path, 'clientConfig', 'service'), cc.service));
  return errs;
}

function validateReviewVersions(versions: string[], o: Options, path: string): Errs {
  if (!versions.length) return [required(path, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  const errs: Errs = [];
  const seen = new Set<string>();
  let known = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalid(idx(path, i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDNS1035Label(v)) errs.push(invalid(idx(path, i), v, m));
    if (REVIEW_VERSIONS.includes(v)) known = true;
  });
  if (o.knownReviewVersion && !known) errs.push(invalid(path, goStrings(versions), `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  return errs;
}

function validateConfiguration(cfg: any, mutating: boolean, o: Options): Errs {
  const errs: Errs = [];
  const names = new Set<string>();
  arr(cfg?.webhooks).forEach((hook: any, i: number) => {
    const path = idx('webhooks', i);
    errs.push(...validateHook(hook, mutating, o, path));
    errs.push(...validateReviewVersions(arr<string>(hook?.admissionReviewVersions), o, child(path, 'admissionReviewVersions')));
    const name = String(hook?.name ?? '');
    if (o.uniqueNames && name) {
      if (names.has(name)) errs.push(duplicate(child(path, 'name'), name));
      else names.add(name);
    }
  });
  return errs;
}

/** on update, what the stored configuration already has stays allowed */
function updateOptions(old: any): Options {
  const hooks = arr<any>(old?.webhooks);
  const names = hooks.map((h) => h?.name);
  return {
    noSideEffects: hooks.every((h) => NO_SIDE_EFFECTS.includes(h?.sideEffects)),
    knownReviewVersion: hooks.every((h) => {
      const vs = arr<string>(h?.admissionReviewVersions);
      return vs.length === 0 || vs.some((v) => REVIEW_VERSIONS.includes(v));
    }),
    uniqueNames: new Set(names).size === names.length,
    lenientSelectors: hooks.some((h) => validateLabelSelector(h?.namespaceSelector, 'x').length + validateLabelSelector(h?.objectSelector, 'x').length > 0),
  };
}

export function validateWebhookConfiguration(cfg: any, mutating: boolean): Errs {
  return validateConfiguration(cfg, mutating, CREATE);
}

export function validateWebhookConfigurationUpdate(cfg: any, old: any, mutating: boolean): Errs {
  return validateConfiguration(cfg, mutating, updateOptions(old));
}
