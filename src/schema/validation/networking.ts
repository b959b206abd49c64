// networking.k8s.io/v1: Ingress, IngressClass, NetworkPolicy (pkg/apis/networking/validation).
import { child, forbidden, goQuote, goStrings, GoRepr, idx, invalid, notSupported, required, tooLong, type Errs } from './errs.js';
import {
  arr,
  FIELD_IMMUTABLE,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isDomainPrefixedPath,
  isSet,
  isValidPathSegmentName,
  isValidPortName,
  isValidPortNum,
  isWildcardDNS1123Subdomain,
  obj,
  parseCIDR,
  parseIP,
  str,
  validateCIDR,
  validateLabelSelector,
  SUPPORTED_PROTOCOLS,
} from './util.js';
import { validateLoadBalancerStatus } from './service.js';

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];

// ---- NetworkPolicy ----

function validateNetworkPolicyPort(port: any, path: string): Errs {
  const errs: Errs = [];
  if (isSet(port.protocol) && !SUPPORTED_PROTOCOLS.includes(port.protocol)) errs.push(notSupported(child(path, 'protocol'), str(port.protocol), ['TCP', 'UDP', 'SCTP']));
  if (isSet(port.port)) {
    if (typeof port.port === 'number') {
      for (const m of isValidPortNum(port.port)) errs.push(invalid(child(path, 'port'), port.port, m));
      if (isSet(port.endPort)) {
        if (port.endPort < port.port) errs.push(invalid(child(path, 'endPort'), port.endPort, 'must be greater than or equal to `port`'));
        for (const m of isValidPortNum(port.endPort)) errs.push(invalid(child(path, 'endPort'), port.endPort, m));
      }
    } else {
      if (isSet(port.endPort)) errs.push(invalid(child(path, 'endPort'), port.endPort, 'may not be specified when `port` is non-numeric'));
      for (const m of isValidPortName(str(port.port))) errs.push(invalid(child(path, 'port'), str(port.port), m));
    }
  } else if (isSet(port.endPort)) errs.push(invalid(child(path, 'endPort'), port.endPort, 'may not be specified when `port` is not specified'));
  return errs;
}

function validateIPBlock(ipb: any, path: string): Errs {
  if (!str(ipb.cidr)) return [required(child(path, 'cidr'))];
  const errs = validateCIDR(child(path, 'cidr'), str(ipb.cidr));
  const outer = parseCIDR(str(ipb.cidr));
  if (!outer) return errs;
  arr<string>(ipb.except).forEach((e, i) => {
    const ep = idx(child(path, 'except'), i);
    errs.push(...validateCIDR(ep, str(e)));
    const inner = parseCIDR(str(e));
    if (!inner) return;
    const outerNet = maskIP(outer.ip, outer.bits);
    const innerNet = maskIP(inner.ip, outer.bits);
    const sameFamily = outer.v4 === inner.v4;
    if (!sameFamily || outerNet.join('.') !== innerNet.join('.') || outer.bits >= inner.bits) errs.push(invalid(ep, str(e), 'must be a strict subset of `cidr`'));
  });
  return errs;
}

function maskIP(ip: number[], bits: number): number[] {
  return ip.map((b, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    return b & ((0xff << (8 - keep)) & 0xff);
  });
}

function validateNetworkPolicyPeer(peer: any, path: string): Errs {
  const errs: Errs = [];
  let n = 0;
  if (peer.podSelector != null) {
    n++;
    errs.push(...validateLabelSelector(peer.podSelector, child(path, 'podSelector')));
  }
  if (peer.namespaceSelector != null) {
    n++;
    errs.push(...validateLabelSelector(peer.namespaceSelector, child(path, 'namespaceSelector')));
  }
  if (peer.ipBlock != null) {
    n++;
    errs.push(...validateIPBlock(peer.ipBlock, child(path, 'ipBlock')));
  }
  if (n === 0) errs.push(required(path, 'must specify a peer'));
  else if (n > 1 && peer.ipBlock != null) errs.push(forbidden(path, 'may not specify both ipBlock and another peer'));
  return errs;
}

export function validateNetworkPolicy(np: any): Errs {
  const spec = obj(np.spec);
  const errs = validateLabelSelector(spec.podSelector ?? {}, 'spec.podSelector');
  arr(spec.ingress).forEach((r: any, i: number) => {
    const p = idx('spec.ingress', i);
    arr(r?.ports).forEach((port: any, j: number) => errs.push(...validateNetworkPolicyPort(obj(port), idx(child(p, 'ports'), j))));
    arr(r?.from).forEach((peer: any, j: number) => errs.push(...validateNetworkPolicyPeer(obj(peer), idx(child(p, 'from'), j))));
  });
  arr(spec.egress).forEach((r: any, i: number) => {
    const p = idx('spec.egress', i);
    arr(r?.ports).forEach((port: any, j: number) => errs.push(...validateNetworkPolicyPort(obj(port), idx(child(p, 'ports'), j))));
    arr(r?.to).forEach((peer: any, j: number) => errs.push(...validateNetworkPolicyPeer(obj(peer), idx(child(p, 'to'), j))));
  });
  const types = arr<string>(spec.policyTypes);
  if (types.length > 2) {
    errs.push(invalid('spec.policyTypes', new GoRepr(`&${goStrings(types, '[]networking.PolicyType').repr}`), 'may not specify more than two policyTypes'));
    return errs;
  }
  types.forEach((t, i) => {
    if (t !== 'Ingress' && t !== 'Egress') errs.push(notSupported(idx('spec.policyTypes', i), t, ['Ingress', 'Egress']));
  });
  return errs;
}

// ---- Ingress ----

function validateIngressBackend(b: any, path: string): Errs {
  const errs: Errs = [];
  const hasRes = b.resource != null;
  const hasSvc = b.service != null;
  if (hasRes && hasSvc) return [invalid(path, '', 'cannot set both resource and service backends')];
  if (hasRes) {
    const r = b.resource;
    const rp = child(path, 'resource');
    if (isSet(r.apiGroup)) for (const m of isDNS1123Subdomain(str(r.apiGroup))) errs.push(invalid(child(rp, 'apiGroup'), str(r.apiGroup), m));
    if (!str(r.kind)) errs.push(required(child(rp, 'kind')));
    else for (const m of isValidPathSegmentName(str(r.kind))) errs.push(invalid(child(rp, 'kind'), str(r.kind), m));
    if (!str(r.name)) errs.push(required(child(rp, 'name')));
    else for (const m of isValidPathSegmentName(str(r.name))) errs.push(invalid(child(rp, 'name'), str(r.name), m));
  } else if (hasSvc) {
    const s = b.service;
    if (!str(s.name)) errs.push(required(child(path, 'service', 'name')));
    else for (const m of isDNS1035Label(str(s.name))) errs.push(invalid(child(path, 'service', 'name'), str(s.name), m));
    const pname = str(s.port?.name);
    const pnum = typeof s.port?.number === 'number' ? s.port.number : 0;
    if (pname && pnum) errs.push(invalid(path, '', 'cannot set both port name & port number'));
    else if (pname) for (const m of isValidPortName(pname)) errs.push(invalid(child(path, 'service', 'port', 'name'), pname, m));
    else if (pnum) for (const m of isValidPortNum(pnum)) errs.push(invalid(child(path, 'service', 'port', 'number'), pnum, m));
    else errs.push(required(path, 'port name or number is required'));
  } else errs.push(invalid(path, '', 'resource or service backend is required'));
  return errs;
}

function validateHTTPIngressPath(p: any, path: string): Errs {
  const errs: Errs = [];
  if (!isSet(p.pathType)) return [required(child(path, 'pathType'), 'pathType must be specified')];
  const v = str(p.path);
  switch (p.pathType) {
    case 'Exact':
    case 'Prefix':
      if (!v.startsWith('/')) errs.push(invalid(child(path, 'path'), v, 'must be an absolute path'));
      if (v.length > 0) {
        for (const seq of INVALID_PATH_SEQUENCES) if (v.includes(seq)) errs.push(invalid(child(path, 'path'), v, `must not contain '${seq}'`));
        for (const suf of INVALID_PATH_SUFFIXES) if (v.endsWith(suf)) errs.push(invalid(child(path, 'path'), v, `cannot end with '${suf}'`));
      }
      break;
    case 'ImplementationSpecific':
      if (v.length > 0 && !v.startsWith('/')) errs.push(invalid(child(path, 'path'), v, 'must be an absolute path'));
      break;
    default:
      errs.push(notSupported(child(path, 'pathType'), str(p.pathType), PATH_TYPES));
  }
  errs.push(...validateIngressBackend(obj(p.backend), child(path, 'backend')));
  return errs;
}

function validateIngressRuleValue(rule: any, path: string): Errs {
  const errs: Errs = [];
  if (rule.http != null) {
    const hp = child(path, 'http');
    const paths = arr(rule.http.paths);
    if (paths.length === 0) errs.push(required(child(hp, 'paths')));
    paths.forEach((p: any, i: number) => errs.push(...validateHTTPIngressPath(obj(p), idx(child(hp, 'paths'), i))));
  }
  return errs;
}

function validateIngressSpec(spec: any, allowInvalidWildcardRules: boolean, allowInvalidSecretName: boolean): Errs {
  const errs: Errs = [];
  const rules = arr(spec.rules);
  if (rules.length === 0 && spec.defaultBackend == null) errs.push(invalid('spec', new GoRepr(rules.length || spec.rules ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)'), 'either `defaultBackend` or `rules` must be specified'));
  if (spec.defaultBackend != null) errs.push(...validateIngressBackend(spec.defaultBackend, 'spec.defaultBackend'));
  rules.forEach((r0: any, i: number) => {
    const r = obj(r0);
    const p = idx('spec.rules', i);
    let wildcard = false;
    const host = str(r.host);
    if (host) {
      if (parseIP(host)) errs.push(invalid(child(p, 'host'), host, 'must be a DNS name, not an IP address'));
      if (host.includes('*')) {
        for (const m of isWildcardDNS1123Subdomain(host)) errs.push(invalid(child(p, 'host'), host, m));
        wildcard = true;
      } else for (const m of isDNS1123Subdomain(host)) errs.push(invalid(child(p, 'host'), host, m));
    }
    if (!wildcard || !allowInvalidWildcardRules) errs.push(...validateIngressRuleValue(r, p));
  });
  arr(spec.tls).forEach((t: any, i: number) => {
    const tp = idx('spec.tls', i);
    arr<string>(t?.hosts).forEach((h, j) => {
      const hp = idx(child(tp, 'hosts'), j);
      if (str(h).includes('*')) for (const m of isWildcardDNS1123Subdomain(str(h))) errs.push(invalid(hp, str(h), m));
      else for (const m of isDNS1123Subdomain(str(h))) errs.push(invalid(hp, str(h), m));
    });
    if (!allowInvalidSecretName && str(t?.secretName)) for (const m of isDNS1123Subdomain(str(t.secretName))) errs.push(invalid(child(tp, 'secretName'), str(t.secretName), m));
  });
  if (isSet(spec.ingressClassName)) for (const m of isDNS1123Subdomain(str(spec.ingressClassName))) errs.push(invalid('spec.ingressClassName', str(spec.ingressClassName), m));
  return errs;
}

export function validateIngressCreate(ing: any): Errs {
  const errs = validateIngressSpec(obj(ing.spec), false, false);
  const ann = obj(ing.metadata?.annotations);
  const cls = 'kubernetes.io/ingress.class';
  if (cls in ann && isSet(ing.spec?.ingressClassName) && ann[cls] !== ing.spec.ingressClassName)
    errs.push(invalid(child('annotations', cls), str(ann[cls]), 'must match `ingressClassName` when both are specified'));
  return errs;
}

export function validateIngressUpdate(ing: any, old: any): Errs {
  const os = obj(old.spec);
  const allowSecret = arr(os.tls).some((t: any) => str(t?.secretName) && isDNS1123Subdomain(str(t.secretName)).length > 0);
  const allowWildcard = arr(os.rules).some((r: any) => str(r?.host).includes('*') && validateIngressRuleValue(obj(r), '').length > 0);
  return validateIngressSpec(obj(ing.spec), allowWildcard, allowSecret);
}

export function validateIngressStatusUpdate(ing: any): Errs {
  return validateLoadBalancerStatus(obj(ing.status?.loadBalancer), 'status.loadBalancer', null);
}

// ---- IngressClass ----

export function validateIngressClass(ic: any): Errs {
  const spec = obj(ic.spec);
  const errs: Errs = [];
  const ctrl = str(spec.controller);
  if (!ctrl) errs.push(required('spec.controller'));
  else {
    if (Buffer.byteLength(ctrl) > 250) errs.push(tooLong('spec.controller', 250));
    errs.push(...isDomainPrefixedPath('spec.controller', ctrl));
  }
  const p = spec.parameters;
  if (p != null) {
    const pp = 'spec.parameters';
    if (isSet(p.apiGroup)) for (const m of isDNS1123Subdomain(str(p.apiGroup))) errs.push(invalid(child(pp, 'apiGroup'), str(p.apiGroup), m));
    if (!str(p.kind)) errs.push(required(child(pp, 'kind')));
    else for (const m of isValidPathSegmentName(str(p.kind))) errs.push(invalid(child(pp, 'kind'), str(p.kind), m));
    if (!str(p.name)) errs.push(required(child(pp, 'name')));
    else for (const m of isValidPathSegmentName(str(p.name))) errs.push(invalid(child(pp, 'name'), str(p.name), m));
    if (!isSet(p.scope)) errs.push(required(child(pp, 'scope')));
    else if (p.scope !== 'Cluster' && p.scope !== 'Namespace') errs.push(notSupported(child(pp, 'scope'), str(p.scope), ['Cluster', 'Namespace']));
    else {
      if (p.scope === 'Namespace') {
        if (!isSet(p.namespace)) errs.push(required(child(pp, 'namespace'), "`parameters.scope` is set to 'Namespace'"));
        else for (const m of isDNS1123Label(str(p.namespace))) errs.push(invalid(child(pp, 'namespace'), str(p.namespace), m));
      }
      if (p.scope === 'Cluster' && isSet(p.namespace)) errs.push(forbidden(child(pp, 'namespace'), "`parameters.scope` is set to 'Cluster'"));
    }
  }
  return errs;
}

export function validateIngressClassUpdate(ic: any, old: any): Errs {
  const errs: Errs = [];
  if (str(ic.spec?.controller) !== str(old.spec?.controller)) errs.push(invalid('spec.controller', str(ic.spec?.controller), FIELD_IMMUTABLE));
  errs.push(...validateIngressClass(ic));
  return errs;
}

export { goQuote };
