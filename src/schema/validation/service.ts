// Services and Endpoints (pkg/apis/core/validation ValidateService, ValidateServiceUpdate,
// ValidateServiceStatusUpdate, ValidateEndpoints). The registry fills clusterIPs from clusterIP
// and keeps the allocated values of an update before Kubernetes validates; validation here
// applies the same normalization to a copy so that the answers agree.
import { child, duplicate, forbidden, goQuote, goStrings, GoRepr, idx, invalid, key, notSupported, required, type Errs } from './errs.js';
import {
  arr,
  clone,
  isDNS1123Label,
  isDNS1123Subdomain,
  isIPv6String,
  isValidPortNum,
  obj,
  parseIP,
  isIPv4Bytes,
  str,
  validateCIDR,
  validateDNS1123Label,
  validateDNS1123Subdomain,
  validateIP,
  validateLabels,
  validateNonSpecialIP,
  validatePortNumOrName,
  validateQualifiedName,
  SUPPORTED_PROTOCOLS,
  isSet,
} from './util.js';

const LB_SOURCE_RANGES_ANNOTATION = 'service.beta.kubernetes.io/load-balancer-source-ranges';
const TOPOLOGY_MODE = 'service.kubernetes.io/topology-mode';
const TOPOLOGY_HINTS = 'service.kubernetes.io/topology-aware-hints';

const typeOf = (svc: any): string => str(svc.spec?.type) || 'ClusterIP';
const isHeadless = (svc: any): boolean => arr(svc.spec?.clusterIPs).length === 1 && svc.spec.clusterIPs[0] === 'None';

/** a NodePort or LoadBalancer Service, or a ClusterIP one with external IPs (ExternallyAccessible) */
export function externallyAccessible(svc: any): boolean {
  const t = typeOf(svc);
  return t === 'LoadBalancer' || t === 'NodePort' || (t === 'ClusterIP' && arr(svc.spec?.externalIPs).length > 0);
}
export function needsHealthCheck(svc: any): boolean {
  return typeOf(svc) === 'LoadBalancer' && svc.spec?.externalTrafficPolicy === 'Local';
}
const needsClusterIP = (svc: any) => typeOf(svc) !== 'ExternalName';

/** normalizeClusterIPs and patchAllocatedValues of the Service registry, on a copy */
export function normalizeService(svc: any, old?: any): any {
  const s = clone(svc);
  s.spec ??= {};
  const sp = s.spec;
  if (!old) {
    if (str(sp.clusterIP) && arr(sp.clusterIPs).length === 0) sp.clusterIPs = [sp.clusterIP];
    return s;
  }
  const os = obj(old.spec);
  if (needsClusterIP(old) && needsClusterIP(s)) {
    if (!str(sp.clusterIP)) sp.clusterIP = os.clusterIP;
    if (arr(sp.clusterIPs).length === 0 && arr(os.clusterIPs).length > 0) sp.clusterIPs = os.clusterIPs;
  }
  const sameIPs = () => JSON.stringify(arr(os.clusterIPs)) === JSON.stringify(arr(sp.clusterIPs));
  if (arr(os.clusterIPs).length > 0 && arr(sp.clusterIPs).length === 0 && str(os.clusterIP) === str(sp.clusterIP)) sp.clusterIPs = os.clusterIPs;
  if (str(os.clusterIP) !== str(sp.clusterIP)) {
    if (str(os.clusterIP) && !str(sp.clusterIP) && sameIPs()) delete sp.clusterIPs;
    if (str(sp.clusterIP) && sameIPs()) sp.clusterIPs = [sp.clusterIP];
  }
  if (needsHealthCheck(old) && needsHealthCheck(s) && !sp.healthCheckNodePort) sp.healthCheckNodePort = os.healthCheckNodePort;
  return s;
}

/** core.ServicePort{Protocol, Port} as %#v prints the duplicate-port key */
function servicePortKey(proto: string, port: number): GoRepr {
  return new GoRepr(
    `core.ServicePort{Name:"", Protocol:${goQuote(proto)}, AppProtocol:(*string)(nil), Port:${port}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
  );
}

function validateServicePort(sp: any, requireName: boolean, names: Set<string>, path: string): Errs {
  const errs: Errs = [];
  const name = str(sp.name);
  if (requireName && !name) errs.push(required(child(path, 'name')));
  else if (name) {
    errs.push(...validateDNS1123Label(name, child(path, 'name')));
    if (names.has(name)) errs.push(duplicate(child(path, 'name'), name));
    else names.add(name);
  }
  const port = typeof sp.port === 'number' ? sp.port : 0;
  for (const m of isValidPortNum(port)) errs.push(invalid(child(path, 'port'), port, m));
  const proto = str(sp.protocol) || 'TCP';
  if (!SUPPORTED_PROTOCOLS.includes(proto)) errs.push(notSupported(child(path, 'protocol'), proto, SUPPORTED_PROTOCOLS));
  const tp = sp.targetPort === undefined || sp.targetPort === 0 || sp.targetPort === '' ? port : sp.targetPort;
  errs.push(...validatePortNumOrName(tp, child(path, 'targetPort')));
  if (isSet(sp.appProtocol)) errs.push(...validateQualifiedName(str(sp.appProtocol), child(path, 'appProtocol')));
  return errs;
}

/** ValidateServiceClusterIPsRelatedFields: also the allocator's loose check before it fills the IP families */
export function validateClusterIPsRelatedFields(svc: any): Errs {
  if (typeOf(svc) === 'ExternalName') return [];
  const errs: Errs = [];
  const spec = obj(svc.spec);
  const ips = arr<string>(spec.clusterIPs);
  const fams = arr<string>(spec.ipFamilies);
  let hasInvalid = false;
  if (str(spec.clusterIP)) {
    if (ips.length === 0) errs.push(required('spec.clusterIPs'));
    else if (ips[0] !== spec.clusterIP) errs.push(invalid('spec.clusterIPs', goStrings(ips), 'first value must match `clusterIP`'));
  } else if (ips.length) errs.push(invalid('spec.clusterIPs', goStrings(ips), 'must be empty when `clusterIP` is not specified'));
  const seen = new Set<string>();
  fams.forEach((f, i) => {
    if (f !== 'IPv4' && f !== 'IPv6') errs.push(notSupported(idx('spec.ipFamilies', i), f, ['IPv4', 'IPv6']));
    if (seen.has(f)) errs.push(duplicate(idx('spec.ipFamilies', i), f));
    seen.add(f);
  });
  if (isSet(spec.ipFamilyPolicy) && !['PreferDualStack', 'RequireDualStack', 'SingleStack'].includes(spec.ipFamilyPolicy))
    errs.push(notSupported('spec.ipFamilyPolicy', str(spec.ipFamilyPolicy), ['PreferDualStack', 'RequireDualStack', 'SingleStack']));
  ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (ips.length > 1) {
        hasInvalid = true;
        errs.push(invalid('spec.clusterIPs', goStrings(ips), "'None' must be the first and only value"));
      }
      return;
    }
    const e = validateIP(idx('spec.clusterIPs', i), str(ip));
    if (e.length) hasInvalid = true;
    errs.push(...e);
  });
  if (ips.length > 2) errs.push(invalid('spec.clusterIPs', goStrings(ips), 'may only hold up to 2 values'));
  if (hasInvalid) return errs;
  if (ips.length > 1) {
    const b = ips.map((x) => parseIP(x)!);
    const dual = b.length >= 2 && b.some((x) => isIPv4Bytes(x)) && b.some((x) => !isIPv4Bytes(x)) && b.length === new Set(b.map((x) => isIPv4Bytes(x))).size;
    if (!dual) errs.push(invalid('spec.clusterIPs', goStrings(ips), 'may specify no more than one IP for each IP family'));
  }
  if (!isHeadless(svc) && ips.length && fams.length)
    ips.forEach((ip, i) => {
      if (i > fams.length - 1) return;
      if (fams[i] === 'IPv4' && isIPv6String(ip)) errs.push(invalid(idx('spec.clusterIPs', i), ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      if (fams[i] === 'IPv6' && !isIPv6String(ip)) errs.push(invalid(idx('spec.clusterIPs', i), ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
    });
  return errs;
}

function validateLoadBalancerClass(old: any | undefined, svc: any): Errs {
  const errs: Errs = [];
  const cls = svc.spec?.loadBalancerClass;
  if (old && typeOf(old) === 'LoadBalancer' && typeOf(svc) === 'LoadBalancer') {
    const oc = old.spec?.loadBalancerClass;
    if ((oc ?? null) !== (cls ?? null)) errs.push(invalid('spec.loadBalancerClass', cls ?? null, 'may not change once set'));
  }
  if (typeOf(svc) === 'LoadBalancer') {
    if (isSet(cls)) errs.push(...validateQualifiedName(str(cls), 'spec.loadBalancerClass'));
  } else if (isSet(cls)) errs.push(forbidden('spec.loadBalancerClass', "may only be used when `type` is 'LoadBalancer'"));
  return errs;
}

export function validateService(svc: any): Errs {
  const errs: Errs = [];
  const spec = obj(svc.spec);
  const ann = obj(svc.metadata?.annotations);
  const t = typeOf(svc);
  if (TOPOLOGY_MODE in ann && TOPOLOGY_HINTS in ann && ann[TOPOLOGY_MODE] !== ann[TOPOLOGY_HINTS])
    errs.push(invalid(key('metadata.annotations', TOPOLOGY_MODE), str(ann[TOPOLOGY_MODE]), `must match annotations[${TOPOLOGY_HINTS}] when both are specified`));
  const ports = arr(spec.ports);
  if (ports.length === 0 && !isHeadless(svc) && t !== 'ExternalName') errs.push(required('spec.ports'));
  switch (t) {
    case 'LoadBalancer':
      if (isHeadless(svc)) errs.push(invalid(idx('spec.clusterIPs', 0), spec.clusterIPs[0], "may not be set to 'None' for LoadBalancer services"));
      break;
    case 'NodePort':
      if (isHeadless(svc)) errs.push(invalid(idx('spec.clusterIPs', 0), spec.clusterIPs[0], "may not be set to 'None' for NodePort services"));
      break;
    case 'ExternalName': {
      if (arr(spec.clusterIPs).length > 0) errs.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
      if (arr(spec.ipFamilies).length > 0) errs.push(forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
      if (isSet(spec.ipFamilyPolicy)) errs.push(forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
      const cname = str(spec.externalName).replace(/\.$/, '');
      if (cname) errs.push(...validateDNS1123Subdomain(cname, 'spec.externalName'));
      else errs.push(required('spec.externalName'));
      break;
    }
  }
  const names = new Set<string>();
  ports.forEach((p, i) => errs.push(...validateServicePort(obj(p), ports.length > 1, names, idx('spec.ports', i))));
  if (spec.selector != null) errs.push(...validateLabels(spec.selector, 'spec.selector'));
  const aff = str(spec.sessionAffinity) || 'None';
  if (aff !== 'ClientIP' && aff !== 'None') errs.push(notSupported('spec.sessionAffinity', aff, ['ClientIP', 'None']));
  if (aff === 'ClientIP') {
    // defaulting fills a missing config with the 10800-second timeout
    const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800;
    if (timeout <= 0 || timeout > 86400) errs.push(invalid('spec.sessionAffinityConfig.clientIP.timeoutSeconds', timeout, 'must be greater than 0 and less than 86400'));
  } else if (aff === 'None' && spec.sessionAffinityConfig != null) errs.push(forbidden('spec.sessionAffinityConfig', 'must not be set when session affinity is None'));
  errs.push(...validateClusterIPsRelatedFields(svc));
  arr<string>(spec.externalIPs).forEach((ip, i) => {
    const p = idx('spec.externalIPs', i);
    const e = validateIP(p, str(ip));
    if (e.length) errs.push(...e);
    else errs.push(...validateNonSpecialIP(str(ip), p));
  });
  if (!['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'].includes(t)) errs.push(notSupported('spec.type', t, ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort']));
  if (t === 'ClusterIP')
    ports.forEach((p, i) => {
      if (p?.nodePort) errs.push(forbidden(child(idx('spec.ports', i), 'nodePort'), "may not be used when `type` is 'ClusterIP'"));
    });
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    if (!p?.nodePort) return;
    const k = `${str(p.protocol) || 'TCP'}/${p.nodePort}`;
    if (nodePorts.has(k)) errs.push(duplicate(child(idx('spec.ports', i), 'nodePort'), p.nodePort));
    nodePorts.add(k);
  });
  const seen = new Set<string>();
  ports.forEach((p, i) => {
    const proto = str(p?.protocol) || 'TCP';
    const port = typeof p?.port === 'number' ? p.port : 0;
    const k = `${proto}/${port}`;
    if (seen.has(k)) errs.push(duplicate(idx('spec.ports', i), servicePortKey(proto, port)));
    seen.add(k);
  });
  const ranges = arr<string>(spec.loadBalancerSourceRanges);
  if (ranges.length > 0) {
    const fp = 'spec.LoadBalancerSourceRanges';
    if (t !== 'LoadBalancer') errs.push(forbidden(fp, "may only be used when `type` is 'LoadBalancer'"));
    ranges.forEach((r, i) => errs.push(...validateCIDR(idx(fp, i), str(r).trim())));
  } else if (LB_SOURCE_RANGES_ANNOTATION in ann) {
    const fp = key('metadata.annotations', LB_SOURCE_RANGES_ANNOTATION);
    if (t !== 'LoadBalancer') errs.push(forbidden(fp, "may only be used when `type` is 'LoadBalancer'"));
    const val = str(ann[LB_SOURCE_RANGES_ANNOTATION]).trim();
    if (val) for (const c of val.split(',')) errs.push(...validateCIDR(fp, c.trim()));
  }
  if (isSet(spec.allocateLoadBalancerNodePorts) && t !== 'LoadBalancer') errs.push(forbidden('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"));
  errs.push(...validateLoadBalancerClass(undefined, svc));
  // external traffic policy
  const etp = str(spec.externalTrafficPolicy);
  if (!externallyAccessible(svc)) {
    if (etp) errs.push(invalid('spec.externalTrafficPolicy', etp, 'may only be set for externally-accessible services'));
  } else if (etp && etp !== 'Cluster' && etp !== 'Local') errs.push(notSupported('spec.externalTrafficPolicy', etp, ['Cluster', 'Local']));
  const hc = typeof spec.healthCheckNodePort === 'number' ? spec.healthCheckNodePort : 0;
  if (!needsHealthCheck(svc)) {
    if (hc !== 0) errs.push(invalid('spec.healthCheckNodePort', hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
  } else if (hc !== 0) for (const m of isValidPortNum(hc)) errs.push(invalid('spec.healthCheckNodePort', hc, m));
  if (isSet(spec.internalTrafficPolicy) && spec.internalTrafficPolicy !== 'Cluster' && spec.internalTrafficPolicy !== 'Local')
    errs.push(notSupported('spec.internalTrafficPolicy', str(spec.internalTrafficPolicy), ['Cluster', 'Local']));
  if (isSet(spec.trafficDistribution) && spec.trafficDistribution !== 'PreferClose') errs.push(notSupported('spec.trafficDistribution', str(spec.trafficDistribution), ['PreferClose']));
  return errs;
}

function validateUpgradeDowngradeClusterIPs(old: any, svc: any): Errs {
  const errs: Errs = [];
  if (typeOf(svc) === 'ExternalName' || typeOf(old) === 'ExternalName') return errs;
  if (isHeadless(old) && isHeadless(svc)) return errs;
  const o = arr<string>(old.spec?.clusterIPs);
  const n = arr<string>(svc.spec?.clusterIPs);
  const shown = goStrings(svc.spec?.clusterIPs ?? null);
  if (o.length === n.length) {
    o.forEach((ip, i) => {
      if (ip !== n[i]) errs.push(invalid(idx('spec.clusterIPs', i), shown, 'may not change once set'));
    });
  } else if (o.length > n.length) {
    if (n.length === 0) errs.push(invalid(idx('spec.clusterIPs', 0), shown, 'primary clusterIP can not be unset'));
    if (o.length > 0 && n.length > 0 && n[0] !== o[0]) errs.push(invalid(idx('spec.clusterIPs', 0), shown, 'may not change once set'));
    if (n.length === 1 && svc.spec?.ipFamilyPolicy !== 'SingleStack')
      errs.push(invalid('spec.ipFamilyPolicy', svc.spec?.ipFamilyPolicy ?? null, "must be set to 'SingleStack' when releasing the secondary clusterIP"));
  } else if (o.length > 0 && n[0] !== o[0]) errs.push(invalid(idx('spec.clusterIPs', 0), shown, 'may not change once set'));
  return errs;
}

function validateUpgradeDowngradeIPFamilies(old: any, svc: any): Errs {
  const errs: Errs = [];
  if (typeOf(svc) === 'ExternalName' || typeOf(old) === 'ExternalName') return errs;
  if (isHeadless(svc) !== isHeadless(old) || isHeadless(svc)) return errs;
  const o = arr<string>(old.spec?.ipFamilies);
  const n = arr<string>(svc.spec?.ipFamilies);
  const fams = goStrings(svc.spec?.ipFamilies ?? null, '[]core.IPFamily');
  const ips = goStrings(svc.spec?.clusterIPs ?? null);
  if (o.length === n.length) {
    o.forEach((f, i) => {
      if (f !== n[i]) errs.push(invalid(idx('spec.ipFamilies', 0), fams, 'may not change once set'));
    });
  } else if (o.length > n.length) {
    if (arr(svc.spec?.clusterIPs).length === 0) errs.push(invalid(idx('spec.ipFamilies', 0), fams, 'primary ipFamily can not be unset'));
    if (n.length > 0 && n[0] !== o[0]) errs.push(invalid(idx('spec.ipFamilies', 0), ips, 'may not change once set'));
    if (n.length === 1 && svc.spec?.ipFamilyPolicy !== 'SingleStack')
      errs.push(invalid('spec.ipFamilyPolicy', svc.spec?.ipFamilyPolicy ?? null, "must be set to 'SingleStack' when releasing the secondary ipFamily"));
  } else if (o.length > 0 && n.length > 0 && n[0] !== o[0]) errs.push(invalid(idx('spec.ipFamilies', 0), ips, 'may not change once set'));
  return errs;
}

export function validateServiceUpdate(svc: any, old: any): Errs {
  const errs: Errs = [];
  errs.push(...validateUpgradeDowngradeClusterIPs(old, svc));
  errs.push(...validateUpgradeDowngradeIPFamilies(old, svc));
  errs.push(...validateLoadBalancerClass(old, svc));
  if (needsHealthCheck(old) && needsHealthCheck(svc) && (svc.spec?.healthCheckNodePort ?? 0) !== (old.spec?.healthCheckNodePort ?? 0))
    errs.push(forbidden('spec.healthCheckNodePort', 'field is immutable'));
  errs.push(...validateService(svc));
  return errs;
}

export function validateServiceStatusUpdate(svc: any): Errs {
  return validateLoadBalancerStatus(obj(svc.status?.loadBalancer), 'status.loadBalancer', typeOf(svc));
}

export function validateLoadBalancerStatus(status: any, path: string, svcType: string | null): Errs {
  const errs: Errs = [];
  const ing = arr(status.ingress);
  const ip = child(path, 'ingress');
  if (svcType !== null && svcType !== 'LoadBalancer' && ing.length !== 0) return [forbidden(ip, "may only be used when `spec.type` is 'LoadBalancer'")];
  ing.forEach((x: any, i: number) => {
    const p = idx(ip, i);
    if (str(x?.ip)) errs.push(...validateIP(child(p, 'ip'), str(x.ip)));
    if (svcType !== null) {
      if (!isSet(x?.ipMode)) {
        if (str(x?.ip)) errs.push(required(child(p, 'ipMode'), 'must be specified when `ip` is set'));
      } else if (!str(x?.ip)) errs.push(forbidden(child(p, 'ipMode'), 'may not be specified when `ip` is not set'));
      else if (x.ipMode !== 'Proxy' && x.ipMode !== 'VIP') errs.push(notSupported(child(p, 'ipMode'), str(x.ipMode), ['Proxy', 'VIP']));
    }
    if (str(x?.hostname)) {
      for (const m of isDNS1123Subdomain(x.hostname)) errs.push(invalid(child(p, 'hostname'), x.hostname, m));
      if (parseIP(x.hostname)) errs.push(invalid(child(p, 'hostname'), x.hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return errs;
}

// ---- Endpoints ----

export function validateEndpoints(ep: any): Errs {
  const errs: Errs = [];
  arr(ep.subsets).forEach((ss: any, i: number) => {
    const p = idx('subsets', i);
    const addrs = arr(ss?.addresses);
    const nr = arr(ss?.notReadyAddresses);
    if (addrs.length === 0 && nr.length === 0) errs.push(required(p, 'must specify `addresses` or `notReadyAddresses`'));
    addrs.forEach((a, j) => errs.push(...validateEndpointAddress(obj(a), idx(child(p, 'addresses'), j))));
    nr.forEach((a, j) => errs.push(...validateEndpointAddress(obj(a), idx(child(p, 'notReadyAddresses'), j))));
    const ports = arr(ss?.ports);
    ports.forEach((port: any, j: number) => {
      const pp = idx(child(p, 'ports'), j);
      const name = str(port?.name);
      if (ports.length > 1 && !name) errs.push(required(child(pp, 'name')));
      else if (name) errs.push(...validateDNS1123Label(name, child(pp, 'name')));
      const num = typeof port?.port === 'number' ? port.port : 0;
      for (const m of isValidPortNum(num)) errs.push(invalid(child(pp, 'port'), num, m));
      const proto = str(port?.protocol) || 'TCP';
      if (!SUPPORTED_PROTOCOLS.includes(proto)) errs.push(notSupported(child(pp, 'protocol'), proto, SUPPORTED_PROTOCOLS));
      if (isSet(port?.appProtocol)) errs.push(...validateQualifiedName(str(port.appProtocol), child(pp, 'appProtocol')));
    });
  });
  return errs;
}

function validateEndpointAddress(a: any, path: string): Errs {
  const errs = validateIP(child(path, 'ip'), str(a.ip));
  if (str(a.hostname)) errs.push(...validateDNS1123Label(a.hostname, child(path, 'hostname')));
  if (isSet(a.nodeName)) for (const m of isDNS1123Subdomain(str(a.nodeName))) errs.push(invalid(child(path, 'nodeName'), str(a.nodeName), m));
  errs.push(...validateNonSpecialIP(str(a.ip), child(path, 'ip')));
  return errs;
}

export { isDNS1123Label };
