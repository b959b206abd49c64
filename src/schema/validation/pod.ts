// Pods and pod templates: containers, the pod spec, and the rules of pod updates
// (pkg/apis/core/validation ValidatePodSpec, ValidatePodCreate, ValidatePodUpdate,
// ValidatePodStatusUpdate, ValidatePodTemplateSpec), with the 1.33 defaults of the feature
// gates that change them (relaxed env var names and DNS searches, zero-second sleep actions).
import { stringifyJSON } from '../../codec/int64.js';
import { validateName } from '../../machinery/validation.js';
import { child, duplicate, forbidden, goStringMap, goStrings, GoRepr, goStruct, idx, internal, invalid, key, notFound, notSupported, required, tooLong, type Errs } from './errs.js';
import {
  arr,
  clone,
  FIELD_IMMUTABLE,
  inclusiveRangeError,
  isDNS1123Label,
  isDNS1123Subdomain,
  isHTTPHeaderName,
  isLabelValue,
  isQualifiedName,
  isRelaxedEnvVarName,
  isSet,
  isValidGroupID,
  isValidPortName,
  isValidPortNum,
  isValidUserID,
  isConfigMapKey,
  isDNS1123SubdomainWithUnderscore,
  obj,
  parseIP,
  isIPv4Bytes,
  q,
  qcmp,
  qmilli,
  qrepr,
  qsign,
  qstr,
  str,
  validateAnnotations,
  validateDNS1123Label,
  validateDNS1123Subdomain,
  validateIP,
  validateLabelName,
  validateLabelSelector,
  validateLabels,
  validateLocalDescendingPath,
  validateNonnegative,
  validatePathNoBacksteps,
  validatePortNumOrName,
  validateQualifiedName,
  SUPPORTED_PROTOCOLS,
} from './util.js';
import {
  ENV_DOWNWARD_PATHS,
  validateContainerResourceFieldSelector,
  validateNodeSelector,
  validateNodeSelectorTerm,
  validateObjectFieldSelector,
  validatePullPolicy,
  validateVolumes,
  type PodValidationOptions,
} from './volumes.js';
import { parseQuantity, quantityMilliValue, quantityValue } from './quantity.js';
import { semEqual, semEqualRef, T } from './semantic.js';
import { computePodQOS, getPodQOS } from '../qos.js';
import { getType, jsonFields } from '../types.js';

export type { PodValidationOptions };

const IS_NOT_POSITIVE = 'must be greater than zero';
const MAX_INT32 = 2147483647;

// ---- resource names (pkg/apis/core/helper) ----

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const STANDARD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
]);
export const STANDARD_QUOTA_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.storage',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'persistentvolumeclaims',
  'configmaps',
  'services.nodeports',
  'services.loadbalancers',
]);
const INTEGER_RESOURCES = new Set(['pods', 'resourcequotas', 'services', 'replicationcontrollers', 'secrets', 'configmaps', 'persistentvolumeclaims', 'services.nodeports', 'services.loadbalancers']);

export const isHugePageResourceName = (n: string): boolean => n.startsWith('hugepages-');
export const isQuotaHugePageResourceName = (n: string): boolean => n.startsWith('hugepages-') || n.startsWith('requests.hugepages-');
export const isNativeResource = (n: string): boolean => !n.includes('/') || n.includes('kubernetes.io/');
export function isExtendedResourceName(n: string): boolean {
  if (isNativeResource(n) || n.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${n}`).length === 0;
}
export const isOvercommitAllowed = (n: string): boolean => isNativeResource(n) && !isHugePageResourceName(n);
export const isIntegerResourceName = (n: string): boolean => INTEGER_RESOURCES.has(n) || isExtendedResourceName(n);
export const isStandardResourceName = (n: string): boolean => STANDARD_RESOURCES.has(n) || isQuotaHugePageResourceName(n);
export const isStandardQuotaResourceName = (n: string): boolean => STANDARD_QUOTA_RESOURCES.has(n) || isQuotaHugePageResourceName(n);

export function validateResourceName(name: string, path: string): Errs {
  const errs = isQualifiedName(name).map((m) => invalid(path, name, m));
  if (errs.length) return errs;
  if (!name.includes('/') && !isStandardResourceName(name)) return [invalid(path, name, 'must be a standard resource type or fully qualified')];
  return [];
}

export function validateContainerResourceName(name: string, path: string): Errs {
  const errs = validateResourceName(name, path);
  if (!name.includes('/')) {
    if (!(STANDARD_CONTAINER_RESOURCES.has(name) || isHugePageResourceName(name))) return [...errs, invalid(path, name, 'must be a standard resource for containers')];
  } else if (!isNativeResource(name)) {
    if (!isExtendedResourceName(name)) return [...errs, invalid(path, name, "doesn't follow extended resource name standard")];
  }
  return errs;
}

/** ValidateResourceQuantityValue */
export function validateResourceQuantityValue(resource: string, value: unknown, path: string): Errs {
  const errs: Errs = [];
  if (qsign(value) < 0) errs.push(invalid(path, qstr(value), 'must be greater than or equal to 0'));
  if (isIntegerResourceName(resource) && qmilli(value) % 1000n !== 0n) errs.push(invalid(path, qrepr(value), 'must be an integer'));
  return errs;
}

/** helper.IsHugePageResourceValueDivisible: whole bytes of the value (Value() rounds up) over a whole-byte page size */
function hugePageDivisible(name: string, value: unknown): boolean {
  const size = parseQuantity(name.slice('hugepages-'.length));
  const v = parseQuantity(value);
  if (!size || !v || size.nano <= 0n || quantityMilliValue(size) % 1000n !== 0n) return false;
  return quantityValue(v) % quantityValue(size) === 0n;
}

/** ValidateContainerResourceRequirements (a pod's overhead and a RuntimeClass's too, as limits alone) */
export function validateResourceRequirements(req: any, podClaimNames: Set<string>, path: string): Errs {
  const errs: Errs = [];
  const limPath = child(path, 'limits');
  const reqPath = child(path, 'requests');
  const limits = obj(req.limits);
  const requests = obj(req.requests);
  let limCPUMem = false;
  let reqCPUMem = false;
  let limHuge = false;
  let reqHuge = false;
  for (const [name, qty] of Object.entries(limits)) {
    const p = key(limPath, name);
    errs.push(...validateContainerResourceName(name, p));
    errs.push(...validateResourceQuantityValue(name, qty, p));
    if (isHugePageResourceName(name)) {
      limHuge = true;
      if (!hugePageDivisible(name, qty)) errs.push(invalid(p, qstr(qty), `${qstr(qty)} is not positive integer multiple of ${name}`));
    }
    if (name === 'cpu' || name === 'memory') limCPUMem = true;
  }
  for (const [name, qty] of Object.entries(requests)) {
    const p = key(reqPath, name);
    errs.push(...validateContainerResourceName(name, p));
    errs.push(...validateResourceQuantityValue(name, qty, p));
    if (Object.prototype.hasOwnProperty.call(limits, name)) {
      const lim = limits[name];
      if (qcmp(qty, lim) !== 0 && !isOvercommitAllowed(name)) errs.push(invalid(reqPath, qstr(qty), `must be equal to ${name} limit of ${qstr(lim)}`));
      else if (qcmp(qty, lim) > 0) errs.push(invalid(reqPath, qstr(qty), `must be less than or equal to ${name} limit of ${qstr(lim)}`));
    } else if (!isOvercommitAllowed(name)) errs.push(required(limPath, 'Limit must be set for non overcommitable resources'));
    if (isHugePageResourceName(name)) {
      reqHuge = true;
      if (!hugePageDivisible(name, qty)) errs.push(invalid(p, qstr(qty), `${qstr(qty)} is not positive integer multiple of ${name}`));
    }
    if (name === 'cpu' || name === 'memory') reqCPUMem = true;
  }
  if (!limCPUMem && !reqCPUMem && (reqHuge || limHuge)) errs.push(forbidden(path, 'HugePages require cpu or memory'));
  errs.push(...validateResourceClaimNames(arr(req.claims), podClaimNames, child(path, 'claims')));
  return errs;
}

function validateResourceClaimNames(claims: any[], podClaimNames: Set<string>, path: string): Errs {
  const errs: Errs = [];
  const names = new Set<string>();
  claims.forEach((c, i) => {
    const name = str(c?.name);
    const p = idx(path, i);
    if (!name) {
      errs.push(required(p));
      return;
    }
    if (names.has(name)) errs.push(duplicate(p, name));
    else {
      let k = name;
      const reqName = str(c.request);
      if (reqName) {
        errs.push(...validateDNS1123Label(reqName, child(p, 'request')));
        k += '/' + reqName;
      }
      if (names.has(k)) errs.push(duplicate(p, k));
      else if (!reqName) for (const n of names) if (n.includes('/') && n.slice(0, n.indexOf('/')) === name) errs.push(duplicate(p, name));
      names.add(k);
    }
    if (!podClaimNames.has(name)) {
      const list = [...podClaimNames].sort();
      errs.push(notFound(p, name, `must be one of the names in pod.spec.resourceClaims${list.length ? ': ' + list.join(', ') : ' which is empty'}`));
    }
  });
  return errs;
}

// ---- containers ----

function validateContainerPorts(ports: any[], path: string): Errs {
  const errs: Errs = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const ip = idx(path, i);
    const name = str(port?.name);
    if (name) {
      const msgs = isValidPortName(name);
      if (msgs.length) for (const m of msgs) errs.push(invalid(child(ip, 'name'), name, m));
      else if (names.has(name)) errs.push(duplicate(child(ip, 'name'), name));
      else names.add(name);
    }
    const cp = typeof port?.containerPort === 'number' ? port.containerPort : 0;
    if (cp === 0) errs.push(required(child(ip, 'containerPort')));
    else for (const m of isValidPortNum(cp)) errs.push(invalid(child(ip, 'containerPort'), cp, m));
    const hp = typeof port?.hostPort === 'number' ? port.hostPort : 0;
    if (hp !== 0) for (const m of isValidPortNum(hp)) errs.push(invalid(child(ip, 'hostPort'), hp, m));
    const proto = str(port?.protocol) || 'TCP';
    if (!SUPPORTED_PROTOCOLS.includes(proto)) errs.push(notSupported(child(ip, 'protocol'), proto, SUPPORTED_PROTOCOLS));
  });
  return errs;
}

function validateEnv(vars: any[], path: string): Errs {
  const errs: Errs = [];
  vars.forEach((ev, i) => {
    const ip = idx(path, i);
    const name = str(ev?.name);
    if (!name) errs.push(required(child(ip, 'name')));
    else for (const m of isRelaxedEnvVarName(name)) errs.push(invalid(child(ip, 'name'), name, m));
    errs.push(...validateEnvVarValueFrom(obj(ev), child(ip, 'valueFrom')));
  });
  return errs;
}

function validateKeySelector(s: any, path: string): Errs {
  const errs: Errs = [];
  const name = str(s.name);
  for (const m of validateName('subdomain', name, false)) errs.push(invalid(child(path, 'name'), name, m));
  const k = str(s.key);
  if (!k) errs.push(required(child(path, 'key')));
  else for (const m of isConfigMapKey(k)) errs.push(invalid(child(path, 'key'), k, m));
  return errs;
}

function validateEnvVarValueFrom(ev: any, path: string): Errs {
  const vf = ev.valueFrom;
  if (vf == null) return [];
  const errs: Errs = [];
  let n = 0;
  if (vf.fieldRef != null) {
    n++;
    errs.push(...validateObjectFieldSelector(vf.fieldRef, ENV_DOWNWARD_PATHS, child(path, 'fieldRef')));
  }
  if (vf.resourceFieldRef != null) {
    n++;
    errs.push(...validateContainerResourceFieldSelector(vf.resourceFieldRef, child(path, 'resourceFieldRef'), false));
  }
  if (vf.configMapKeyRef != null) {
    n++;
    errs.push(...validateKeySelector(vf.configMapKeyRef, child(path, 'configMapKeyRef')));
  }
  if (vf.secretKeyRef != null) {
    n++;
    errs.push(...validateKeySelector(vf.secretKeyRef, child(path, 'secretKeyRef')));
  }
  if (n === 0) errs.push(invalid(path, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
  else if (str(ev.value)) errs.push(invalid(path, '', 'may not be specified when `value` is not empty'));
  else if (n > 1) errs.push(invalid(path, '', 'may not have more than one field specified at a time'));
  return errs;
}

function validateEnvFrom(vars: any[], path: string): Errs {
  const errs: Errs = [];
  vars.forEach((ev, i) => {
    const ip = idx(path, i);
    const prefix = str(ev?.prefix);
    if (prefix) for (const m of isRelaxedEnvVarName(prefix)) errs.push(invalid(child(ip, 'prefix'), prefix, m));
    let n = 0;
    for (const [f, p] of [
      ['configMapRef', 'configMapRef'],
      ['secretRef', 'secretRef'],
    ] as const) {
      const ref = ev?.[f];
      if (ref == null) continue;
      n++;
      const name = str(ref.name);
      if (!name) errs.push(required(child(ip, p, 'name')));
      else for (const m of validateName('subdomain', name, true)) errs.push(invalid(child(ip, p, 'name'), name, m));
    }
    if (n === 0) errs.push(invalid(path, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (n > 1) errs.push(invalid(path, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

function validateVolumeMounts(mounts: any[], devices: Map<string, string>, vols: Map<string, any>, container: any, path: string): Errs {
  const errs: Errs = [];
  const mountpoints = new Set<string>();
  const devPaths = new Set(devices.values());
  mounts.forEach((m, i) => {
    const ip = idx(path, i);
    const name = str(m?.name);
    const mp = str(m?.mountPath);
    if (!name) errs.push(required(child(ip, 'name')));
    if (!vols.has(name)) errs.push(notFound(child(ip, 'name'), name));
    if (!mp) errs.push(required(child(ip, 'mountPath')));
    if (mountpoints.has(mp)) errs.push(invalid(child(ip, 'mountPath'), mp, 'must be unique'));
    mountpoints.add(mp);
    if (devices.has(name)) errs.push(invalid(child(ip, 'name'), name, 'must not already exist in volumeDevices'));
    if (devPaths.has(mp)) errs.push(invalid(child(ip, 'mountPath'), mp, 'must not already exist as a path in volumeDevices'));
    const v = vols.get(name);
    if (v?.image != null) {
      if (str(m.subPath)) errs.push(invalid(child(ip, 'subPath'), str(m.subPath), 'not allowed in image volume sources'));
      if (str(m.subPathExpr)) errs.push(invalid(child(ip, 'subPathExpr'), str(m.subPathExpr), 'not allowed in image volume sources'));
    }
    if (str(m?.subPath)) errs.push(...validateLocalDescendingPath(str(m.subPath), child(path, 'subPath')));
    if (str(m?.subPathExpr)) {
      if (str(m.subPath)) errs.push(invalid(child(ip, 'subPathExpr'), str(m.subPathExpr), 'subPathExpr and subPath are mutually exclusive'));
      errs.push(...validateLocalDescendingPath(str(m.subPathExpr), child(path, 'subPathExpr')));
    }
    if (isSet(m?.mountPropagation)) {
      const mpp = child(path, 'mountPropagation');
      const supported = ['Bidirectional', 'HostToContainer', 'None'];
      if (!supported.includes(m.mountPropagation)) errs.push(notSupported(mpp, str(m.mountPropagation), supported));
      if (container) {
        const priv = container.securityContext?.privileged === true;
        if (m.mountPropagation === 'Bidirectional' && !priv) errs.push(forbidden(mpp, 'Bidirectional mount propagation is available only to privileged containers'));
      }
    }
    if (isSet(m?.recursiveReadOnly)) {
      const rp = child(path, 'recursiveReadOnly');
      const rro = m.recursiveReadOnly;
      if (rro === 'Enabled' || rro === 'IfPossible') {
        if (!m.readOnly) errs.push(forbidden(rp, 'may only be specified when readOnly is true'));
        if (isSet(m.mountPropagation) && m.mountPropagation !== 'None') errs.push(forbidden(rp, 'may only be specified when mountPropagation is None or not specified'));
      } else if (rro !== 'Disabled') errs.push(notSupported(rp, str(rro), ['Disabled', 'Enabled', 'IfPossible']));
    }
  });
  return errs;
}

function validateVolumeDevices(devices: any[], mounts: Map<string, string>, vols: Map<string, any>, path: string): Errs {
  const errs: Errs = [];
  const paths = new Set<string>();
  const names = new Set<string>();
  const mountPaths = new Set(mounts.values());
  devices.forEach((d, i) => {
    const ip = idx(path, i);
    const name = str(d?.name);
    const dp = str(d?.devicePath);
    const v = vols.get(name);
    const matched = vols.has(name);
    const isPVC = matched && (v.persistentVolumeClaim != null || v.ephemeral != null);
    if (!name) errs.push(required(child(ip, 'name')));
    if (names.has(name)) errs.push(invalid(child(ip, 'name'), name, 'must be unique'));
    if (matched && !isPVC) errs.push(invalid(child(ip, 'name'), name, 'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'));
    if (!matched) errs.push(notFound(child(ip, 'name'), name));
    if (!dp) errs.push(required(child(ip, 'devicePath')));
    if (paths.has(dp)) errs.push(invalid(child(ip, 'devicePath'), dp, 'must be unique'));
    if (dp && validatePathNoBacksteps(dp, '').length) errs.push(invalid(child(ip, 'devicePath'), dp, "can not contain backsteps ('..')"));
    else paths.add(dp);
    if (mounts.has(name)) errs.push(invalid(child(ip, 'name'), name, 'must not already exist in volumeMounts'));
    if (mountPaths.has(dp)) errs.push(invalid(child(ip, 'devicePath'), dp, 'must not already exist as a path in volumeMounts'));
    if (name) names.add(name);
  });
  return errs;
}

function validateResizePolicy(list: any[], path: string, podRestartPolicy: string): Errs {
  const errs: Errs = [];
  const seen = new Set<string>();
  list.forEach((p, i) => {
    const rn = str(p?.resourceName);
    const rp = str(p?.restartPolicy);
    if (seen.has(rn)) errs.push(duplicate(idx(path, i), rn));
    seen.add(rn);
    if (rn === '') errs.push(required(path));
    else if (rn !== 'cpu' && rn !== 'memory') errs.push(notSupported(path, rn, ['cpu', 'memory']));
    if (rp === '') errs.push(required(path));
    else if (rp !== 'NotRequired' && rp !== 'RestartContainer') errs.push(notSupported(path, rp, ['NotRequired', 'RestartContainer']));
    if (podRestartPolicy === 'Never' && rp !== 'NotRequired') errs.push(invalid(path, rp, "must be 'NotRequired' when `restartPolicy` is 'Never'"));
  });
  return errs;
}

function validateSeccompProfileField(sp: any, path: string): Errs {
  if (sp == null) return [];
  const errs: Errs = [];
  const t = str(sp.type);
  if (t === '') errs.push(required(child(path, 'type'), 'type is required when seccompProfile is set'));
  else if (!['Localhost', 'RuntimeDefault', 'Unconfined'].includes(t)) errs.push(notSupported(child(path, 'type'), t, ['Localhost', 'RuntimeDefault', 'Unconfined']));
  if (t === 'Localhost') {
    if (!isSet(sp.localhostProfile)) errs.push(required(child(path, 'localhostProfile'), 'must be set when seccomp type is Localhost'));
    else errs.push(...validateLocalDescendingPath(str(sp.localhostProfile), child(path, 'localhostProfile')));
  } else if (isSet(sp.localhostProfile)) {
    errs.push(invalid(child(path, 'localhostProfile'), goStruct('core.SeccompProfile', [['Type', JSON.stringify(t)], ['LocalhostProfile', '(*string)(0xc000010000)']]), 'can only be set when seccomp type is Localhost'));
  }
  return errs;
}

function validateAppArmorProfileField(p: any, path: string): Errs {
  if (p == null) return [];
  const errs: Errs = [];
  const t = str(p.type);
  if (t === 'Localhost') {
    if (!isSet(p.localhostProfile)) errs.push(required(child(path, 'localhostProfile'), 'must be set when AppArmor type is Localhost'));
    else {
      const lp = str(p.localhostProfile);
      if (lp.trim() !== lp) errs.push(invalid(child(path, 'localhostProfile'), lp, 'must not be padded with whitespace'));
      else if (lp === '') errs.push(required(child(path, 'localhostProfile'), 'must be set when AppArmor type is Localhost'));
      if (Buffer.byteLength(lp) > 4095) errs.push(tooLong(child(path, 'localhostProfile'), 4095));
    }
  } else if (t === 'RuntimeDefault' || t === 'Unconfined') {
    if (isSet(p.localhostProfile)) errs.push(invalid(child(path, 'localhostProfile'), str(p.localhostProfile), 'can only be set when AppArmor type is Localhost'));
  } else if (t === '') errs.push(required(child(path, 'type'), 'type is required when appArmorProfile is set'));
  else errs.push(notSupported(child(path, 'type'), t, ['Localhost', 'RuntimeDefault', 'Unconfined']));
  return errs;
}

const CTRL = /[\x00-\x1f\x7f]/;
function validateWindowsOptions(w: any, path: string): Errs {
  if (w == null) return [];
  const errs: Errs = [];
  if (isSet(w.gmsaCredentialSpecName))
    for (const m of isDNS1123Subdomain(str(w.gmsaCredentialSpecName))) errs.push(invalid(child(path, 'gmsaCredentialSpecName'), str(w.gmsaCredentialSpecName), m));
  if (isSet(w.gmsaCredentialSpec)) {
    const l = Buffer.byteLength(str(w.gmsaCredentialSpec));
    if (l === 0) errs.push(invalid(child(path, 'gmsaCredentialSpec'), '', 'gmsaCredentialSpec cannot be an empty string'));
    else if (l > 64 * 1024) errs.push(invalid(child(path, 'gmsaCredentialSpec'), str(w.gmsaCredentialSpec), 'gmsaCredentialSpec size must be under 64 KiB'));
  }
  if (isSet(w.runAsUserName)) {
    const u = str(w.runAsUserName);
    const p = child(path, 'runAsUserName');
    const parts = u.split('\\');
    if (u.length === 0) errs.push(invalid(p, u, 'runAsUserName cannot be an empty string'));
    else if (CTRL.test(u)) errs.push(invalid(p, u, 'runAsUserName cannot contain control characters'));
    else if (parts.length > 2) errs.push(invalid(p, u, 'runAsUserName cannot contain more than one backslash'));
    else {
      const hasDomain = parts.length === 2;
      const domain = hasDomain ? parts[0]! : '';
      const user = hasDomain ? parts[1]! : parts[0]!;
      if (domain.length >= 256) errs.push(invalid(p, u, "runAsUserName's Domain length must be under 256 characters"));
      const netbios = /^[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}$/.test(domain);
      const dns = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/.test(domain);
      if (hasDomain && !(netbios || dns)) errs.push(invalid(p, u, "runAsUserName's Domain doesn't match the NetBios nor the DNS format"));
      if (user.length === 0) errs.push(invalid(p, u, "runAsUserName's User cannot be empty"));
      else if (user.length > 104) errs.push(invalid(p, u, "runAsUserName's User length must not be longer than 104 characters"));
      if (/^[. ]+$/.test(user)) errs.push(invalid(p, u, "runAsUserName's User cannot contain only periods or spaces"));
      if (/["/\\:;|=,+*?<>@[\]]/.test(user)) errs.push(invalid(p, u, `runAsUserName's User cannot contain the following characters: "/\\:;|=,+*?<>@[]`));
    }
  }
  return errs;
}

/**
 * What the cluster allows its containers (kube-apiserver's --allow-privileged, which Kubernetes
 * also keeps process-wide). Keelson's server sets it at start; true until then.
 */
export const clusterCapabilities = { allowPrivileged: true };

function validateSecurityContext(sc: any, path: string, hostUsers: boolean): Errs {
  if (sc == null) return [];
  const errs: Errs = [];
  if (sc.privileged === true && !clusterCapabilities.allowPrivileged) errs.push(forbidden(child(path, 'privileged'), 'disallowed by cluster policy'));
  if (isSet(sc.runAsUser)) for (const m of isValidUserID(sc.runAsUser)) errs.push(invalid(child(path, 'runAsUser'), sc.runAsUser, m));
  if (isSet(sc.runAsGroup)) for (const m of isValidGroupID(sc.runAsGroup)) errs.push(invalid(child(path, 'runAsGroup'), sc.runAsGroup, m));
  if (isSet(sc.procMount)) {
    if (sc.procMount !== 'Default' && sc.procMount !== 'Unmasked') errs.push(notSupported(child(path, 'procMount'), str(sc.procMount), ['Default', 'Unmasked']));
    if (hostUsers && sc.procMount === 'Unmasked') errs.push(invalid(child(path, 'procMount'), 'Unmasked', '`hostUsers` must be false to use `Unmasked`'));
  }
  errs.push(...validateSeccompProfileField(sc.seccompProfile, child(path, 'seccompProfile')));
  if (sc.allowPrivilegeEscalation === false) {
    const repr = new GoRepr('core.SecurityContext{...}');
    if (sc.privileged === true) errs.push(invalid(path, repr, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
    for (const c of arr(sc.capabilities?.add))
      if (c === 'CAP_SYS_ADMIN') errs.push(invalid(path, repr, 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN'));
  }
  errs.push(...validateWindowsOptions(sc.windowsOptions, child(path, 'windowsOptions')));
  errs.push(...validateAppArmorProfileField(sc.appArmorProfile, child(path, 'appArmorProfile')));
  return errs;
}

function validateContainerCommon(c: any, vols: Map<string, any>, podClaimNames: Set<string>, path: string, podRestartPolicy: string, hostUsers: boolean): Errs {
  const errs: Errs = [];
  const name = str(c.name);
  if (!name) errs.push(required(child(path, 'name')));
  else errs.push(...validateDNS1123Label(name, child(path, 'name')));
  if (!str(c.image)) errs.push(required(child(path, 'image')));
  const tmp = str(c.terminationMessagePolicy);
  if (tmp && tmp !== 'File' && tmp !== 'FallbackToLogsOnError') errs.push(notSupported(child(path, 'terminationMessagePolicy'), tmp, ['File', 'FallbackToLogsOnError']));
  const mountMap = new Map<string, string>(arr(c.volumeMounts).map((m: any) => [str(m?.name), str(m?.mountPath)]));
  const devMap = new Map<string, string>(arr(c.volumeDevices).map((d: any) => [str(d?.name), str(d?.devicePath)]));
  errs.push(...validateContainerPorts(arr(c.ports), child(path, 'ports')));
  errs.push(...validateEnv(arr(c.env), child(path, 'env')));
  errs.push(...validateEnvFrom(arr(c.envFrom), child(path, 'envFrom')));
  errs.push(...validateVolumeMounts(arr(c.volumeMounts), devMap, vols, c, child(path, 'volumeMounts')));
  errs.push(...validateVolumeDevices(arr(c.volumeDevices), mountMap, vols, child(path, 'volumeDevices')));
  errs.push(...validatePullPolicy(c.imagePullPolicy, child(path, 'imagePullPolicy')));
  errs.push(...validateResourceRequirements(obj(c.resources), podClaimNames, child(path, 'resources')));
  errs.push(...validateResizePolicy(arr(c.resizePolicy), child(path, 'resizePolicy'), podRestartPolicy));
  errs.push(...validateSecurityContext(c.securityContext, child(path, 'securityContext'), hostUsers));
  return errs;
}

function validateHandler(h: any, grace: number | undefined, path: string, allowSleep: boolean, allowGRPC: boolean): Errs {
  const errs: Errs = [];
  let n = 0;
  const one = (f: string, fn: () => Errs) => {
    if (h[f] == null) return;
    if (n > 0) errs.push(forbidden(child(path, f), 'may not specify more than 1 handler type'));
    else {
      n++;
      errs.push(...fn());
    }
  };
  one('exec', () => (arr(h.exec.command).length === 0 ? [required(child(path, 'exec', 'command'))] : []));
  one('httpGet', () => {
    const p = child(path, 'httpGet');
    const e: Errs = [];
    const g = h.httpGet;
    e.push(...validatePortNumOrName(g.port, child(p, 'port')));
    const scheme = str(g.scheme) || 'HTTP';
    if (scheme !== 'HTTP' && scheme !== 'HTTPS') e.push(notSupported(child(p, 'scheme'), scheme, ['HTTP', 'HTTPS']));
    for (const hd of arr(g.httpHeaders)) for (const m of isHTTPHeaderName(str(hd?.name))) e.push(invalid(child(p, 'httpHeaders'), str(hd?.name), m));
    return e;
  });
  one('tcpSocket', () => validatePortNumOrName(h.tcpSocket.port, child(path, 'tcpSocket', 'port')));
  if (allowGRPC)
    one('grpc', () => {
      const port = typeof h.grpc.port === 'number' ? h.grpc.port : 0;
      return isValidPortNum(port).map((m) => invalid(child(path, 'grpc', 'port'), port, m));
    });
  if (allowSleep)
    one('sleep', () => {
      const s = typeof h.sleep.seconds === 'number' ? h.sleep.seconds : 0;
      if (grace !== undefined && (s < 0 || s > grace)) return [invalid(child(path, 'sleep'), s, `must be non-negative and less than terminationGracePeriodSeconds (${grace})`)];
      return [];
    });
  if (n === 0) errs.push(required(path, 'must specify a handler type'));
  return errs;
}

function validateProbe(p: any, grace: number | undefined, path: string): Errs {
  const errs = validateHandler(p, grace, path, false, true);
  for (const f of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'])
    if (typeof p[f] === 'number') errs.push(...validateNonnegative(p[f], child(path, f)));
  if (isSet(p.terminationGracePeriodSeconds) && p.terminationGracePeriodSeconds <= 0)
    errs.push(invalid(child(path, 'terminationGracePeriodSeconds'), p.terminationGracePeriodSeconds, 'must be greater than 0'));
  return errs;
}

function validateLivenessOrStartup(p: any, grace: number | undefined, path: string): Errs {
  if (p == null) return [];
  const errs = validateProbe(p, grace, path);
  const st = typeof p.successThreshold === 'number' ? p.successThreshold : 1;
  if (st !== 1) errs.push(invalid(child(path, 'successThreshold'), st, 'must be 1'));
  return errs;
}

function validateReadiness(p: any, grace: number | undefined, path: string): Errs {
  if (p == null) return [];
  const errs = validateProbe(p, grace, path);
  if (isSet(p.terminationGracePeriodSeconds)) errs.push(invalid(child(path, 'terminationGracePeriodSeconds'), p.terminationGracePeriodSeconds, 'must not be set for readinessProbes'));
  return errs;
}

function validateLifecycle(l: any, grace: number | undefined, path: string): Errs {
  const errs: Errs = [];
  if (l.postStart != null) errs.push(...validateHandler(l.postStart, grace, child(path, 'postStart'), true, false));
  if (l.preStop != null) errs.push(...validateHandler(l.preStop, grace, child(path, 'preStop'), true, false));
  return errs;
}

function checkHostPortConflicts(containers: any[], path: string, seen = new Set<string>(), firstIndex = 0): Errs {
  const errs: Errs = [];
  containers.forEach((c, ci) => {
    arr(c?.ports).forEach((p: any, pi: number) => {
      const hp = typeof p?.hostPort === 'number' ? p.hostPort : 0;
      if (hp === 0) return;
      const s = `${str(p.protocol) || 'TCP'}/${str(p.hostIP)}/${hp}`;
      if (seen.has(s)) errs.push(duplicate(child(idx(child(idx(path, ci + firstIndex), 'ports'), pi), 'hostPort'), s));
      else seen.add(s);
    });
  });
  return errs;
}

function validateContainers(containers: any[], vols: Map<string, any>, podClaimNames: Set<string>, grace: number | undefined, path: string, restartPolicy: string, hostUsers: boolean): Errs {
  if (containers.length === 0) return [required(path)];
  const errs: Errs = [];
  const names = new Set<string>();
  containers.forEach((c0, i) => {
    const c = obj(c0);
    const p = idx(path, i);
    errs.push(...validateContainerCommon(c, vols, podClaimNames, p, restartPolicy, hostUsers));
    if (names.has(str(c.name))) errs.push(duplicate(child(p, 'name'), str(c.name)));
    else names.add(str(c.name));
    if (c.lifecycle != null) errs.push(...validateLifecycle(c.lifecycle, grace, child(p, 'lifecycle')));
    errs.push(...validateLivenessOrStartup(c.livenessProbe, grace, child(p, 'livenessProbe')));
    errs.push(...validateReadiness(c.readinessProbe, grace, child(p, 'readinessProbe')));
    errs.push(...validateLivenessOrStartup(c.startupProbe, grace, child(p, 'startupProbe')));
    if (isSet(c.restartPolicy)) errs.push(forbidden(child(p, 'restartPolicy'), 'may not be set for non-init containers'));
  });
  errs.push(...checkHostPortConflicts(containers, path));
  return errs;
}

function validateInitContainers(inits: any[], regular: any[], vols: Map<string, any>, podClaimNames: Set<string>, grace: number | undefined, path: string, restartPolicy: string, hostUsers: boolean): Errs {
  const errs: Errs = [];
  const names = new Set<string>(regular.map((c) => str(c?.name)));
  inits.forEach((c0, i) => {
    const c = obj(c0);
    const p = idx(path, i);
    errs.push(...validateContainerCommon(c, vols, podClaimNames, p, restartPolicy, hostUsers));
    let always = false;
    if (isSet(c.restartPolicy)) {
      if (c.restartPolicy !== 'Always') errs.push(notSupported(child(p, 'restartPolicy'), str(c.restartPolicy), ['Always']));
      always = c.restartPolicy === 'Always';
    }
    if (names.has(str(c.name))) errs.push(duplicate(child(p, 'name'), str(c.name)));
    else if (str(c.name)) names.add(str(c.name));
    errs.push(...checkHostPortConflicts([c], path));
    if (always) {
      if (c.lifecycle != null) errs.push(...validateLifecycle(c.lifecycle, grace, child(p, 'lifecycle')));
      errs.push(...validateLivenessOrStartup(c.livenessProbe, grace, child(p, 'livenessProbe')));
      errs.push(...validateReadiness(c.readinessProbe, grace, child(p, 'readinessProbe')));
      errs.push(...validateLivenessOrStartup(c.startupProbe, grace, child(p, 'startupProbe')));
    } else {
      for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'])
        if (c[f] != null) errs.push(forbidden(child(p, f), 'may not be set for init containers without restartPolicy=Always'));
    }
  });
  return errs;
}

const EPHEMERAL_ALLOWED = new Set([
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'envFrom',
  'env',
  'volumeMounts',
  'volumeDevices',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
  'targetContainerName',
]);

function isZeroJSON(v: unknown): boolean {
  return v == null || v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && Object.keys(v as object).length === 0);
}

function validateEphemeralContainers(ecs: any[], containers: any[], inits: any[], vols: Map<string, any>, podClaimNames: Set<string>, path: string, restartPolicy: string, hostUsers: boolean): Errs {
  if (ecs.length === 0) return [];
  const errs: Errs = [];
  const other = new Set<string>([...containers, ...inits].map((c) => str(c?.name)));
  const all = new Set<string>(other);
  ecs.forEach((ec0, i) => {
    const ec = obj(ec0);
    const p = idx(path, i);
    errs.push(...validateContainerCommon(ec, vols, podClaimNames, p, restartPolicy, hostUsers));
    errs.push(...validateContainerOnlyForPod(ec, p));
    if (all.has(str(ec.name))) errs.push(duplicate(child(p, 'name'), str(ec.name)));
    else all.add(str(ec.name));
    if (str(ec.targetContainerName) && !other.has(ec.targetContainerName)) errs.push(notFound(child(p, 'targetContainerName'), str(ec.targetContainerName)));
    for (const [k, v] of Object.entries(ec)) if (!EPHEMERAL_ALLOWED.has(k) && !isZeroJSON(v)) errs.push(forbidden(child(p, k), 'cannot be set for an Ephemeral Container'));
    arr(ec.volumeMounts).forEach((vm: any, j: number) => {
      if (str(vm?.subPath)) errs.push(forbidden(child(idx(child(p, 'volumeMounts'), j), 'subPath'), 'cannot be set for an Ephemeral Container'));
      if (str(vm?.subPathExpr)) errs.push(forbidden(child(idx(child(p, 'volumeMounts'), j), 'subPathExpr'), 'cannot be set for an Ephemeral Container'));
    });
  });
  return errs;
}

function validateContainerOnlyForPod(c: any, path: string): Errs {
  const image = str(c.image);
  if (image.length !== image.trim().length) return [invalid(child(path, 'image'), image, 'must not have leading or trailing whitespace')];
  return [];
}

// ---- the pod spec ----

/** ValidateTolerations (a pod's, and a RuntimeClass's scheduling.tolerations) */
export function validateTolerations(tols: any[], path: string): Errs {
  const errs: Errs = [];
  tols.forEach((t0, i) => {
    const t = obj(t0);
    const p = idx(path, i);
    const k = str(t.key);
    const op = str(t.operator);
    const eff = str(t.effect);
    if (k) errs.push(...validateLabelName(k, child(p, 'key')));
    if (!k && op !== 'Exists') errs.push(invalid(child(p, 'operator'), op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    if (isSet(t.tolerationSeconds) && eff !== 'NoExecute') errs.push(invalid(child(p, 'effect'), eff, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    switch (op) {
      case 'Equal':
      case '': {
        const e = isLabelValue(str(t.value));
        if (e.length) errs.push(invalid(child(p, 'operator'), str(t.value), e.join(';')));
        break;
      }
      case 'Exists':
        if (str(t.value)) errs.push(invalid(child(p, 'operator'), str(t.value), "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(child(p, 'operator'), op, ['Equal', 'Exists']));
    }
    if (eff) errs.push(...validateTaintEffect(eff, true, child(p, 'effect')));
  });
  return errs;
}

export function validateTaintEffect(effect: string, allowEmpty: boolean, path: string): Errs {
  if (!allowEmpty && !effect) return [required(path)];
  if (['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(effect)) return [];
  return [notSupported(path, effect, ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])];
}

function validatePodAffinityTerm(t: any, path: string): Errs {
  const errs: Errs = [];
  errs.push(...validateLabelSelector(t.labelSelector, child(path, 'labelSelector')));
  errs.push(...validateLabelSelector(t.namespaceSelector, child(path, 'namespaceSelector')));
  for (const ns of arr<string>(t.namespaces)) for (const m of isDNS1123Label(str(ns))) errs.push(invalid(child(path, 'namespace'), str(ns), m));
  errs.push(...validateMatchLabelKeysAndMismatch(path, arr(t.matchLabelKeys), arr(t.mismatchLabelKeys), t.labelSelector));
  if (!str(t.topologyKey)) errs.push(required(child(path, 'topologyKey'), 'can not be empty'));
  errs.push(...validateLabelName(str(t.topologyKey), child(path, 'topologyKey')));
  return errs;
}

function validateLabelKeys(path: string, keys: string[], sel: any): Errs {
  if (keys.length === 0) return [];
  if (sel == null) return [forbidden(path, 'must not be specified when labelSelector is not set')];
  const errs: Errs = [];
  keys.forEach((k, i) => errs.push(...validateLabelName(str(k), idx(path, i))));
  return errs;
}

function validateMatchLabelKeysAndMismatch(path: string, match: string[], mismatch: string[], sel: any): Errs {
  const errs: Errs = [];
  errs.push(...validateLabelKeys(child(path, 'matchLabelKeys'), match, sel));
  errs.push(...validateLabelKeys(child(path, 'mismatchLabelKeys'), mismatch, sel));
  if (sel != null) {
    const keyIdx = new Map<string, number>();
    match.forEach((k, i) => keyIdx.set(k, i));
    const selKeys = new Set(Object.keys(obj(sel.matchLabels)));
    for (const e of arr(sel.matchExpressions)) {
      const k = str(e?.key);
      if (keyIdx.has(k) && selKeys.has(k)) errs.push(invalid(idx(path, keyIdx.get(k)!), k, 'exists in both matchLabelKeys and labelSelector'));
      selKeys.add(k);
    }
  }
  const mm = new Set(mismatch);
  match.forEach((k, i) => {
    if (mm.has(k)) errs.push(invalid(idx(child(path, 'matchLabelKeys'), i), k, 'exists in both matchLabelKeys and mismatchLabelKeys'));
  });
  return errs;
}

function validateAffinity(a: any, path: string, opts: PodValidationOptions): Errs {
  if (a == null) return [];
  const errs: Errs = [];
  if (a.nodeAffinity != null) {
    const na = a.nodeAffinity;
    const np = child(path, 'nodeAffinity');
    if (na.requiredDuringSchedulingIgnoredDuringExecution != null)
      errs.push(...validateNodeSelector(na.requiredDuringSchedulingIgnoredDuringExecution, !!opts.allowInvalidLabelValueInRequiredNodeAffinity, child(np, 'requiredDuringSchedulingIgnoredDuringExecution')));
    arr(na.preferredDuringSchedulingIgnoredDuringExecution).forEach((t: any, i: number) => {
      const p = idx(child(np, 'preferredDuringSchedulingIgnoredDuringExecution'), i);
      const w = typeof t?.weight === 'number' ? t.weight : 0;
      if (w <= 0 || w > 100) errs.push(invalid(child(p, 'weight'), w, 'must be in the range 1-100'));
      errs.push(...validateNodeSelectorTerm(obj(t?.preference), true, child(p, 'preference')));
    });
  }
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const pa = a[kind];
    if (pa == null) continue;
    const pp = child(path, kind);
    arr(pa.requiredDuringSchedulingIgnoredDuringExecution).forEach((t: any, i: number) =>
      errs.push(...validatePodAffinityTerm(obj(t), idx(child(pp, 'requiredDuringSchedulingIgnoredDuringExecution'), i))),
    );
    arr(pa.preferredDuringSchedulingIgnoredDuringExecution).forEach((t: any, i: number) => {
      const p = idx(child(pp, 'preferredDuringSchedulingIgnoredDuringExecution'), i);
      const w = typeof t?.weight === 'number' ? t.weight : 0;
      if (w <= 0 || w > 100) errs.push(invalid(child(p, 'weight'), w, 'must be in the range 1-100'));
      errs.push(...validatePodAffinityTerm(obj(t?.podAffinityTerm), child(p, 'podAffinityTerm')));
    });
  }
  return errs;
}

function validateDNSConfig(cfg: any, dnsPolicy: string, path: string): Errs {
  const errs: Errs = [];
  if (dnsPolicy === 'None') {
    if (cfg == null) return [required(path, 'must provide `dnsConfig` when `dnsPolicy` is None')];
    if (arr(cfg.nameservers).length === 0) return [required(child(path, 'nameservers'), 'must provide at least one DNS nameserver when `dnsPolicy` is None')];
  }
  if (cfg == null) return errs;
  const ns = arr<string>(cfg.nameservers);
  if (ns.length > 3) errs.push(invalid(child(path, 'nameservers'), goStrings(ns), 'must not have more than 3 nameservers'));
  ns.forEach((n, i) => errs.push(...validateIP(idx(child(path, 'nameservers'), i), str(n))));
  const searches = arr<string>(cfg.searches);
  if (searches.length > 32) errs.push(invalid(child(path, 'searches'), goStrings(searches), 'must not have more than 32 search paths'));
  if (searches.join(' ').length > 2048) errs.push(invalid(child(path, 'searches'), goStrings(searches), 'must not have more than 2048 characters (including spaces) in the search list'));
  searches.forEach((s, i) => {
    if (s === '.') return;
    const t = str(s).replace(/\.$/, '');
    for (const m of isDNS1123SubdomainWithUnderscore(t)) errs.push(invalid(idx(child(path, 'searches'), i), t, m));
  });
  arr(cfg.options).forEach((o: any, i: number) => {
    if (!str(o?.name)) errs.push(required(idx(child(path, 'options'), i), 'must not be empty'));
  });
  return errs;
}

const SYSCTL_RE = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
const SYSCTL_RE_STR = '^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$';

function sysctlNamespace(name: string): 'net' | 'ipc' | '' {
  let n = name;
  const dot = n.indexOf('.');
  const slash = n.indexOf('/');
  if (slash >= 0 && (dot < 0 || slash < dot)) n = n.replace(/\./g, '\u0000').replace(/\//g, '.').replace(/\u0000/g, '/');
  if (n.startsWith('net.')) return 'net';
  if (['kernel.shm_rmid_forced', 'kernel.msgmax', 'kernel.msgmnb', 'kernel.msgmni', 'kernel.sem', 'kernel.shmall', 'kernel.shmmax', 'kernel.shmmni'].includes(n) || n.startsWith('fs.mqueue.')) return 'ipc';
  return '';
}

function validatePodSecurityContext(sc: any, spec: any, path: string): Errs {
  if (sc == null) return [];
  const errs: Errs = [];
  if (isSet(sc.fsGroup)) for (const m of isValidGroupID(sc.fsGroup)) errs.push(invalid(child(path, 'fsGroup'), sc.fsGroup, m));
  if (isSet(sc.runAsUser)) for (const m of isValidUserID(sc.runAsUser)) errs.push(invalid(child(path, 'runAsUser'), sc.runAsUser, m));
  if (isSet(sc.runAsGroup)) for (const m of isValidGroupID(sc.runAsGroup)) errs.push(invalid(child(path, 'runAsGroup'), sc.runAsGroup, m));
  arr<number>(sc.supplementalGroups).forEach((g, i) => {
    for (const m of isValidGroupID(g)) errs.push(invalid(idx(child(path, 'supplementalGroups'), i), g, m));
  });
  if (spec.shareProcessNamespace === true && spec.hostPID === true) errs.push(invalid(child(path, 'shareProcessNamespace'), true, 'ShareProcessNamespace and HostPID cannot both be enabled'));
  const sysctls = arr(sc.sysctls);
  if (sysctls.length) {
    const sp = child(path, 'sysctls');
    const names = new Set<string>();
    sysctls.forEach((s: any, i: number) => {
      const n = str(s?.name);
      const np = child(idx(sp, i), 'name');
      if (!n) errs.push(required(np));
      else if (n.length > 253 || !SYSCTL_RE.test(n)) errs.push(invalid(np, n, `must have at most 253 characters and match regex ${SYSCTL_RE_STR}`));
      else if (names.has(n)) errs.push(duplicate(np, n));
      const ns = sysctlNamespace(n);
      if (spec.hostNetwork === true && ns === 'net') errs.push(invalid(np, n, "may not be specified when 'hostNetwork' is true"));
      else if (spec.hostIPC === true && ns === 'ipc') errs.push(invalid(np, n, "may not be specified when 'hostIPC' is true"));
      names.add(n);
    });
  }
  if (isSet(sc.fsGroupChangePolicy) && !['Always', 'OnRootMismatch'].includes(sc.fsGroupChangePolicy))
    errs.push(notSupported(child(path, 'fsGroupChangePolicy'), str(sc.fsGroupChangePolicy), ['Always', 'OnRootMismatch']));
  errs.push(...validateSeccompProfileField(sc.seccompProfile, child(path, 'seccompProfile')));
  errs.push(...validateWindowsOptions(sc.windowsOptions, child(path, 'windowsOptions')));
  errs.push(...validateAppArmorProfileField(sc.appArmorProfile, child(path, 'appArmorProfile')));
  if (isSet(sc.supplementalGroupsPolicy) && !['Merge', 'Strict'].includes(sc.supplementalGroupsPolicy))
    errs.push(notSupported(child(path, 'supplementalGroupsPolicy'), str(sc.supplementalGroupsPolicy), ['Merge', 'Strict']));
  // the SELinuxMount feature is off in 1.33, so only Recursive is accepted
  if (isSet(sc.seLinuxChangePolicy) && sc.seLinuxChangePolicy !== 'Recursive') errs.push(notSupported(child(path, 'seLinuxChangePolicy'), str(sc.seLinuxChangePolicy), ['Recursive']));
  return errs;
}

function validateTopologySpreadConstraints(cs: any[], path: string, opts: PodValidationOptions): Errs {
  const errs: Errs = [];
  cs.forEach((c0, i) => {
    const c = obj(c0);
    const p = idx(path, i);
    const skew = typeof c.maxSkew === 'number' ? c.maxSkew : 0;
    if (skew <= 0) errs.push(invalid(child(p, 'maxSkew'), skew, IS_NOT_POSITIVE));
    if (!str(c.topologyKey)) errs.push(required(child(p, 'topologyKey'), 'can not be empty'));
    const wu = str(c.whenUnsatisfiable);
    if (wu !== 'DoNotSchedule' && wu !== 'ScheduleAnyway') errs.push(notSupported(child(p, 'whenUnsatisfiable'), wu, ['DoNotSchedule', 'ScheduleAnyway']));
    for (const other of cs.slice(i + 1))
      if (str(other?.topologyKey) === str(c.topologyKey) && str(other?.whenUnsatisfiable) === wu) {
        errs.push(duplicate(child(p, '{topologyKey, whenUnsatisfiable}'), `{${str(c.topologyKey)}, ${wu}}`));
        break;
      }
    if (isSet(c.minDomains)) {
      if (c.minDomains <= 0) errs.push(invalid(child(p, 'minDomains'), c.minDomains, IS_NOT_POSITIVE));
      if (wu !== 'DoNotSchedule') errs.push(invalid(child(p, 'minDomains'), c.minDomains, `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${wu}`));
    }
    for (const f of ['nodeAffinityPolicy', 'nodeTaintsPolicy'])
      if (isSet(c[f]) && c[f] !== 'Honor' && c[f] !== 'Ignore') errs.push(notSupported(child(p, f), str(c[f]), ['Honor', 'Ignore']));
    const mlk = arr<string>(c.matchLabelKeys);
    if (mlk.length) {
      const mp = child(p, 'matchLabelKeys');
      const selKeys = new Set<string>();
      if (c.labelSelector != null) {
        for (const k of Object.keys(obj(c.labelSelector.matchLabels))) selKeys.add(k);
        for (const e of arr(c.labelSelector.matchExpressions)) selKeys.add(str(e?.key));
      } else errs.push(forbidden(mp, 'must not be specified when labelSelector is not set'));
      mlk.forEach((k, j) => {
        errs.push(...validateLabelName(str(k), idx(mp, j)));
        if (selKeys.has(k)) errs.push(invalid(idx(mp, j), k, 'exists in both matchLabelKeys and labelSelector'));
      });
    }
    if (!opts.allowInvalidTopologySpreadConstraintLabelSelector) errs.push(...validateLabelSelector(c.labelSelector, child(p, 'labelSelector')));
  });
  return errs;
}

function allContainers(spec: any): [any, string][] {
  const out: [any, string][] = [];
  arr(spec.initContainers).forEach((c, i) => out.push([obj(c), idx('initContainers', i)]));
  arr(spec.containers).forEach((c, i) => out.push([obj(c), idx('containers', i)]));
  arr(spec.ephemeralContainers).forEach((c, i) => out.push([obj(c), idx('ephemeralContainers', i)]));
  return out;
}

function validateWindowsHostProcess(spec: any, path: string): Errs {
  const errs: Errs = [];
  const podHP = spec.securityContext?.windowsOptions?.hostProcess;
  let count = 0;
  let hpCount = 0;
  for (const [c, cp] of allContainers(spec)) {
    count++;
    const chp = c.securityContext?.windowsOptions?.hostProcess;
    if (isSet(podHP) && isSet(chp) && podHP !== chp)
      errs.push(invalid(child(path, cp, 'securityContext', 'windowsOptions', 'hostProcess'), chp, `pod hostProcess value must be identical if both are specified, was ${podHP}`));
    if (chp === true || (!isSet(chp) && podHP === true)) hpCount++;
  }
  if (hpCount > 0) {
    if (hpCount !== count) errs.push(invalid(path, '', 'If pod contains any hostProcess containers then all containers must be HostProcess containers'));
    if (spec.hostNetwork !== true) errs.push(invalid(child(path, 'hostNetwork'), false, 'hostNetwork must be true if pod contains any hostProcess containers'));
  }
  return errs;
}

function validateLinux(spec: any, path: string): Errs {
  const errs: Errs = [];
  if (spec.securityContext?.windowsOptions != null) errs.push(forbidden(child(path, 'securityContext', 'windowsOptions'), 'windows options cannot be set for a linux pod'));
  for (const [c, cp] of allContainers(spec))
    if (c.securityContext?.windowsOptions != null) errs.push(forbidden(child(path, cp, 'securityContext', 'windowsOptions'), 'windows options cannot be set for a linux pod'));
  return errs;
}

function validateWindows(spec: any, path: string): Errs {
  const errs: Errs = [];
  const sc = spec.securityContext;
  const msg = 'cannot be set for a windows pod';
  if (sc != null) {
    const sp = child(path, 'securityContext');
    if (sc.appArmorProfile != null) errs.push(forbidden(child(sp, 'appArmorProfile'), msg));
    if (sc.seLinuxOptions != null) errs.push(forbidden(child(sp, 'seLinuxOptions'), msg));
  }
  if (isSet(spec.hostUsers)) errs.push(forbidden(child(path, 'hostUsers'), msg));
  if (spec.hostPID === true) errs.push(forbidden(child(path, 'hostPID'), msg));
  if (spec.hostIPC === true) errs.push(forbidden(child(path, 'hostIPC'), msg));
  if (sc != null) {
    const sp = child(path, 'securityContext');
    if (sc.seccompProfile != null) errs.push(forbidden(child(sp, 'seccompProfile'), msg));
    if (isSet(sc.fsGroup)) errs.push(forbidden(child(sp, 'fsGroup'), msg));
    if (isSet(sc.fsGroupChangePolicy)) errs.push(forbidden(child(sp, 'fsGroupChangePolicy'), msg));
    if (arr(sc.sysctls).length) errs.push(forbidden(child(sp, 'sysctls'), msg));
  }
  if (isSet(spec.shareProcessNamespace)) errs.push(forbidden(child(path, 'shareProcessNamespace'), msg));
  if (sc != null) {
    const sp = child(path, 'securityContext');
    if (isSet(sc.runAsUser)) errs.push(forbidden(child(sp, 'runAsUser'), msg));
    if (isSet(sc.runAsGroup)) errs.push(forbidden(child(sp, 'runAsGroup'), msg));
    if (isSet(sc.supplementalGroups)) errs.push(forbidden(child(sp, 'supplementalGroups'), msg));
    if (isSet(sc.supplementalGroupsPolicy)) errs.push(forbidden(child(sp, 'supplementalGroupsPolicy'), msg));
    if (isSet(sc.seLinuxChangePolicy)) errs.push(forbidden(child(sp, 'seLinuxChangePolicy'), msg));
  }
  for (const [c, cp] of allContainers(spec)) {
    const s = c.securityContext;
    if (s == null) continue;
    const sp = child(path, cp, 'securityContext');
    for (const f of ['appArmorProfile', 'seLinuxOptions', 'seccompProfile', 'capabilities', 'readOnlyRootFilesystem', 'privileged', 'allowPrivilegeEscalation', 'procMount', 'runAsUser', 'runAsGroup'])
      if (isSet(s[f])) errs.push(forbidden(child(sp, f), msg));
  }
  return errs;
}

/** ValidatePodSpec */
export function validatePodSpec(spec: any, podName: string | undefined, path: string, opts: PodValidationOptions): Errs {
  const errs: Errs = [];
  const grace: number | undefined = typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
  const hostUsers = spec.hostUsers !== false;
  const restartPolicy = str(spec.restartPolicy) || 'Always';
  const dnsPolicy = str(spec.dnsPolicy) || 'ClusterFirst';
  const { vols, errs: vErrs } = validateVolumes(arr(spec.volumes), podName, child(path, 'volumes'), opts);
  errs.push(...vErrs);
  const claims = arr(spec.resourceClaims);
  const podClaimNames = new Set<string>(claims.map((c: any) => str(c?.name)).filter(Boolean));
  errs.push(...validatePodResourceClaims(claims, child(path, 'resourceClaims')));
  errs.push(...validateContainers(arr(spec.containers), vols, podClaimNames, grace, child(path, 'containers'), restartPolicy, hostUsers));
  errs.push(...validateInitContainers(arr(spec.initContainers), arr(spec.containers), vols, podClaimNames, grace, child(path, 'initContainers'), restartPolicy, hostUsers));
  errs.push(...validateEphemeralContainers(arr(spec.ephemeralContainers), arr(spec.containers), arr(spec.initContainers), vols, podClaimNames, child(path, 'ephemeralContainers'), restartPolicy, hostUsers));
  // hostNetwork: a pod's host ports must equal its container ports (a template may leave them 0)
  if (spec.hostNetwork === true)
    arr(spec.containers).forEach((c: any, i: number) =>
      arr(c?.ports).forEach((p: any, j: number) => {
        const hp = typeof p?.hostPort === 'number' ? p.hostPort : 0;
        const cp = typeof p?.containerPort === 'number' ? p.containerPort : 0;
        if ((opts.resourceIsPod || hp !== 0) && hp !== cp) errs.push(invalid(child(idx(child(idx(child(path, 'containers'), i), 'ports'), j), 'hostPort'), hp, 'must match `containerPort` when `hostNetwork` is true'));
      }),
    );
  if (!['Always', 'OnFailure', 'Never'].includes(restartPolicy)) errs.push(notSupported(child(path, 'restartPolicy'), restartPolicy, ['Always', 'OnFailure', 'Never']));
  if (!['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'].includes(dnsPolicy))
    errs.push(notSupported(child(path, 'dnsPolicy'), dnsPolicy, ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None']));
  errs.push(...validateLabels(spec.nodeSelector, child(path, 'nodeSelector')));
  errs.push(...validatePodSecurityContext(spec.securityContext, spec, child(path, 'securityContext')));
  errs.push(...validateAffinity(spec.affinity, child(path, 'affinity'), opts));
  errs.push(...validateDNSConfig(spec.dnsConfig, dnsPolicy, child(path, 'dnsConfig')));
  arr(spec.readinessGates).forEach((g: any, i: number) => errs.push(...validateQualifiedName(str(g?.conditionType), child(idx(child(path, 'readinessGates'), i), 'conditionType'))));
  const gates = new Set<string>();
  arr(spec.schedulingGates).forEach((g: any, i: number) => {
    const n = str(g?.name);
    errs.push(...validateQualifiedName(n, idx(child(path, 'schedulingGates'), i)));
    if (gates.has(n)) errs.push(duplicate(idx(child(path, 'schedulingGates'), i), n));
    gates.add(n);
  });
  errs.push(...validateTopologySpreadConstraints(arr(spec.topologySpreadConstraints), child(path, 'topologySpreadConstraints'), opts));
  errs.push(...validateWindowsHostProcess(spec, path));
  if (spec.hostUsers === false) {
    if (spec.hostNetwork === true) errs.push(forbidden(child(path, 'hostNetwork'), 'when `pod.Spec.HostUsers` is false'));
    if (spec.hostPID === true) errs.push(forbidden(child(path, 'HostPID'), 'when `pod.Spec.HostUsers` is false'));
    if (spec.hostIPC === true) errs.push(forbidden(child(path, 'HostIPC'), 'when `pod.Spec.HostUsers` is false'));
  }
  if (str(spec.serviceAccountName)) for (const m of isDNS1123Subdomain(spec.serviceAccountName)) errs.push(invalid(child(path, 'serviceAccountName'), spec.serviceAccountName, m));
  if (str(spec.nodeName)) for (const m of isDNS1123Subdomain(spec.nodeName)) errs.push(invalid(child(path, 'nodeName'), spec.nodeName, m));
  if (isSet(spec.activeDeadlineSeconds)) {
    const v = spec.activeDeadlineSeconds;
    if (v < 1 || v > MAX_INT32) errs.push(invalid(child(path, 'activeDeadlineSeconds'), v, inclusiveRangeError(1, MAX_INT32)));
  }
  if (str(spec.hostname)) errs.push(...validateDNS1123Label(spec.hostname, child(path, 'hostname')));
  if (str(spec.subdomain)) errs.push(...validateDNS1123Label(spec.subdomain, child(path, 'subdomain')));
  if (arr(spec.tolerations).length) errs.push(...validateTolerations(arr(spec.tolerations), child(path, 'tolerations')));
  arr(spec.hostAliases).forEach((h: any, i: number) => {
    const hp = idx(child(path, 'hostAliases'), i);
    errs.push(...validateIP(child(hp, 'ip'), str(h?.ip)));
    arr<string>(h?.hostnames).forEach((n, j) => errs.push(...validateDNS1123Subdomain(str(n), idx(child(hp, 'hostnames'), j))));
  });
  if (str(spec.priorityClassName)) for (const m of isDNS1123Subdomain(spec.priorityClassName)) errs.push(invalid(child(path, 'priorityClassName'), spec.priorityClassName, m));
  if (isSet(spec.runtimeClassName)) for (const m of isDNS1123Subdomain(str(spec.runtimeClassName))) errs.push(invalid(child(path, 'runtimeClassName'), str(spec.runtimeClassName), m));
  if (isSet(spec.preemptionPolicy)) errs.push(...validatePreemptionPolicy(spec.preemptionPolicy, child(path, 'preemptionPolicy')));
  if (spec.overhead != null) errs.push(...validateResourceRequirements({ limits: spec.overhead }, new Set(), child(path, 'overhead')));
  if (spec.os != null) {
    const op = child(path, 'os');
    const name = str(spec.os.name);
    if (!name) errs.push(required(child(op, 'name'), 'cannot be empty'));
    else if (name !== 'linux' && name !== 'windows') errs.push(notSupported(op, name, ['linux', 'windows']));
    else if (name === 'linux') errs.push(...validateLinux(spec, path));
    else errs.push(...validateWindows(spec, path));
  }
  return errs;
}

export function validatePreemptionPolicy(v: unknown, path: string): Errs {
  const s = str(v);
  if (s === 'PreemptLowerPriority' || s === 'Never') return [];
  if (s === '') return [required(path)];
  return [notSupported(path, s, ['PreemptLowerPriority', 'Never'])];
}

function validatePodResourceClaims(claims: any[], path: string): Errs {
  const errs: Errs = [];
  const names = new Set<string>();
  claims.forEach((c, i) => {
    const p = idx(path, i);
    const name = str(c?.name);
    if (!name) errs.push(required(child(p, 'name')));
    else if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
    else {
      errs.push(...validateDNS1123Label(name, child(p, 'name')));
      names.add(name);
    }
    const rc = c?.resourceClaimName;
    const rct = c?.resourceClaimTemplateName;
    if (isSet(rc) && isSet(rct)) errs.push(invalid(p, new GoRepr('core.PodResourceClaim{...}'), 'at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified'));
    if (!isSet(rc) && !isSet(rct)) errs.push(invalid(p, new GoRepr(`core.PodResourceClaim{Name:${JSON.stringify(name)}, ResourceClaimName:(*string)(nil), ResourceClaimTemplateName:(*string)(nil)}`), 'must specify one of: `resourceClaimName`, `resourceClaimTemplateName`'));
    if (isSet(rc)) for (const m of isDNS1123Subdomain(str(rc))) errs.push(invalid(child(p, 'resourceClaimName'), str(rc), m));
    if (isSet(rct)) for (const m of isDNS1123Subdomain(str(rct))) errs.push(invalid(child(p, 'resourceClaimTemplateName'), str(rct), m));
  });
  return errs;
}

// ---- pod-only rules and annotations ----

const SECCOMP_POD = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER = 'container.seccomp.security.alpha.kubernetes.io/';
const APPARMOR_CONTAINER = 'container.apparmor.security.beta.kubernetes.io/';
const DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';
const MIRROR = 'kubernetes.io/config.mirror';

function validateSeccompAnnotationValue(p: string, path: string): Errs {
  if (p === 'runtime/default' || p === 'docker/default' || p === 'unconfined') return [];
  if (p.startsWith('localhost/')) return validateLocalDescendingPath(p.slice('localhost/'.length), path);
  return [invalid(path, p, 'must be a valid seccomp profile')];
}

function podHasContainer(spec: any, name: string): boolean {
  return allContainers(spec).some(([c]) => str(c.name) === name);
}

export function validatePodSpecificAnnotations(ann: unknown, spec: any, path: string): Errs {
  const errs: Errs = [];
  const a = obj(ann);
  if (MIRROR in a && !str(spec.nodeName)) errs.push(invalid(key(path, MIRROR), str(a[MIRROR]), 'must set spec.nodeName if mirror pod annotation is set'));
  if (DELETION_COST in a) {
    const v = str(a[DELETION_COST]);
    const firstOk = v.length > 0 && (v[0] === '-' || v === '0' || (v[0]! >= '1' && v[0]! <= '9'));
    const n = Number(v);
    if (!firstOk || !/^-?[0-9]+$/.test(v) || n < -2147483648 || n > 2147483647) errs.push(invalid(key(path, DELETION_COST), v, 'must be a 32bit integer'));
  }
  if (SECCOMP_POD in a) errs.push(...validateSeccompAnnotationValue(str(a[SECCOMP_POD]), child(path, SECCOMP_POD)));
  for (const [k, v] of Object.entries(a)) if (k.startsWith(SECCOMP_CONTAINER)) errs.push(...validateSeccompAnnotationValue(str(v), child(path, k)));
  for (const [k, v] of Object.entries(a)) {
    if (!k.startsWith(APPARMOR_CONTAINER)) continue;
    const cname = k.slice(APPARMOR_CONTAINER.length);
    if (!podHasContainer(spec, cname)) errs.push(invalid(key(path, k), cname, 'container not found'));
    const p = str(v);
    if (!(p === '' || p === 'runtime/default' || p === 'unconfined' || p.startsWith('localhost/'))) errs.push(invalid(key(path, k), p, `invalid AppArmor profile name: ${JSON.stringify(p)}`));
  }
  return errs;
}

function seccompMatch(annotation: string, field: any, path: string): Errs {
  switch (field?.type) {
    case 'Unconfined':
      if (annotation !== 'unconfined') return [forbidden(child(path, 'type'), 'seccomp type in annotation and field must match')];
      break;
    case 'RuntimeDefault':
      if (annotation !== 'runtime/default' && annotation !== 'docker/default') return [forbidden(child(path, 'type'), 'seccomp type in annotation and field must match')];
      break;
    case 'Localhost':
      if (!annotation.startsWith('localhost/')) return [forbidden(child(path, 'type'), 'seccomp type in annotation and field must match')];
      if (!isSet(field.localhostProfile) || annotation.slice('localhost/'.length) !== field.localhostProfile)
        return [forbidden(child(path, 'localhostProfile'), 'seccomp profile in annotation and field must match')];
  }
  return [];
}

function validateSeccompAnnotationsAndFields(meta: any, spec: any, specPath: string): Errs {
  const errs: Errs = [];
  const ann = obj(meta?.annotations);
  if (spec.securityContext?.seccompProfile != null && SECCOMP_POD in ann)
    errs.push(...seccompMatch(str(ann[SECCOMP_POD]), spec.securityContext.seccompProfile, child(specPath, 'securityContext', 'seccompProfile')));
  for (const [c, cp] of allContainers(spec)) {
    const f = c.securityContext?.seccompProfile;
    if (f == null) continue;
    const k = SECCOMP_CONTAINER + str(c.name);
    if (k in ann) errs.push(...seccompMatch(str(ann[k]), f, child(specPath, cp, 'securityContext', 'seccompProfile')));
  }
  return errs;
}

function validateAppArmorAnnotationsAndFields(meta: any, spec: any, specPath: string): Errs {
  if (spec.os?.name === 'windows') return [];
  const errs: Errs = [];
  const ann = obj(meta?.annotations);
  const podProfile = spec.securityContext?.appArmorProfile;
  for (const [c, cp] of allContainers(spec)) {
    const prof = c.securityContext?.appArmorProfile ?? podProfile;
    if (prof == null) continue;
    const k = APPARMOR_CONTAINER + str(c.name);
    if (!(k in ann)) continue;
    const a = str(ann[k]);
    const ap = child(specPath, cp, 'securityContext', 'appArmorProfile');
    if (prof.type === 'Unconfined' && a !== 'unconfined') errs.push(forbidden(child(ap, 'type'), 'apparmor type in annotation and field must match'));
    else if (prof.type === 'RuntimeDefault' && a !== 'runtime/default') errs.push(forbidden(child(ap, 'type'), 'apparmor type in annotation and field must match'));
    else if (prof.type === 'Localhost') {
      if (!a.startsWith('localhost/')) errs.push(forbidden(child(ap, 'type'), 'apparmor type in annotation and field must match'));
      else if (!isSet(prof.localhostProfile) || a.slice('localhost/'.length) !== prof.localhostProfile)
        errs.push(forbidden(child(ap, 'localhostProfile'), 'apparmor profile in annotation and field must match'));
    }
  }
  return errs;
}

export function podOptions(resourceIsPod: boolean): PodValidationOptions {
  return { resourceIsPod };
}

/** validatePodMetadataAndSpec without ValidateObjectMeta (the server checks metadata) */
function validatePodMetadataAndSpec(pod: any): Errs {
  const spec = obj(pod.spec);
  const meta = obj(pod.metadata);
  const errs = validatePodSpecificAnnotations(meta.annotations, spec, 'metadata.annotations');
  errs.push(...validatePodSpec(spec, str(meta.name) || undefined, 'spec', podOptions(true)));
  if (!str(spec.serviceAccountName))
    arr(spec.volumes).forEach((v: any, vi: number) => {
      arr(v?.projected?.sources).forEach((s: any, si: number) => {
        if (s?.serviceAccountToken != null)
          errs.push(forbidden(child(idx(child(idx('spec.volumes', vi), 'projected', 'sources'), si), 'serviceAccountToken'), 'must not be specified when serviceAccountName is not set'));
      });
    });
  arr(spec.containers).forEach((c: any, i: number) => errs.push(...validateContainerOnlyForPod(obj(c), idx('spec.containers', i))));
  arr(spec.initContainers).forEach((c: any, i: number) => errs.push(...validateContainerOnlyForPod(obj(c), idx('spec.initContainers', i))));
  return errs;
}

/**
 * An update through a Pod's ephemeralcontainers subresource (kube-apiserver's
 * ValidatePodEphemeralContainersUpdate): the pod as a whole must be valid, a static pod takes
 * none, and the ephemeral containers it had stay, unchanged (they may only be added).
 */
export function validatePodEphemeralContainersUpdate(pod: any, old: any): Errs {
  const errs = validatePodMetadataAndSpec(pod);
  errs.push(...validatePodSpecificAnnotationUpdates(pod, old));
  if (old?.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined) return [forbidden('', 'static pods do not support ephemeral containers')];
  const now = new Map<string, any>();
  for (const c of arr(pod.spec?.ephemeralContainers)) now.set(str(c?.name), c);
  for (const c of arr(old?.spec?.ephemeralContainers)) {
    const name = str(c?.name);
    const n = now.get(name);
    if (n === undefined) errs.push(forbidden('spec.ephemeralContainers', `existing ephemeral containers "${name}" may not be removed\n`));
    else if (stringifyJSON(canonical(n)) !== stringifyJSON(canonical(c))) errs.push(forbidden('spec.ephemeralContainers', `existing ephemeral containers "${name}" may not be changed\n`));
  }
  return errs;
}

/**
 * An update through a Pod's resize subresource (kube-apiserver's ValidatePodResize): only the cpu
 * and memory requests and limits of the regular containers and of the sidecars (init containers
 * that restart always) may change, none may be removed, the QoS class must stay, and a memory
 * limit may not fall (or appear) unless the container's memory resize policy restarts it. Static,
 * Windows and pod-level-resourced pods cannot be resized.
 *
 * Kubernetes' function indexes the new containers by the old ones and has no message of its own
 * for containers added or removed; here that is a 422 in the words of a plain update.
 */
export function validatePodResize(pod: any, old: any): Errs {
  const errs = validatePodMetadataAndSpec(pod);
  const spec = obj(pod.spec);
  const oldSpec = obj(old?.spec);
  const podLevel = (s: any) => {
    const r = s.resources;
    return !!r && typeof r === 'object' && Object.keys(obj(r.requests)).length + Object.keys(obj(r.limits)).length > 0;
  };
  if (podLevel(oldSpec) || podLevel(spec)) return [forbidden('', 'pods with pod-level resources cannot be resized')];
  if (old?.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined) return [forbidden('', 'static pods cannot be resized')];
  if (str(oldSpec.os?.name) === 'windows') return [forbidden('', 'windows pods cannot be resized')];
  const n = arr(spec.containers);
  const o = arr(oldSpec.containers);
  const ni = arr(spec.initContainers);
  const oi = arr(oldSpec.initContainers);
  if (n.length !== o.length) return [...errs, forbidden('spec.containers', 'pod updates may not add or remove containers')];
  if (ni.length !== oi.length) return [...errs, forbidden('spec.initContainers', 'pod updates may not add or remove containers')];

  if (getPodQOS(old) !== computePodQOS(spec)) errs.push(invalid('spec', str(pod.status?.qosClass), 'Pod QOS Class may not change as a result of resizing'));
  if (!resizeSupportedByNode(old)) errs.push(forbidden('spec', 'Pod running on node without support for resize'));
  oi.forEach((c: any, i: number) => {
    if (c?.restartPolicy === 'Always') errs.push(...validateContainerResize(obj(ni[i]), obj(c), idx('spec.initContainers', i)));
  });
  o.forEach((c: any, i: number) => errs.push(...validateContainerResize(obj(n[i]), obj(c), idx('spec.containers', i))));

  // everything but the cpu and memory quantities must be as it was
  const munged = { ...spec };
  munged.containers = n.map((c: any, i: number) => {
    const m = withOldCPUMemory(obj(c), obj(o[i]));
    if (!semEqual(T.container, m, o[i])) errs.push(forbidden('spec', 'only cpu and memory resources are mutable'));
    return m;
  });
  munged.initContainers = ni.map((c: any, i: number) => {
    if (obj(c).restartPolicy === 'Always') {
      const m = withOldCPUMemory(obj(c), obj(oi[i]));
      if (!semEqual(T.container, m, oi[i])) errs.push(forbidden('spec', 'only cpu and memory resources for sidecar containers are mutable'));
      return m;
    }
    if (!semEqual(T.container, c, oi[i])) errs.push(forbidden('spec', 'resources for non-sidecar init containers are immutable'));
    return c;
  });
  if (spec.initContainers === undefined) delete munged.initContainers;
  if (errs.length) return errs;
  if (!semEqual(T.podSpec, munged, oldSpec)) errs.push(forbidden('spec', 'only cpu and memory resources are mutable'));
  return errs;
}

/**
 * The container with the old container's cpu and memory quantities in place of its own
 * (dropCPUMemoryResourcesFromContainer): a list the old container lacked is dropped, and so are
 * the resource claims, as Kubernetes rebuilds the requirements from the two lists alone.
 */
function withOldCPUMemory(c: any, oldC: any): any {
  const munge = (list: unknown, oldList: unknown): Record<string, unknown> | undefined => {
    if (oldList === undefined || oldList === null) return undefined;
    const out: Record<string, unknown> = { ...obj(list) };
    const ol = obj(oldList);
    for (const r of ['cpu', 'memory']) {
      delete out[r];
      if (ol[r] !== undefined) out[r] = ol[r];
    }
    return out;
  };
  const res = obj(c.resources);
  const oldRes = obj(oldC.resources);
  const resources: Record<string, unknown> = {};
  const limits = munge(res.limits, oldRes.limits);
  const requests = munge(res.requests, oldRes.requests);
  if (limits !== undefined) resources.limits = limits;
  if (requests !== undefined) resources.requests = requests;
  return { ...c, resources };
}

/**
 * Whether the pod's node can resize (isPodResizeRequestSupported): a node agent that can reports
 * the resources of a running container; with no running container the answer is yes.
 */
function resizeSupportedByNode(pod: any): boolean {
  for (const cs of arr(pod?.status?.containerStatuses)) {
    if (cs?.state?.running != null) return cs.resources != null;
  }
  return true;
}

/** the rules for one container's new requirements (validateContainerResize) */
function validateContainerResize(c: any, oldC: any, path: string): Errs {
  const errs: Errs = [];
  const res = obj(c.resources);
  const oldRes = obj(oldC.resources);
  const removed = (now: unknown, before: unknown): boolean => {
    const n = obj(now);
    return Object.keys(obj(before)).some((k) => !Object.prototype.hasOwnProperty.call(n, k));
  };
  const resPath = child(path, 'resources');
  if (removed(res.requests, oldRes.requests)) errs.push(forbidden(child(resPath, 'requests'), 'resource requests cannot be removed'));
  if (removed(res.limits, oldRes.limits)) errs.push(forbidden(child(resPath, 'limits'), 'resource limits cannot be removed'));
  const memPolicy = str(arr(c.resizePolicy).find((p: any) => p?.resourceName === 'memory')?.restartPolicy);
  if (memPolicy === 'NotRequired' || memPolicy === '') {
    const now = obj(res.limits).memory;
    const before = obj(oldRes.limits).memory;
    const memPath = key(child(resPath, 'limits'), 'memory');
    if (now !== undefined && before !== undefined) {
      const a = parseQuantity(now);
      const b = parseQuantity(before);
      if (a && b && a.nano < b.nano) errs.push(forbidden(memPath, 'memory limits cannot be decreased unless resizePolicy is RestartContainer'));
    } else if (now !== undefined) {
      errs.push(forbidden(memPath, 'memory limits cannot be added unless resizePolicy is RestartContainer'));
    }
  }
  return errs;
}

/** a JSON value with its object keys sorted (for comparing two decodings of one container) */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v as object).sort()) out[k] = canonical((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

export function validatePodCreate(pod: any): Errs {
  const spec = obj(pod.spec);
  const errs = validatePodMetadataAndSpec(pod);
  if (arr(spec.ephemeralContainers).length) errs.push(forbidden('spec.ephemeralContainers', 'cannot be set on create'));
  if (str(spec.nodeName) && arr(spec.schedulingGates).length) errs.push(forbidden('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'));
  errs.push(...validateSeccompAnnotationsAndFields(pod.metadata, spec, 'spec'));
  errs.push(...validateAppArmorAnnotationsAndFields(pod.metadata, spec, 'spec'));
  return errs;
}

const UPDATABLE_POD_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
];

function validateContainerUpdates(n: any[], o: any[], path: string): { errs: Errs; stop: boolean } {
  if (n.length !== o.length) return { errs: [forbidden(path, 'pod updates may not add or remove containers')], stop: true };
  const errs: Errs = [];
  n.forEach((c, i) => {
    const image = str(c?.image);
    if (!image) errs.push(required(child(idx(path, i), 'image')));
    if (image.trim().length !== image.length) errs.push(invalid(child(idx(path, i), 'image'), image, 'must not have leading or trailing whitespace'));
  });
  return { errs, stop: false };
}

function validateOnlyAddedTolerations(n: any[], o: any[], path: string): Errs {
  for (const old of o) {
    const found = n.some((t) => semEqual(T.toleration, { ...old, tolerationSeconds: t?.tolerationSeconds }, t));
    if (!found) return [forbidden(path, 'existing toleration can not be modified except its tolerationSeconds')];
  }
  return validateTolerations(n, path);
}

export function validatePodUpdate(pod: any, old: any): Errs {
  const errs: Errs = [];
  const spec = obj(pod.spec);
  const oldSpec = obj(old.spec);
  errs.push(...validatePodMetadataAndSpec(pod));
  errs.push(...validatePodSpecificAnnotationUpdates(pod, old));
  let r = validateContainerUpdates(arr(spec.containers), arr(oldSpec.containers), 'spec.containers');
  errs.push(...r.errs);
  if (r.stop) return errs;
  r = validateContainerUpdates(arr(spec.initContainers), arr(oldSpec.initContainers), 'spec.initContainers');
  errs.push(...r.errs);
  if (r.stop) return errs;
  if (isSet(spec.activeDeadlineSeconds)) {
    const v = spec.activeDeadlineSeconds;
    if (v < 0 || v > MAX_INT32) {
      errs.push(invalid('spec.activeDeadlineSeconds', v, inclusiveRangeError(0, MAX_INT32)));
      return errs;
    }
    if (isSet(oldSpec.activeDeadlineSeconds) && oldSpec.activeDeadlineSeconds < v) {
      errs.push(invalid('spec.activeDeadlineSeconds', v, 'must be less than or equal to previous value'));
      return errs;
    }
  } else if (isSet(oldSpec.activeDeadlineSeconds)) errs.push(invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'));
  errs.push(...validateOnlyAddedTolerations(arr(spec.tolerations), arr(oldSpec.tolerations), 'spec.tolerations'));
  const newGates = arr(spec.schedulingGates);
  if (newGates.length) {
    const oldNames = new Set(arr(oldSpec.schedulingGates).map((g: any) => str(g?.name)));
    const added = new Map<string, number>();
    newGates.forEach((g: any, i: number) => added.set(str(g?.name), i));
    for (const [g, i] of added) if (!oldNames.has(g)) errs.push(forbidden(child(idx('spec.schedulingGates', i), 'name'), `only deletion is allowed, but found new scheduling gate '${g}'`));
  }
  if (semEqual(T.podSpec, spec, oldSpec)) return errs;
  const munged = clone(spec);
  const mc = arr(munged.containers);
  mc.forEach((c: any, i: number) => (c.image = oldSpec.containers[i]?.image));
  arr(munged.initContainers).forEach((c: any, i: number) => (c.image = oldSpec.initContainers[i]?.image));
  if (isSet(oldSpec.activeDeadlineSeconds)) munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  else delete munged.activeDeadlineSeconds;
  munged.schedulingGates = oldSpec.schedulingGates;
  munged.tolerations = oldSpec.tolerations;
  if (isSet(oldSpec.terminationGracePeriodSeconds) && oldSpec.terminationGracePeriodSeconds < 0 && munged.terminationGracePeriodSeconds === 1)
    munged.terminationGracePeriodSeconds = oldSpec.terminationGracePeriodSeconds;
  if (arr(oldSpec.schedulingGates).length > 0) {
    // a gated pod may add to its node selector and node affinity
    if (!semEqualRef({ kind: 'map', values: { kind: 'scalar', scalar: 'string' } }, munged.nodeSelector, oldSpec.nodeSelector, true)) {
      for (const [k, v] of Object.entries(obj(oldSpec.nodeSelector)))
        if (obj(munged.nodeSelector)[k] !== v) {
          errs.push(invalid('spec.nodeSelector', goStringMap(munged.nodeSelector), 'only additions to spec.nodeSelector are allowed (no mutations or deletions)'));
          break;
        }
      munged.nodeSelector = oldSpec.nodeSelector;
    }
    const oldNA = oldSpec.affinity?.nodeAffinity;
    const newNA = munged.affinity?.nodeAffinity;
    if (!semEqualRef({ kind: 'object', name: T.nodeAffinity }, newNA, oldNA, true)) {
      errs.push(...validateNodeAffinityMutation('spec.affinity.nodeAffinity', newNA, oldNA));
      if (munged.affinity == null && oldNA == null) {
        /* nothing */
      } else if (munged.affinity == null && oldNA != null) munged.affinity = { nodeAffinity: oldNA };
      else if (munged.affinity != null && oldSpec.affinity == null && munged.affinity.podAntiAffinity == null && munged.affinity.podAffinity == null) delete munged.affinity;
      else munged.affinity.nodeAffinity = oldNA;
    }
  }
  if (!semEqual(T.podSpec, munged, oldSpec)) {
    errs.push(forbidden('spec', `pod updates may not change fields other than ${UPDATABLE_POD_FIELDS.join(',')}\n${podSpecDiff(oldSpec, munged)}`));
  }
  return errs;
}

function validateNodeAffinityMutation(path: string, newNA: any, oldNA: any): Errs {
  const oldReq = oldNA?.requiredDuringSchedulingIgnoredDuringExecution;
  if (oldNA == null || oldReq == null) return [];
  const oldTerms = arr(oldReq.nodeSelectorTerms);
  const newTerms = arr(newNA?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms);
  const tp = child(path, 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms');
  if (oldTerms.length > 0 && oldTerms.length !== newTerms.length) return [invalid(tp, new GoRepr('[]core.NodeSelectorTerm{...}'), 'no additions/deletions to non-empty NodeSelectorTerms list are allowed')];
  const errs: Errs = [];
  oldTerms.forEach((o: any, i: number) => {
    const n = newTerms[i];
    const ok = (() => {
      const oe = arr(o?.matchExpressions);
      const of = arr(o?.matchFields);
      const ne = arr(n?.matchExpressions);
      const nf = arr(n?.matchFields);
      if (oe.length === 0 && of.length === 0 && (ne.length > 0 || nf.length > 0)) return false;
      if (oe.length && (ne.length < oe.length || JSON.stringify(ne.slice(0, oe.length)) !== JSON.stringify(oe))) return false;
      if (of.length && (nf.length < of.length || JSON.stringify(nf.slice(0, of.length)) !== JSON.stringify(of))) return false;
      return true;
    })();
    if (!ok) errs.push(invalid(idx(tp, i), new GoRepr('core.NodeSelectorTerm{...}'), 'only additions are allowed (no mutations or deletions)'));
  });
  return errs;
}

function validatePodSpecificAnnotationUpdates(pod: any, old: any): Errs {
  const errs: Errs = [];
  const na = obj(pod.metadata?.annotations);
  const oa = obj(old.metadata?.annotations);
  const p = 'metadata.annotations';
  for (const [k, ov] of Object.entries(oa)) {
    if (k in na && na[k] === ov) continue;
    if (k.startsWith(APPARMOR_CONTAINER)) errs.push(forbidden(key(p, k), 'may not remove or update AppArmor annotations'));
    if (k === MIRROR) errs.push(forbidden(key(p, k), 'may not remove or update mirror pod annotation'));
  }
  for (const k of Object.keys(na)) {
    if (k in oa) continue;
    if (k.startsWith(APPARMOR_CONTAINER)) errs.push(forbidden(key(p, k), 'may not add AppArmor annotations'));
    if (k === MIRROR) errs.push(forbidden(key(p, k), 'may not add mirror pod annotation'));
  }
  errs.push(...validatePodSpecificAnnotations(na, obj(pod.spec), p));
  return errs;
}

/** An approximation of the cmp.Diff output Kubernetes appends (the exact text is go-cmp's). */
function podSpecDiff(oldSpec: any, newSpec: any): string {
  const t = getType(T.podSpec);
  if (!t) return '';
  const lines: string[] = ['  core.PodSpec{'];
  let same = 0;
  const flush = () => {
    if (same > 0) lines.push(`  \t... // ${same} identical field${same === 1 ? '' : 's'}`);
    same = 0;
  };
  for (const [name, f] of jsonFields(t)) {
    if (semEqualRef(f.type, oldSpec[name], newSpec[name], f.nullable)) {
      same++;
      continue;
    }
    flush();
    const g = goFieldName(name);
    lines.push(`- \t${g}: ${diffValue(oldSpec[name])},`);
    lines.push(`+ \t${g}: ${diffValue(newSpec[name])},`);
  }
  flush();
  lines.push('  }');
  return lines.join('\n') + '\n';
}

function diffValue(v: unknown): string {
  if (v === undefined || v === null) return 'nil';
  return stringifyJSON(v);
}

const INITIALISMS: [RegExp, string][] = [
  [/^Dns/, 'DNS'],
  [/^Os$/, 'OS'],
  [/Ip(s?)$/, 'IP$1'],
  [/Uid/, 'UID'],
  [/Ipc$/, 'IPC'],
  [/Pid$/, 'PID'],
  [/Fqdn$/, 'FQDN'],
];

export function goFieldName(json: string): string {
  let g = json.charAt(0).toUpperCase() + json.slice(1);
  for (const [re, rep] of INITIALISMS) g = g.replace(re, rep);
  return g;
}

// ---- pod status ----

export function validatePodStatusUpdate(pod: any, old: any): Errs {
  const errs: Errs = [];
  errs.push(...validatePodSpecificAnnotationUpdates(pod, old));
  const status = obj(pod.status);
  const oldStatus = obj(old.status);
  arr(status.conditions).forEach((c: any, i: number) => {
    if (['PodScheduled', 'Ready', 'Initialized'].includes(c?.type)) return;
    errs.push(...validateQualifiedName(str(c?.type), child(idx('metadata.conditions', i), 'Type')));
  });
  if (str(pod.spec?.nodeName) !== str(old.spec?.nodeName)) errs.push(forbidden('status.nodeName', 'may not be changed directly'));
  if (str(status.nominatedNodeName) !== str(oldStatus.nominatedNodeName) && str(status.nominatedNodeName))
    for (const m of isDNS1123Subdomain(status.nominatedNodeName)) errs.push(invalid('status.nominatedNodeName', status.nominatedNodeName, m));
  if (str(status.qosClass) !== str(oldStatus.qosClass)) errs.push(invalid('status.qosClass', str(status.qosClass), FIELD_IMMUTABLE));
  const rp = str(old.spec?.restartPolicy) || 'Always';
  errs.push(...stateTransitions(arr(status.containerStatuses), arr(oldStatus.containerStatuses), 'status.containerStatuses', rp, []));
  errs.push(...stateTransitions(arr(status.initContainerStatuses), arr(oldStatus.initContainerStatuses), 'status.initContainerStatuses', rp, arr(old.spec?.initContainers)));
  errs.push(...stateTransitions(arr(status.ephemeralContainerStatuses), arr(oldStatus.ephemeralContainerStatuses), 'status.ephemeralContainerStatuses', 'Never', []));
  errs.push(...validateStatusIPs(arr(status.podIPs), 'status.podIPs'));
  const hostIPs = arr(status.hostIPs);
  if (hostIPs.length) {
    if (str(status.hostIP) !== str(hostIPs[0]?.ip)) errs.push(invalid(child(idx('status.hostIPs', 0), 'ip'), str(hostIPs[0]?.ip), 'must be equal to `hostIP`'));
    errs.push(...validateStatusIPs(hostIPs, 'status.hostIPs'));
  }
  return errs;
}

function validateStatusIPs(ips: any[], path: string): Errs {
  const errs: Errs = [];
  ips.forEach((p: any, i: number) => errs.push(...validateIP(idx(path, i), str(p?.ip))));
  if (ips.length > 1) {
    const fams = ips.map((p: any) => parseIP(str(p?.ip))).filter((b): b is number[] => b !== null);
    const dual = fams.length === ips.length && fams.length === 2 && isIPv4Bytes(fams[0]!) !== isIPv4Bytes(fams[1]!);
    if (!dual || ips.length > 2) errs.push(invalid(path, new GoRepr(`[]core.PodIP{${ips.map((p: any) => `core.PodIP{IP:${JSON.stringify(str(p?.ip))}}`).join(', ')}}`), 'may specify no more than one IP for each IP family'));
    const seen = new Set<string>();
    ips.forEach((p: any, i: number) => {
      if (seen.has(str(p?.ip))) errs.push(duplicate(idx(path, i), new GoRepr(`core.PodIP{IP:${JSON.stringify(str(p?.ip))}}`)));
      seen.add(str(p?.ip));
    });
  }
  return errs;
}

function stateTransitions(n: any[], o: any[], path: string, restartPolicy: string, initContainers: any[]): Errs {
  if (restartPolicy === 'Always') return [];
  const errs: Errs = [];
  o.forEach((os: any, i: number) => {
    const term = os?.state?.terminated;
    if (term == null) return;
    if ((term.exitCode ?? 0) !== 0 && restartPolicy === 'OnFailure') return;
    const ic = initContainers.find((c: any) => str(c?.name) === str(os.name));
    if (ic && ic.restartPolicy === 'Always') return;
    for (const ns of n) if (str(ns?.name) === str(os.name) && ns?.state?.terminated == null) errs.push(forbidden(child(idx(path, i), 'state'), 'may not be transitioned to non-terminated state'));
  });
  return errs;
}

// ---- pod templates ----

/** ValidatePodTemplateSpec (labels and annotations of the template are reported under the template's path) */
export function validatePodTemplateSpec(tmpl: any, path: string): Errs {
  const t = obj(tmpl);
  const meta = obj(t.metadata);
  const spec = obj(t.spec);
  const errs = validateLabels(meta.labels, child(path, 'labels'));
  errs.push(...validateAnnotations(meta.annotations, child(path, 'annotations')));
  errs.push(...validatePodSpecificAnnotations(meta.annotations, spec, child(path, 'annotations')));
  errs.push(...validatePodSpec(spec, undefined, child(path, 'spec'), podOptions(false)));
  errs.push(...validateSeccompAnnotationsAndFields(meta, spec, child(path, 'spec')));
  errs.push(...validateAppArmorAnnotationsAndFields(meta, spec, child(path, 'spec')));
  if (arr(spec.ephemeralContainers).length) errs.push(forbidden(child(path, 'spec', 'ephemeralContainers'), 'ephemeral containers not allowed in pod template'));
  return errs;
}

export { internal };
