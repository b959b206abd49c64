// rbac.authorization.k8s.io, policy, scheduling.k8s.io, storage.k8s.io, discovery.k8s.io,
// coordination.k8s.io and certificates.k8s.io (the validation packages of those groups).
import { child, duplicate, forbidden, goBytes, goQuote, GoRepr, idx, internal, invalid, key, notSupported, required, tooLong, tooMany, type Errs } from './errs.js';
import {
  arr,
  FIELD_IMMUTABLE,
  isDNS1123Label,
  isDNS1123Subdomain,
  isFullyQualifiedDomainName,
  isLabelValue,
  isQualifiedName,
  isSet,
  isValidPathSegmentName,
  obj,
  bytesOf,
  selectorInvalid,
  str,
  validateDNS1123Label,
  validateLabelSelector,
  validateLabels,
  validateNonnegative,
  validateNonSpecialIP,
  validateQualifiedName,
  parseIP,
  isIPv4Bytes,
  jsonEqual,
  SUPPORTED_PROTOCOLS,
  validateIP,
} from './util.js';
import { validatePositiveIntOrPercent, isNotMoreThan100Percent } from './apps.js';
import { validatePreemptionPolicy } from './pod.js';
import { validateTopologySelectorTerm } from './volumes.js';

// ---- RBAC ----

function validatePolicyRule(rule: any, namespaced: boolean, path: string): Errs {
  const errs: Errs = [];
  if (arr(rule.verbs).length === 0) errs.push(required(child(path, 'verbs'), 'verbs must contain at least one value'));
  const nru = arr<string>(rule.nonResourceURLs);
  const nruRepr = () => new GoRepr(`[]string{${nru.map(goQuote).join(', ')}}`);
  if (nru.length > 0) {
    if (namespaced) errs.push(invalid(child(path, 'nonResourceURLs'), nruRepr(), 'namespaced rules cannot apply to non-resource URLs'));
    if (arr(rule.apiGroups).length || arr(rule.resources).length || arr(rule.resourceNames).length)
      errs.push(invalid(child(path, 'nonResourceURLs'), nruRepr(), 'rules cannot apply to both regular resources and non-resource URLs'));
    return errs;
  }
  if (arr(rule.apiGroups).length === 0) errs.push(required(child(path, 'apiGroups'), 'resource rules must supply at least one api group'));
  if (arr(rule.resources).length === 0) errs.push(required(child(path, 'resources'), 'resource rules must supply at least one resource'));
  return errs;
}

export function validateRole(role: any, namespaced: boolean): Errs {
  const errs: Errs = [];
  arr(role.rules).forEach((r: any, i: number) => errs.push(...validatePolicyRule(obj(r), namespaced, idx('rules', i))));
  if (!namespaced && role.aggregationRule != null) {
    const sels = arr(role.aggregationRule.clusterRoleSelectors);
    if (sels.length === 0) errs.push(required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
    sels.forEach((s: any, i: number) => {
      const p = idx('aggregationRule.clusterRoleSelectors', i);
      errs.push(...validateLabelSelector(s, p));
      if (selectorInvalid(s)) errs.push(invalid(p, new GoRepr('labels.internalSelector(nil)'), 'invalid label selector.'));
    });
  }
  return errs;
}

function validateSubject(s: any, namespaced: boolean, path: string): Errs {
  const errs: Errs = [];
  const name = str(s.name);
  if (!name) errs.push(required(child(path, 'name')));
  switch (s.kind) {
    case 'ServiceAccount':
      if (name) for (const m of isDNS1123Subdomain(name)) errs.push(invalid(child(path, 'name'), name, m));
      if (str(s.apiGroup)) errs.push(notSupported(child(path, 'apiGroup'), str(s.apiGroup), ['']));
      if (!namespaced && !str(s.namespace)) errs.push(required(child(path, 'namespace')));
      break;
    case 'User':
      if (!name) errs.push(invalid(child(path, 'name'), name, 'user name cannot be empty'));
      if (s.apiGroup !== 'rbac.authorization.k8s.io') errs.push(notSupported(child(path, 'apiGroup'), str(s.apiGroup), ['rbac.authorization.k8s.io']));
      break;
    case 'Group':
      if (!name) errs.push(invalid(child(path, 'name'), name, 'group name cannot be empty'));
      if (s.apiGroup !== 'rbac.authorization.k8s.io') errs.push(notSupported(child(path, 'apiGroup'), str(s.apiGroup), ['rbac.authorization.k8s.io']));
      break;
    default:
      errs.push(notSupported(child(path, 'kind'), str(s.kind), ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

export function validateRoleBinding(rb: any, namespaced: boolean): Errs {
  const errs: Errs = [];
  const rr = obj(rb.roleRef);
  if (rr.apiGroup !== 'rbac.authorization.k8s.io') errs.push(notSupported('roleRef.apiGroup', str(rr.apiGroup), ['rbac.authorization.k8s.io']));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(rr.kind)) errs.push(notSupported('roleRef.kind', str(rr.kind), kinds));
  if (!str(rr.name)) errs.push(required('roleRef.name'));
  else for (const m of isValidPathSegmentName(str(rr.name))) errs.push(invalid('roleRef.name', str(rr.name), m));
  arr(rb.subjects).forEach((s: any, i: number) => errs.push(...validateSubject(obj(s), namespaced, idx('subjects', i))));
  return errs;
}

export function validateRoleBindingUpdate(rb: any, old: any, namespaced: boolean): Errs {
  const errs = validateRoleBinding(rb, namespaced);
  const a = obj(rb.roleRef);
  const b = obj(old.roleRef);
  if (str(a.apiGroup) !== str(b.apiGroup) || str(a.kind) !== str(b.kind) || str(a.name) !== str(b.name))
    errs.push(invalid('roleRef', new GoRepr(`rbac.RoleRef{APIGroup:${goQuote(str(a.apiGroup))}, Kind:${goQuote(str(a.kind))}, Name:${goQuote(str(a.name))}}`), 'cannot change roleRef'));
  return errs;
}

// ---- PodDisruptionBudget ----

function pdbSpecRepr(spec: any): GoRepr {
  const p = (v: unknown, t: string) => (v == null ? `(*${t})(nil)` : `(*${t})(0xc000010000)`);
  return new GoRepr(
    `policy.PodDisruptionBudgetSpec{MinAvailable:${p(spec.minAvailable, 'intstr.IntOrString')}, Selector:${p(spec.selector, 'v1.LabelSelector')}, MaxUnavailable:${p(spec.maxUnavailable, 'intstr.IntOrString')}, UnhealthyPodEvictionPolicy:${p(spec.unhealthyPodEvictionPolicy, 'policy.UnhealthyPodEvictionPolicyType')}}`,
  );
}

export function validatePodDisruptionBudget(pdb: any): Errs {
  const spec = obj(pdb.spec);
  const errs: Errs = [];
  if (isSet(spec.minAvailable) && isSet(spec.maxUnavailable)) errs.push(invalid('spec', pdbSpecRepr(spec), 'minAvailable and maxUnavailable cannot be both set'));
  if (isSet(spec.minAvailable)) {
    errs.push(...validatePositiveIntOrPercent(spec.minAvailable, 'spec.minAvailable'));
    errs.push(...isNotMoreThan100Percent(spec.minAvailable, 'spec.minAvailable'));
  }
  if (isSet(spec.maxUnavailable)) {
    errs.push(...validatePositiveIntOrPercent(spec.maxUnavailable, 'spec.maxUnavailable'));
    errs.push(...isNotMoreThan100Percent(spec.maxUnavailable, 'spec.maxUnavailable'));
  }
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  if (isSet(spec.unhealthyPodEvictionPolicy) && !['AlwaysAllow', 'IfHealthyBudget'].includes(spec.unhealthyPodEvictionPolicy))
    errs.push(notSupported('spec.unhealthyPodEvictionPolicy', str(spec.unhealthyPodEvictionPolicy), ['AlwaysAllow', 'IfHealthyBudget']));
  return errs;
}

const CONDITION_REASON_RE = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

/** meta/v1 ValidateConditions */
export function validateConditions(conds: any[], path: string): Errs {
  const errs: Errs = [];
  const seen = new Set<string>();
  conds.forEach((c0: any, i: number) => {
    const c = obj(c0);
    const p = idx(path, i);
    if (seen.has(str(c.type))) errs.push(duplicate(child(p, 'type'), str(c.type)));
    else seen.add(str(c.type));
    for (const m of isQualifiedName(str(c.type))) errs.push(invalid(child(p, 'type'), str(c.type), m));
    if (!['False', 'True', 'Unknown'].includes(str(c.status))) errs.push(notSupported(child(p, 'status'), str(c.status), ['False', 'True', 'Unknown']));
    if (typeof c.observedGeneration === 'number' && c.observedGeneration < 0) errs.push(invalid(child(p, 'observedGeneration'), c.observedGeneration, 'must be greater than or equal to zero'));
    if (!c.lastTransitionTime) errs.push(required(child(p, 'lastTransitionTime'), 'must be set'));
    const reason = str(c.reason);
    if (!reason) errs.push(required(child(p, 'reason'), 'must be set'));
    else {
      if (!CONDITION_REASON_RE.test(reason))
        errs.push(
          invalid(
            child(p, 'reason'),
            reason,
            "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
          ),
        );
      if (reason.length > 1024) errs.push(tooLong(child(p, 'reason'), 1024));
    }
    if (str(c.message).length > 32 * 1024) errs.push(tooLong(child(p, 'message'), 32 * 1024));
  });
  return errs;
}

export function validatePodDisruptionBudgetStatusUpdate(pdb: any): Errs {
  const st = obj(pdb.status);
  const errs = validateConditions(arr(st.conditions), 'status.conditions');
  for (const k of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods']) errs.push(...validateNonnegative(typeof st[k] === 'number' ? st[k] : 0, child('status', k)));
  return errs;
}

// ---- PriorityClass ----

const SYSTEM_PRIORITY_CLASSES: Record<string, number> = { 'system-node-critical': 2000001000, 'system-cluster-critical': 2000000000 };
const HIGHEST_USER_PRIORITY = 1000000000;

export function validatePriorityClass(pc: any): Errs {
  const errs: Errs = [];
  const name = str(pc.metadata?.name);
  const value = typeof pc.value === 'number' ? pc.value : 0;
  if (name.startsWith('system-')) {
    const known = SYSTEM_PRIORITY_CLASSES[name];
    let err = '';
    if (known === undefined) err = `${name} is not a known system priority class`;
    else if (known !== value) err = `value of ${name} PriorityClass must be ${known}`;
    else if (pc.globalDefault === true) err = `globalDefault of ${name} PriorityClass must be false`;
    if (err) errs.push(forbidden('metadata.name', `priority class names with 'system-' prefix are reserved for system use only. error: ${err}`));
  } else if (value > HIGHEST_USER_PRIORITY) errs.push(forbidden('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_PRIORITY}`));
  if (isSet(pc.preemptionPolicy)) errs.push(...validatePreemptionPolicy(pc.preemptionPolicy, 'preemptionPolicy'));
  return errs;
}

export function validatePriorityClassUpdate(pc: any, old: any): Errs {
  const errs: Errs = [];
  if ((pc.value ?? 0) !== (old.value ?? 0)) errs.push(forbidden('value', 'may not be changed in an update.'));
  if ((pc.preemptionPolicy ?? null) !== (old.preemptionPolicy ?? null)) errs.push(invalid('preemptionPolicy', pc.preemptionPolicy ?? null, FIELD_IMMUTABLE));
  return errs;
}

// ---- StorageClass ----

export function validateStorageClass(sc: any): Errs {
  const errs: Errs = [];
  const prov = str(sc.provisioner);
  if (!prov) errs.push(required('provisioner'));
  else errs.push(...validateQualifiedName(prov.toLowerCase(), 'provisioner'));
  const params = obj(sc.parameters);
  const keys = Object.keys(params);
  if (keys.length > 512) errs.push(tooLong('parameters', 512));
  else {
    let total = 0;
    for (const k of keys) {
      if (k.length < 1) errs.push(invalid('parameters', k, 'field can not be empty.'));
      total += Buffer.byteLength(k) + Buffer.byteLength(str(params[k]));
    }
    if (total > 256 * 1024) errs.push(tooLong('parameters', 256 * 1024));
  }
  const rp = str(sc.reclaimPolicy);
  if (rp && rp !== 'Delete' && rp !== 'Retain') errs.push(notSupported('reclaimPolicy', rp, ['Delete', 'Retain']));
  const mode = sc.volumeBindingMode ?? 'Immediate';
  if (mode !== 'Immediate' && mode !== 'WaitForFirstConsumer') errs.push(notSupported('volumeBindingMode', str(mode), ['Immediate', 'WaitForFirstConsumer']));
  const raw: string[] = [];
  arr(sc.allowedTopologies).forEach((t: any, i: number) => {
    const p = idx('allowedTopologies', i);
    const { map, errs: te } = validateTopologySelectorTerm(obj(t), p);
    errs.push(...te);
    const canon = JSON.stringify([...map.entries()].map(([k, v]) => [k, [...v].sort()]).sort());
    if (raw.includes(canon)) errs.push(duplicate(child(p, 'matchLabelExpressions'), ''));
    raw.push(canon);
  });
  return errs;
}

export function validateStorageClassUpdate(sc: any, old: any): Errs {
  const errs: Errs = [];
  if (!jsonEqual(sc.parameters ?? null, old.parameters ?? null) || (sc.parameters == null) !== (old.parameters == null)) errs.push(forbidden('parameters', 'updates to parameters are forbidden.'));
  if (str(sc.provisioner) !== str(old.provisioner)) errs.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if ((str(sc.reclaimPolicy) || 'Delete') !== (str(old.reclaimPolicy) || 'Delete')) errs.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  if ((sc.volumeBindingMode ?? 'Immediate') !== (old.volumeBindingMode ?? 'Immediate')) errs.push(invalid('volumeBindingMode', str(sc.volumeBindingMode ?? 'Immediate'), FIELD_IMMUTABLE));
  return errs;
}

// ---- EndpointSlice ----

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];

export function validateEndpointSlice(es: any, allowDeprecatedIP: boolean): Errs {
  const errs: Errs = [];
  const at = str(es.addressType);
  const valid = allowDeprecatedIP ? ['FQDN', 'IP', 'IPv4', 'IPv6'] : ADDRESS_TYPES;
  if (!at) errs.push(required('addressType'));
  else if (!valid.includes(at)) errs.push(notSupported('addressType', at, valid));
  const eps = arr(es.endpoints);
  if (eps.length > 1000) errs.push(tooMany('endpoints', eps.length, 1000));
  else
    eps.forEach((e0: any, i: number) => {
      const e = obj(e0);
      const p = idx('endpoints', i);
      const ap = child(p, 'addresses');
      const addrs = arr<string>(e.addresses);
      if (addrs.length === 0) errs.push(required(ap, 'must contain at least 1 address'));
      else if (addrs.length > 100) errs.push(tooMany(ap, addrs.length, 100));
      addrs.forEach((a, j) => {
        const aj = idx(ap, j);
        const s = str(a);
        switch (at) {
          case 'IP':
            errs.push(...validateIP(aj, s));
            break;
          case 'IPv4': {
            const b = parseIP(s);
            if (!b || !isIPv4Bytes(b)) errs.push(invalid(aj, s, 'must be a valid IPv4 address'));
            errs.push(...validateNonSpecialIP(s, aj));
            break;
          }
          case 'IPv6': {
            const b = parseIP(s);
            if (!b || isIPv4Bytes(b)) errs.push(invalid(aj, s, 'must be a valid IPv6 address'));
            errs.push(...validateNonSpecialIP(s, aj));
            break;
          }
          case 'FQDN':
            errs.push(...isFullyQualifiedDomainName(aj, s));
            break;
        }
      });
      if (isSet(e.nodeName)) for (const m of isDNS1123Subdomain(str(e.nodeName))) errs.push(invalid(child(p, 'nodeName'), str(e.nodeName), m));
      const tp = child(p, 'deprecatedTopology');
      const topo = obj(e.deprecatedTopology);
      if (Object.keys(topo).length > 16) errs.push(tooMany(tp, Object.keys(topo).length, 16));
      errs.push(...validateLabels(topo, tp));
      if ('topology.kubernetes.io/zone' in topo) errs.push(internal(key(tp, 'topology.kubernetes.io/zone'), 'must not be used, use endpoint.zone instead'));
      if (isSet(e.hostname)) errs.push(...validateDNS1123Label(str(e.hostname), child(p, 'hostname')));
      if (e.hints != null) {
        const fz = arr(e.hints.forZones);
        const fp = child(p, 'hints', 'forZones');
        if (fz.length > 8) errs.push(tooMany(fp, fz.length, 8));
        else {
          const names = new Set<string>();
          fz.forEach((z: any, j: number) => {
            const zp = child(idx(fp, j), 'name');
            const zn = str(z?.name);
            if (names.has(zn)) errs.push(duplicate(zp, zn));
            else names.add(zn);
            for (const m of isLabelValue(zn)) errs.push(invalid(zp, zn, m));
          });
        }
      }
    });
  const ports = arr(es.ports);
  if (ports.length > 100) errs.push(tooMany('ports', ports.length, 100));
  else {
    const names = new Set<string>();
    ports.forEach((p0: any, i: number) => {
      const port = obj(p0);
      const p = idx('ports', i);
      const name = str(port.name);
      if (name) errs.push(...validateDNS1123Label(name, child(p, 'name')));
      if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
      else names.add(name);
      const proto = isSet(port.protocol) ? str(port.protocol) : 'TCP';
      if (!SUPPORTED_PROTOCOLS.includes(proto)) errs.push(notSupported(child(p, 'protocol'), proto, SUPPORTED_PROTOCOLS));
      if (isSet(port.appProtocol)) for (const m of isQualifiedName(str(port.appProtocol))) errs.push(invalid(child(p, 'appProtocol'), str(port.appProtocol), m));
    });
  }
  return errs;
}

export function validateEndpointSliceUpdate(es: any, old: any): Errs {
  const errs = validateEndpointSlice(es, true);
  if (str(es.addressType) !== str(old.addressType)) errs.push(invalid('addressType', str(es.addressType), FIELD_IMMUTABLE));
  return errs;
}

// ---- Lease ----

export function validateLease(lease: any): Errs {
  const spec = obj(lease.spec);
  const errs: Errs = [];
  if (isSet(spec.leaseDurationSeconds) && spec.leaseDurationSeconds <= 0) errs.push(invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  if (isSet(spec.leaseTransitions) && spec.leaseTransitions < 0) errs.push(invalid('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'));
  if (isSet(spec.strategy)) {
    const s = str(spec.strategy);
    const parts = s.split('/');
    if (parts.length === 1) {
      if (s !== 'OldestEmulationVersion') errs.push(notSupported('spec.strategy.strategy', s, ['OldestEmulationVersion']));
    } else for (const m of isQualifiedName(s)) errs.push(invalid('spec.strategy.strategy', s, m));
  }
  if (str(spec.preferredHolder) && !str(spec.strategy)) errs.push(forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  return errs;
}

// ---- CertificateSigningRequest ----

const USAGES = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];

/** the first PEM block of some text: its type and DER bytes */
function pemDecode(text: string): { type: string; der: Buffer } | null {
  const m = /-----BEGIN ([^-\n]*)-----\r?\n([\s\S]*?)\r?\n?-----END \1-----/.exec(text);
  if (!m) return null;
  const body = m[2]!.split(/\r?\n/).filter((l) => !/^[\w-]+:/.test(l)).join('');
  return { type: m[1]!, der: Buffer.from(body, 'base64') };
}

/** an approximation of x509.ParseCertificateRequest + CheckSignature: the DER structure */
function csrError(req: Uint8Array): string | null {
  const pem = pemDecode(Buffer.from(req).toString('latin1'));
  if (!pem || pem.type !== 'CERTIFICATE REQUEST') return 'PEM block type must be CERTIFICATE REQUEST';
  const d = pem.der;
  // SEQUENCE { certificationRequestInfo SEQUENCE, signatureAlgorithm SEQUENCE, signature BIT STRING }
  const readLen = (off: number): [number, number] | null => {
    if (off >= d.length) return null;
    const b = d[off]!;
    if (b < 0x80) return [b, off + 1];
    const n = b & 0x7f;
    if (n === 0 || n > 4 || off + n >= d.length) return null;
    let len = 0;
    for (let i = 1; i <= n; i++) len = len * 256 + d[off + i]!;
    return [len, off + 1 + n];
  };
  if (d.length < 2 || d[0] !== 0x30) return 'asn1: structure error: tags don\'t match (16 vs {class:0 tag:' + (d[0] ?? 0) + ' length:0 isCompound:false}) {optional:false explicit:false application:false private:false defaultValue:<nil> tag:<nil> stringType:0 timeType:0 set:false omitEmpty:false} certificateRequest @2';
  const outer = readLen(1);
  if (!outer || outer[1] + outer[0] !== d.length) return 'asn1: syntax error: data truncated';
  let off = outer[1];
  for (const tag of [0x30, 0x30, 0x03]) {
    if (d[off] !== tag) return 'asn1: structure error: tags don\'t match';
    const l = readLen(off + 1);
    if (!l || l[1] + l[0] > d.length) return 'asn1: syntax error: data truncated';
    off = l[1] + l[0];
  }
  return null;
}

export function validateSignerName(path: string, signer: string): Errs {
  if (!signer) return [required(path)];
  const segs = signer.split('/');
  if (segs.length !== 2) return [invalid(path, signer, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const errs: Errs = [];
  if (segs[0]!.length > 253) errs.push(tooLong(path, 253));
  const labels = segs[0]!.split('.');
  for (const l of labels) {
    const e = isDNS1123Label(l);
    if (e.length) {
      for (const m of e) errs.push(invalid(path, segs[0], `validating label ${JSON.stringify(l)}: ${m}`));
      break;
    }
  }
  if (labels.length < 2) errs.push(invalid(path, segs[0], 'should be a domain with at least two segments separated by dots'));
  for (const l of segs[1]!.split('.')) {
    const e = isDNS1123Subdomain(l);
    if (e.length) {
      for (const m of e) errs.push(invalid(path, segs[1], `validating label ${JSON.stringify(l)}: ${m}`));
      break;
    }
  }
  if (signer.length > 253 + 253 + 63 + 1 + 1) errs.push(tooLong(path, 571));
  return errs;
}

function certificateError(b64: unknown): string | null {
  const data = bytesOf(b64);
  if (data.length === 0) return null;
  let text = Buffer.from(data).toString('latin1');
  let blocks = 0;
  for (;;) {
    const m = /-----BEGIN ([^-\n]*)-----\r?\n([\s\S]*?)-----END \1-----\r?\n?/.exec(text);
    if (!m) break;
    if (m[1] !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(m[1])}`;
    if (/^[\w-]+:/m.test(m[2]!)) return 'no PEM block headers are permitted';
    blocks++;
    text = text.slice(m.index + m[0].length);
  }
  if (blocks === 0) return 'must contain at least one CERTIFICATE PEM block';
  return null;
}

function findConditions(csr: any, type: string): any[] {
  return arr(csr.status?.conditions).filter((c: any) => c?.type === type);
}

export function validateCSR(csr: any, old?: any, opts: { allowSettingCertificate?: boolean; allowSettingApproval?: boolean } = {}): Errs {
  const errs: Errs = [];
  const spec = obj(csr.spec);
  const req = bytesOf(spec.request);
  const ce = csrError(req);
  if (ce) errs.push(invalid('spec.request', goBytes(req), ce));
  const usages = arr<string>(spec.usages);
  if (usages.length === 0) errs.push(required('spec.usages'));
  const oldUsages = arr<string>(old?.spec?.usages);
  const allowUnknown = old != null && oldUsages.some((u) => !USAGES.includes(u));
  const allowDup = old != null && new Set(oldUsages).size !== oldUsages.length;
  if (!allowUnknown) usages.forEach((u, i) => !USAGES.includes(u) && errs.push(notSupported(idx('spec.usages', i), u, USAGES)));
  if (!allowDup) {
    const seen = new Set<string>();
    usages.forEach((u, i) => {
      if (seen.has(u)) errs.push(duplicate(idx('spec.usages', i), u));
      seen.add(u);
    });
  }
  const signer = str(spec.signerName);
  if (signer === 'kubernetes.io/legacy-unknown' && old?.spec?.signerName !== 'kubernetes.io/legacy-unknown')
    errs.push(invalid('spec.signerName', signer, 'the legacy signerName is not allowed via this API version'));
  else errs.push(...validateSignerName('spec.signerName', signer));
  if (isSet(spec.expirationSeconds) && spec.expirationSeconds < 600) errs.push(invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
  const cp = 'status.conditions';
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  const oldConds = arr(old?.status?.conditions);
  const allowBoth = oldConds.some((c: any) => c?.type === 'Approved') && oldConds.some((c: any) => c?.type === 'Denied');
  arr(csr.status?.conditions).forEach((c: any, i: number) => {
    const t = str(c?.type);
    if (!t) errs.push(required(child(idx(cp, i), 'type')));
    const allowed = ['Approved', 'Denied', 'Failed'].includes(t) ? ['True'] : ['False', 'True', 'Unknown'];
    if (!str(c?.status)) errs.push(required(child(idx(cp, i), 'status')));
    else if (!allowed.includes(c.status)) errs.push(notSupported(child(idx(cp, i), 'status'), str(c.status), allowed));
    if (!allowBoth) {
      if (t === 'Approved') {
        approved = true;
        if (denied) errs.push(invalid(cp, t, 'Approved and Denied conditions are mutually exclusive'));
      } else if (t === 'Denied') {
        denied = true;
        if (approved) errs.push(invalid(cp, t, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (seen.has(t)) errs.push(duplicate(child(idx(cp, i), 'type'), t));
    seen.add(t);
  });
  const sameCert = old != null && str(csr.status?.certificate) === str(old.status?.certificate);
  if (!sameCert) {
    const e = certificateError(csr.status?.certificate);
    if (e) errs.push(invalid('status.certificate', '<certificate data>', e));
  }
  if (old != null) {
    for (const t of ['Approved', 'Denied', 'Failed'])
      if (findConditions(csr, t).length < findConditions(old, t).length) errs.push(forbidden('status.conditions', `updates may not remove a condition of type ${JSON.stringify(t)}`));
    if (!opts.allowSettingApproval)
      for (const t of ['Approved', 'Denied']) {
        const o = findConditions(old, t);
        const n = findConditions(csr, t);
        if (n.length > o.length) errs.push(forbidden('status.conditions', `updates may not add a condition of type ${JSON.stringify(t)}`));
        else if (n.length === o.length && !jsonEqual(n, o)) errs.push(forbidden('status.conditions', `updates may not modify a condition of type ${JSON.stringify(t)}\n`));
      }
    if (str(csr.status?.certificate) !== str(old.status?.certificate)) {
      if (!opts.allowSettingCertificate) errs.push(forbidden('status.certificate', 'updates may not set certificate content'));
      else if (str(old.status?.certificate)) errs.push(forbidden('status.certificate', 'updates may not modify existing certificate content'));
    }
  }
  return errs;
}

export { isDNS1123Label };
