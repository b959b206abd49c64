// The other core/v1 kinds: ConfigMap, Secret, Namespace, Node, PersistentVolume(Claim),
// LimitRange, ResourceQuota, ReplicationController, Event and Binding
// (pkg/apis/core/validation and events.go).
import { stringifyJSON } from '../../codec/int64.js';
import { child, duplicate, forbidden, internal, goQuote, goStringMap, goStrings, GoRepr, idx, invalid, key, notSupported, required, tooLong, type Errs } from './errs.js';
import {
  arr,
  bytesLen,
  clone,
  FIELD_IMMUTABLE,
  IS_NEGATIVE,
  isConfigMapKey,
  isDNS1123Label,
  isDNS1123Subdomain,
  isLabelValue,
  isQualifiedName,
  isSet,
  jsonEqual,
  obj,
  parseCIDR,
  qcmp,
  qrepr,
  qstr,
  q,
  selectorMatches,
  str,
  validateCIDR,
  validateLabelName,
  validateLabels,
  validateNonnegative,
} from './util.js';
import { validatePodTemplateSpec, validateResourceQuantityValue, validateContainerResourceName, validateResourceName, isStandardQuotaResourceName, validateTaintEffect, isOvercommitAllowed } from './pod.js';
import { validatePersistentVolumeClaimSpec, validatePersistentVolumeSpec } from './volumes.js';
import { validateKubeFinalizerName } from './meta.js';
import { semEqual, semEqualRef, T } from './semantic.js';
import { goUnmarshalObjectError } from './gojson.js';
import { quantityString, quantityValue, quantityMilliValue } from './quantity.js';

const MAX_SECRET_SIZE = 1024 * 1024;
const IMMUTABLE_WHEN_SET = 'field is immutable when `immutable` is set';

// ---- ConfigMap ----

export function validateConfigMap(cm: any): Errs {
  const errs: Errs = [];
  const data = obj(cm.data);
  const bin = obj(cm.binaryData);
  let total = 0;
  // (a string's UTF-8 takes at most 3 bytes per UTF-16 unit: the exact count, a pass over every
  // value, is needed only when that bound is over the limit)
  let bound = 0;
  for (const [k, v] of Object.entries(data)) {
    for (const m of isConfigMapKey(k)) errs.push(invalid(key('data', k), k, m));
    if (Object.prototype.hasOwnProperty.call(bin, k)) errs.push(invalid(key('data', k), k, 'duplicate of key present in binaryData'));
    bound += 3 * str(v).length;
  }
  if (bound > MAX_SECRET_SIZE) for (const v of Object.values(data)) total += Buffer.byteLength(str(v));
  for (const [k, v] of Object.entries(bin)) {
    for (const m of isConfigMapKey(k)) errs.push(invalid(key('binaryData', k), k, m));
    total += bytesLen(v);
  }
  if (total > MAX_SECRET_SIZE) errs.push(tooLong('', MAX_SECRET_SIZE));
  return errs;
}

export function validateConfigMapUpdate(cm: any, old: any): Errs {
  const errs: Errs = [];
  if (old.immutable === true) {
    if (cm.immutable !== true) errs.push(forbidden('immutable', IMMUTABLE_WHEN_SET));
    if (!jsonEqual(cm.data ?? null, old.data ?? null) || !sameNil(cm.data, old.data)) errs.push(forbidden('data', IMMUTABLE_WHEN_SET));
    if (!jsonEqual(cm.binaryData ?? null, old.binaryData ?? null) || !sameNil(cm.binaryData, old.binaryData)) errs.push(forbidden('binaryData', IMMUTABLE_WHEN_SET));
  }
  errs.push(...validateConfigMap(cm));
  return errs;
}

/** reflect.DeepEqual tells a nil map from an empty one */
function sameNil(a: unknown, b: unknown): boolean {
  return (a == null) === (b == null);
}

// ---- Secret ----

/** the data of a Secret as the API server sees it: stringData merged into data (base64) */
function secretData(s: any): Record<string, string> {
  const data: Record<string, string> = { ...obj(s.data) };
  for (const [k, v] of Object.entries(obj(s.stringData))) data[k] = Buffer.from(str(v), 'utf8').toString('base64');
  return data;
}

export function validateSecret(s: any): Errs {
  const errs: Errs = [];
  const data = secretData(s);
  let total = 0;
  for (const [k, v] of Object.entries(data)) {
    for (const m of isConfigMapKey(k)) errs.push(invalid(key('data', k), k, m));
    total += bytesLen(v);
  }
  if (total > MAX_SECRET_SIZE) errs.push(tooLong('data', MAX_SECRET_SIZE));
  const has = (k: string) => Object.prototype.hasOwnProperty.call(data, k);
  switch (str(s.type)) {
    case 'kubernetes.io/service-account-token':
      if (!str(obj(s.metadata?.annotations)['kubernetes.io/service-account.name'])) errs.push(required(key('metadata.annotations', 'kubernetes.io/service-account.name')));
      break;
    case 'Opaque':
    case '':
      break;
    case 'kubernetes.io/dockercfg':
    case 'kubernetes.io/dockerconfigjson': {
      const k = s.type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (!has(k)) {
        errs.push(required(key('data', k)));
        break;
      }
      const e = goUnmarshalObjectError(new Uint8Array(Buffer.from(data[k]!, 'base64')));
      if (e) errs.push(invalid(key('data', k), '<secret contents redacted>', e));
      break;
    }
    case 'kubernetes.io/basic-auth':
      if (!has('username') && !has('password')) {
        errs.push(required(key('data', 'username')));
        errs.push(required(key('data', 'password')));
      }
      break;
    case 'kubernetes.io/ssh-auth':
      if (bytesLen(data['ssh-privatekey']) === 0) errs.push(required(key('data', 'ssh-privatekey')));
      break;
    case 'kubernetes.io/tls':
      if (!has('tls.crt')) errs.push(required(key('data', 'tls.crt')));
      if (!has('tls.key')) errs.push(required(key('data', 'tls.key')));
      break;
  }
  return errs;
}

export function validateSecretUpdate(s: any, old: any): Errs {
  const errs: Errs = [];
  const t = str(s.type) || 'Opaque';
  const ot = str(old.type) || 'Opaque';
  if (t !== ot) errs.push(invalid('type', t, FIELD_IMMUTABLE));
  if (old.immutable === true) {
    if (s.immutable !== true) errs.push(forbidden('immutable', IMMUTABLE_WHEN_SET));
    const nd = secretData(s);
    const od = secretData(old);
    const nilNew = s.data == null && s.stringData == null;
    if (!jsonEqual(nd, od) || nilNew !== (old.data == null)) errs.push(forbidden('data', IMMUTABLE_WHEN_SET));
  }
  errs.push(...validateSecret(s));
  return errs;
}

// ---- Namespace ----

function validateFinalizerName(f: string, path: string): Errs {
  const errs = isQualifiedName(f).map((m) => invalid(path, f, m));
  errs.push(...validateKubeFinalizerName(f, path));
  return errs;
}

export function validateNamespace(ns: any): Errs {
  const errs: Errs = [];
  for (const f of arr<string>(ns.spec?.finalizers)) errs.push(...validateFinalizerName(str(f), 'spec.finalizers'));
  return errs;
}

export function validateNamespaceStatusUpdate(ns: any): Errs {
  const phase = str(ns.status?.phase);
  if (!ns.metadata?.deletionTimestamp) {
    if (phase !== 'Active') return [invalid('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty")];
  } else if (phase !== 'Terminating') return [invalid('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")];
  return [];
}

export function validateNamespaceFinalize(ns: any): Errs {
  const errs: Errs = [];
  arr<string>(ns.spec?.finalizers).forEach((f, i) => errs.push(...validateFinalizerName(str(f), idx('spec.finalizers', i))));
  return errs;
}

// ---- Node ----

function validateNodeTaints(taints: any[], path: string): Errs {
  const errs: Errs = [];
  const unique = new Map<string, Set<string>>();
  taints.forEach((t0, i) => {
    const t = obj(t0);
    const p = idx(path, i);
    errs.push(...validateLabelName(str(t.key), child(p, 'key')));
    const ve = isLabelValue(str(t.value));
    if (ve.length) errs.push(invalid(child(p, 'value'), str(t.value), ve.join(';')));
    errs.push(...validateTaintEffect(str(t.effect), false, child(p, 'effect')));
    const set = unique.get(str(t.effect));
    if (set && set.has(str(t.key))) {
      errs.push(
        duplicate(
          p,
          new GoRepr(`core.Taint{Key:${goQuote(str(t.key))}, Value:${goQuote(str(t.value))}, Effect:${goQuote(str(t.effect))}, TimeAdded:${t.timeAdded ? '(*v1.Time)(0xc000010000)' : '(*v1.Time)(nil)'}}`),
          'taints must be unique by key and effect pair',
        ),
      );
      return;
    }
    if (!set) unique.set(str(t.effect), new Set());
    unique.get(str(t.effect))!.add(str(t.key));
  });
  return errs;
}

function validateNodeResources(node: any): Errs {
  const errs: Errs = [];
  for (const [k, v] of Object.entries(obj(node.status?.capacity))) errs.push(...validateResourceQuantityValue(k, v, child('status.capacity', k)));
  for (const [k, v] of Object.entries(obj(node.status?.allocatable))) errs.push(...validateResourceQuantityValue(k, v, child('status.allocatable', k)));
  return errs;
}

function cidrFamily(c: string): 'v4' | 'v6' | null {
  const p = parseCIDR(c);
  return p ? (p.v4 ? 'v4' : 'v6') : null;
}

export function validateNode(node: any): Errs {
  const errs: Errs = [];
  const taints = arr(node.spec?.taints);
  if (taints.length) errs.push(...validateNodeTaints(taints, 'metadata.taints'));
  errs.push(...validateNodeResources(node));
  const cidrs = arr<string>(node.spec?.podCIDRs);
  if (cidrs.length > 0) {
    cidrs.forEach((c, i) => errs.push(...validateCIDR(idx('spec.podCIDRs', i), str(c))));
    if (cidrs.length > 1) {
      const fams = cidrs.map((c) => cidrFamily(str(c)));
      if (fams.includes(null)) errs.push(internal('spec.podCIDRs', 'invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR address'));
      const dual = fams.length === 2 && fams[0] !== fams[1] && !fams.includes(null);
      if (!dual || cidrs.length > 2) errs.push(invalid('spec.podCIDRs', goStrings(cidrs), 'may specify no more than one CIDR for each IP family'));
      const seen = new Set<string>();
      cidrs.forEach((c, i) => {
        if (seen.has(c)) errs.push(duplicate(idx('spec.podCIDRs', i), c));
        seen.add(c);
      });
    }
  }
  return errs;
}

export function validateNodeUpdate(node: any, old: any): Errs {
  const errs: Errs = [];
  errs.push(...validateNodeResources(node));
  const addrs = new Set<string>();
  arr(node.status?.addresses).forEach((a: any, i: number) => {
    const k = `${str(a?.type)}\u0000${str(a?.address)}`;
    if (addrs.has(k)) errs.push(duplicate(idx('status.addresses', i), new GoRepr(`core.NodeAddress{Type:${goQuote(str(a?.type))}, Address:${goQuote(str(a?.address))}}`)));
    addrs.add(k);
  });
  const oc = arr<string>(old.spec?.podCIDRs);
  const nc = arr<string>(node.spec?.podCIDRs);
  if (oc.length > 0) {
    const msg = 'node updates may not change podCIDR except from "" to valid';
    if (oc.length !== nc.length) errs.push(forbidden('spec.podCIDRs', msg));
    else oc.forEach((c, i) => c !== nc[i] && errs.push(forbidden('spec.podCIDRs', msg)));
  }
  if (str(old.spec?.providerID) && old.spec.providerID !== str(node.spec?.providerID))
    errs.push(forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  const cs = node.spec?.configSource;
  if (cs != null && cs.configMap == null) errs.push(invalid('spec.configSource', new GoRepr('core.NodeConfigSource{ConfigMap:(*core.ConfigMapNodeConfigSource)(nil)}'), 'exactly one reference subfield must be non-nil'));
  const taints = arr(node.spec?.taints);
  if (taints.length) errs.push(...validateNodeTaints(taints, 'metadata.taints'));
  if (str(node.spec?.externalID) !== str(old.spec?.externalID)) errs.push(forbidden('spec.externalID', 'may not be updated'));
  return errs;
}

// ---- PersistentVolume ----

const PV_SOURCES = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'hostPath',
  'glusterfs',
  'nfs',
  'rbd',
  'iscsi',
  'cinder',
  'cephfs',
  'fc',
  'flocker',
  'flexVolume',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'local',
  'storageos',
  'csi',
];

export function validatePersistentVolume(pv: any): Errs {
  return validatePersistentVolumeSpec(obj(pv.spec), str(pv.metadata?.name), 'spec');
}

export function validatePersistentVolumeUpdate(pv: any, old: any): Errs {
  const errs = validatePersistentVolume(pv);
  const ns = clone(obj(pv.spec));
  const os = obj(old.spec);
  if (os.csi != null && os.csi.controllerExpandSecretRef == null && ns.csi != null && ns.csi.controllerExpandSecretRef != null) delete ns.csi.controllerExpandSecretRef;
  const changed = PV_SOURCES.filter((s) => !semEqualRef({ kind: 'object', name: `io.k8s.api.core.v1.${pvSourceType(s)}` }, ns[s], os[s], true));
  if (changed.length) {
    const diff = changed.map((s) => `- \t${s}: ${stringifyJSON(os[s] ?? null)},\n+ \t${s}: ${stringifyJSON(ns[s] ?? null)},`).join('\n');
    errs.push(forbidden('spec.persistentvolumesource', `spec.persistentvolumesource is immutable after creation\n  core.PersistentVolumeSource{\n${diff}\n  }\n`));
  }
  if ((pv.spec?.volumeMode ?? null) !== (old.spec?.volumeMode ?? null)) errs.push(invalid('volumeMode', pv.spec?.volumeMode ?? null, FIELD_IMMUTABLE));
  if (old.spec?.nodeAffinity != null && !nodeAffinityEqualModuloGA(pv.spec?.nodeAffinity, old.spec.nodeAffinity))
    errs.push(invalid('nodeAffinity', pv.spec?.nodeAffinity == null ? null : new GoRepr('core.VolumeNodeAffinity{Required:(*core.NodeSelector)(0xc000010000)}'), `${FIELD_IMMUTABLE}, except for updating from beta label to GA`));
  if ((pv.spec?.volumeAttributesClassName ?? null) !== (old.spec?.volumeAttributesClassName ?? null))
    errs.push(forbidden('spec.volumeAttributesClassName', 'update is forbidden when the VolumeAttributesClass feature gate is disabled'));
  return errs;
}

const BETA_TO_GA: Record<string, string> = {
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
  'beta.kubernetes.io/os': 'kubernetes.io/os',
  'beta.kubernetes.io/arch': 'kubernetes.io/arch',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
};

function nodeAffinityEqualModuloGA(n: any, o: any): boolean {
  const norm = (na: any, ref: any) => {
    const c = clone(na);
    const terms = arr(c?.required?.nodeSelectorTerms);
    const rterms = arr(ref?.required?.nodeSelectorTerms);
    terms.forEach((t: any, i: number) =>
      arr(t?.matchExpressions).forEach((e: any, j: number) => {
        const r = rterms[i]?.matchExpressions?.[j];
        if (r && e.key !== r.key && BETA_TO_GA[e.key] === r.key) e.key = r.key;
      }),
    );
    return c;
  };
  return semEqualRef({ kind: 'object', name: T.volumeNodeAffinity }, n, norm(o, n), true);
}

function pvSourceType(name: string): string {
  const m: Record<string, string> = {
    gcePersistentDisk: 'GCEPersistentDiskVolumeSource',
    awsElasticBlockStore: 'AWSElasticBlockStoreVolumeSource',
    hostPath: 'HostPathVolumeSource',
    glusterfs: 'GlusterfsPersistentVolumeSource',
    nfs: 'NFSVolumeSource',
    rbd: 'RBDPersistentVolumeSource',
    iscsi: 'ISCSIPersistentVolumeSource',
    cinder: 'CinderPersistentVolumeSource',
    cephfs: 'CephFSPersistentVolumeSource',
    fc: 'FCVolumeSource',
    flocker: 'FlockerVolumeSource',
    flexVolume: 'FlexPersistentVolumeSource',
    azureFile: 'AzureFilePersistentVolumeSource',
    vsphereVolume: 'VsphereVirtualDiskVolumeSource',
    quobyte: 'QuobyteVolumeSource',
    azureDisk: 'AzureDiskVolumeSource',
    photonPersistentDisk: 'PhotonPersistentDiskVolumeSource',
    portworxVolume: 'PortworxVolumeSource',
    scaleIO: 'ScaleIOPersistentVolumeSource',
    local: 'LocalVolumeSource',
    storageos: 'StorageOSPersistentVolumeSource',
    csi: 'CSIPersistentVolumeSource',
  };
  return m[name] ?? name;
}

// ---- PersistentVolumeClaim ----

const BETA_SC = 'volume.beta.kubernetes.io/storage-class';

export function validatePersistentVolumeClaim(pvc: any): Errs {
  return validatePersistentVolumeClaimSpec(obj(pvc.spec), 'spec');
}

export function validatePersistentVolumeClaimUpdate(pvc: any, old: any): Errs {
  const errs = validatePersistentVolumeClaim(pvc);
  const nc = clone(obj(pvc.spec));
  const oc = clone(obj(old.spec));
  const na = obj(pvc.metadata?.annotations);
  const oa = obj(old.metadata?.annotations);
  if (!str(oc.volumeName)) oc.volumeName = nc.volumeName;
  const oldSc = oa[BETA_SC];
  const upgradeFromAnnotation = BETA_SC in oa && !isSet(old.spec?.storageClassName) && isSet(nc.storageClassName) && nc.storageClassName === oldSc && (!(BETA_SC in na) || na[BETA_SC] === oldSc);
  if (upgradeFromAnnotation) delete nc.storageClassName;
  else {
    if (str(na[BETA_SC]) !== str(oa[BETA_SC])) errs.push(invalid(child('metadata', 'annotations', BETA_SC), str(na[BETA_SC]), FIELD_IMMUTABLE));
    const fromNil = isSet(pvc.spec?.storageClassName) && !isSet(old.spec?.storageClassName) && (!(BETA_SC in oa) || pvc.spec.storageClassName === oa[BETA_SC]);
    if (fromNil) nc.storageClassName = oc.storageClassName;
  }
  const bound = pvc.status?.phase === 'Bound';
  if (bound && nc.resources?.requests != null) nc.resources.requests.storage = old.spec?.resources?.requests?.storage;
  if (bound && isSet(nc.volumeAttributesClassName)) nc.volumeAttributesClassName = oc.volumeAttributesClassName;
  if (!semEqual(T.pvcSpec, nc, oc)) {
    errs.push(forbidden('spec', `spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n${specDiff(oc, nc, 'core.PersistentVolumeClaimSpec')}`));
  }
  const oldSize = old.spec?.resources?.requests?.storage ?? '0';
  const newSize = pvc.spec?.resources?.requests?.storage ?? '0';
  const statusSize = old.status?.capacity?.storage ?? '0';
  if (qcmp(newSize, oldSize) < 0 && qcmp(newSize, statusSize) <= 0) errs.push(forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
  if ((pvc.spec?.volumeMode ?? null) !== (old.spec?.volumeMode ?? null)) errs.push(invalid('volumeMode', pvc.spec?.volumeMode ?? null, FIELD_IMMUTABLE));
  if ((pvc.spec?.volumeAttributesClassName ?? null) !== (old.spec?.volumeAttributesClassName ?? null))
    errs.push(forbidden('spec.volumeAttributesClassName', 'update is forbidden when the VolumeAttributesClass feature gate is disabled'));
  return errs;
}

function specDiff(o: any, n: any, type: string): string {
  const keys = [...new Set([...Object.keys(o ?? {}), ...Object.keys(n ?? {})])];
  const lines = [`  ${type}{`];
  for (const k of keys) {
    if (jsonEqual(o?.[k], n?.[k])) continue;
    lines.push(`- \t${k}: ${stringifyJSON(o?.[k] ?? null)},`);
    lines.push(`+ \t${k}: ${stringifyJSON(n?.[k] ?? null)},`);
  }
  lines.push('  }');
  return lines.join('\n') + '\n';
}

export function validatePersistentVolumeClaimStatusUpdate(pvc: any): Errs {
  const errs: Errs = [];
  if (arr(pvc.spec?.accessModes).length === 0) errs.push(required('Spec.accessModes'));
  for (const [k, v] of Object.entries(obj(pvc.status?.capacity))) {
    const x = q(v);
    if (x && quantityValue(x) < 0n) errs.push(invalid(key('status.capacity', k), Number(quantityValue(x)), 'must be a valid resource quantity'));
  }
  const rsPath = 'status.allocatedResourceStatus';
  const RESIZE = ['ControllerResizeInProgress', 'ControllerResizeInfeasible', 'NodeResizePending', 'NodeResizeInProgress', 'NodeResizeInfeasible'];
  for (const [k, v] of Object.entries(obj(pvc.status?.allocatedResourceStatuses))) {
    errs.push(...pvcResourceKey(k, rsPath));
    if (!RESIZE.includes(str(v))) errs.push(notSupported(rsPath, k, [...RESIZE].sort()));
  }
  const ap = 'status.allocatedResources';
  for (const [k, v] of Object.entries(obj(pvc.status?.allocatedResources))) {
    const ke = pvcResourceKey(k, ap);
    if (ke.length) {
      errs.push(...ke);
      continue;
    }
    const x = q(v);
    if (x && quantityValue(x) < 0n) errs.push(invalid(key(ap, k), Number(quantityValue(x)), 'must be a valid resource quantity'));
    else errs.push(...validateResourceQuantityValue('storage', v, key(ap, k)));
  }
  return errs;
}

function pvcResourceKey(k: string, path: string): Errs {
  const e = isQualifiedName(k).map((m) => invalid(path, k, m));
  if (e.length) return e;
  if ((!k.includes('/') || k.includes('kubernetes.io/')) && k !== 'storage') return [notSupported(path, k, ['storage'])];
  return [];
}

// ---- LimitRange ----

const LIMIT_TYPES = new Set(['Pod', 'Container', 'PersistentVolumeClaim']);

function validateLimitRangeResourceName(limitType: string, name: string, path: string): Errs {
  return limitType === 'Pod' || limitType === 'Container' ? validateContainerResourceName(name, path) : validateResourceName(name, path);
}

export function validateLimitRange(lr: any): Errs {
  const errs: Errs = [];
  const types = new Set<string>();
  arr(lr.spec?.limits).forEach((l0: any, i: number) => {
    const l = obj(l0);
    const p = idx('spec.limits', i);
    const t = str(l.type);
    const tp = child(p, 'type');
    const te = isQualifiedName(t).map((m) => invalid(tp, t, m));
    errs.push(...te);
    if (!te.length && !t.includes('/') && !LIMIT_TYPES.has(t)) errs.push(invalid(tp, t, 'must be a standard limit type or fully qualified'));
    if (types.has(t)) errs.push(duplicate(tp, t));
    types.add(t);
    const keys: string[] = [];
    const addKey = (k: string) => !keys.includes(k) && keys.push(k);
    const maxM = obj(l.max);
    const minM = obj(l.min);
    for (const k of Object.keys(maxM)) {
      errs.push(...validateLimitRangeResourceName(t, k, key(child(p, 'max'), k)));
      addKey(k);
    }
    for (const k of Object.keys(minM)) {
      errs.push(...validateLimitRangeResourceName(t, k, key(child(p, 'min'), k)));
      addKey(k);
    }
    const defM = t === 'Pod' ? {} : obj(l.default);
    const defReqM = t === 'Pod' ? {} : obj(l.defaultRequest);
    if (t === 'Pod') {
      if (Object.keys(obj(l.default)).length) errs.push(forbidden(child(p, 'default'), "may not be specified when `type` is 'Pod'"));
      if (Object.keys(obj(l.defaultRequest)).length) errs.push(forbidden(child(p, 'defaultRequest'), "may not be specified when `type` is 'Pod'"));
    } else {
      for (const k of Object.keys(defM)) {
        errs.push(...validateLimitRangeResourceName(t, k, key(child(p, 'default'), k)));
        addKey(k);
      }
      for (const k of Object.keys(defReqM)) {
        errs.push(...validateLimitRangeResourceName(t, k, key(child(p, 'defaultRequest'), k)));
        addKey(k);
      }
    }
    if (t === 'PersistentVolumeClaim' && !('storage' in minM) && !('storage' in maxM))
      errs.push(required(child(p, 'limits'), 'either minimum or maximum storage value is required, but neither was provided'));
    const ratioM = obj(l.maxLimitRequestRatio);
    for (const k of Object.keys(ratioM)) {
      errs.push(...validateLimitRangeResourceName(t, k, key(child(p, 'maxLimitRequestRatio'), k)));
      addKey(k);
    }
    for (const k of keys) {
      const mn = minM[k];
      const mx = maxM[k];
      const df = defM[k];
      const dr = defReqM[k];
      const ratio = ratioM[k];
      const has = (v: unknown) => v !== undefined;
      if (has(mn) && has(mx) && qcmp(mn, mx) > 0) errs.push(invalid(key(child(p, 'min'), k), qrepr(mn), `min value ${qstr(mn)} is greater than max value ${qstr(mx)}`));
      if (has(dr) && has(mn) && qcmp(mn, dr) > 0) errs.push(invalid(key(child(p, 'defaultRequest'), k), qrepr(dr), `min value ${qstr(mn)} is greater than default request value ${qstr(dr)}`));
      if (has(dr) && has(mx) && qcmp(dr, mx) > 0) errs.push(invalid(key(child(p, 'defaultRequest'), k), qrepr(dr), `default request value ${qstr(dr)} is greater than max value ${qstr(mx)}`));
      if (has(dr) && has(df) && qcmp(dr, df) > 0) errs.push(invalid(key(child(p, 'defaultRequest'), k), qrepr(dr), `default request value ${qstr(dr)} is greater than default limit value ${qstr(df)}`));
      if (has(df) && has(mn) && qcmp(mn, df) > 0) errs.push(invalid(key(child(p, 'default'), k), qrepr(mn), `min value ${qstr(mn)} is greater than default value ${qstr(df)}`));
      if (has(df) && has(mx) && qcmp(df, mx) > 0) errs.push(invalid(key(child(p, 'default'), k), qrepr(mx), `default value ${qstr(df)} is greater than max value ${qstr(mx)}`));
      if (has(ratio) && qcmp(ratio, '1') < 0) errs.push(invalid(key(child(p, 'maxLimitRequestRatio'), k), qrepr(ratio), `ratio ${qstr(ratio)} is less than 1`));
      if (has(ratio) && has(mn) && has(mx)) {
        const r = q(ratio)!;
        const a = q(mn)!;
        const b = q(mx)!;
        const maxMilli = 9223372036854775807n / 1000n;
        let ratioV = Number(quantityValue(r));
        let minV = quantityValue(a);
        let maxV = quantityValue(b);
        if (quantityValue(r) < maxMilli && minV < maxMilli && maxV < maxMilli) {
          ratioV = Number(quantityMilliValue(r)) / 1000;
          minV = quantityMilliValue(a);
          maxV = quantityMilliValue(b);
        }
        const lim = Number(maxV) / Number(minV);
        if (ratioV > lim) errs.push(invalid(key(child(p, 'maxLimitRequestRatio'), k), qrepr(ratio), `ratio ${qstr(ratio)} is greater than max/min = ${lim.toFixed(6)}`));
      }
      if (!isOvercommitAllowed(k) && has(df) && has(dr) && qcmp(df, dr) !== 0)
        errs.push(invalid(key(child(p, 'defaultRequest'), k), qrepr(dr), `default value ${qstr(df)} must equal to defaultRequest value ${qstr(dr)} in ${k}`));
    }
  });
  return errs;
}

// ---- ResourceQuota ----

const QUOTA_SCOPES = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'];
const POD_COMPUTE = new Set(['cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory']);

function scopeValidForResource(scope: string, res: string): boolean {
  switch (scope) {
    case 'Terminating':
    case 'NotTerminating':
    case 'NotBestEffort':
    case 'PriorityClass':
    case 'CrossNamespacePodAffinity':
      return res === 'pods' || POD_COMPUTE.has(res);
    case 'BestEffort':
      return res === 'pods';
    default:
      return true;
  }
}

function validateQuotaResourceName(k: string, path: string): Errs {
  const errs = validateResourceName(k, path);
  if (!k.includes('/') && !isStandardQuotaResourceName(k)) return [...errs, invalid(path, k, 'must be a standard resource for quota')];
  return errs;
}

function validateQuotaList(m: unknown, path: string): Errs {
  const errs: Errs = [];
  for (const [k, v] of Object.entries(obj(m))) {
    errs.push(...validateQuotaResourceName(k, key(path, k)));
    errs.push(...validateResourceQuantityValue(k, v, key(path, k)));
  }
  return errs;
}

const scopesRepr = (s: unknown) => goStrings(s == null ? null : arr<string>(s), '[]core.ResourceQuotaScope');

function scopeSelectorRepr(sel: any): GoRepr {
  const exprs = arr(sel?.matchExpressions)
    .map(
      (e: any) =>
        `core.ScopedResourceSelectorRequirement{ScopeName:${goQuote(str(e?.scopeName))}, Operator:${goQuote(str(e?.operator))}, Values:${goStrings(e?.values == null ? null : arr(e.values)).repr}}`,
    )
    .join(', ');
  return new GoRepr(`core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{${exprs}}}`);
}

export function validateResourceQuotaSpec(spec: any): Errs {
  const errs = validateQuotaList(spec.hard, 'spec.hard');
  const hard = Object.keys(obj(spec.hard)).sort();
  const scopes = arr<string>(spec.scopes);
  if (scopes.length) {
    const set = new Set<string>();
    for (const s of scopes) {
      if (!QUOTA_SCOPES.includes(s)) errs.push(invalid('spec.scopes', scopesRepr(spec.scopes), 'unsupported scope'));
      for (const k of hard) if (isStandardQuotaResourceName(k) && !scopeValidForResource(s, k)) errs.push(invalid('spec.scopes', scopesRepr(spec.scopes), 'unsupported scope applied to resource'));
      set.add(s);
    }
    for (const [a, b] of [
      ['BestEffort', 'NotBestEffort'],
      ['Terminating', 'NotTerminating'],
    ])
      if (set.has(a!) && set.has(b!)) errs.push(invalid('spec.scopes', scopesRepr(spec.scopes), 'conflicting scopes'));
  }
  if (spec.scopeSelector != null) {
    const fp = 'spec.scopeSelector.matchExpressions';
    const set = new Set<string>();
    for (const r of arr(spec.scopeSelector.matchExpressions)) {
      const sn = str(r?.scopeName);
      if (!QUOTA_SCOPES.includes(sn)) errs.push(invalid(child(fp, 'scopeName'), sn, 'unsupported scope'));
      for (const k of hard) if (isStandardQuotaResourceName(k) && !scopeValidForResource(sn, k)) errs.push(invalid(fp, scopeSelectorRepr(spec.scopeSelector), 'unsupported scope applied to resource'));
      if (['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating', 'CrossNamespacePodAffinity'].includes(sn) && r?.operator !== 'Exists')
        errs.push(
          invalid(
            child(fp, 'operator'),
            str(r?.operator),
            "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
          ),
        );
      const vals = arr<string>(r?.values);
      switch (r?.operator) {
        case 'In':
        case 'NotIn':
          if (vals.length === 0) errs.push(required(child(fp, 'values'), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
          break;
        case 'Exists':
        case 'DoesNotExist':
          if (vals.length !== 0) errs.push(invalid(child(fp, 'values'), goStrings(vals), "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"));
          break;
        default:
          errs.push(invalid(child(fp, 'operator'), str(r?.operator), 'not a valid selector operator'));
      }
      set.add(sn);
    }
    for (const [a, b] of [
      ['BestEffort', 'NotBestEffort'],
      ['Terminating', 'NotTerminating'],
    ])
      if (set.has(a!) && set.has(b!)) errs.push(invalid(fp, scopesRepr(spec.scopes), 'conflicting scopes'));
  }
  return errs;
}

export function validateResourceQuota(rq: any): Errs {
  const errs = validateResourceQuotaSpec(obj(rq.spec));
  errs.push(...validateQuotaList(rq.status?.hard, 'status.hard'));
  errs.push(...validateQuotaList(rq.status?.used, 'status.used'));
  return errs;
}

export function validateResourceQuotaUpdate(rq: any, old: any): Errs {
  const errs = validateResourceQuotaSpec(obj(rq.spec));
  const a = new Set(arr<string>(rq.spec?.scopes));
  const b = new Set(arr<string>(old.spec?.scopes));
  if (a.size !== b.size || [...a].some((s) => !b.has(s))) errs.push(invalid('spec.scopes', scopesRepr(rq.spec?.scopes), FIELD_IMMUTABLE));
  return errs;
}

export function validateResourceQuotaStatusUpdate(rq: any): Errs {
  const errs = validateQuotaList(rq.status?.hard, 'status.hard');
  errs.push(...validateQuotaList(rq.status?.used, 'status.used'));
  return errs;
}

// ---- ReplicationController ----

export function validateReplicationControllerSpec(spec: any): Errs {
  const errs: Errs = [];
  errs.push(...validateNonnegative(typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0, 'spec.minReadySeconds'));
  const sel = obj(spec.selector);
  if (Object.keys(sel).length === 0) errs.push(required('spec.selector'));
  errs.push(...validateNonnegative(typeof spec.replicas === 'number' ? spec.replicas : 1, 'spec.replicas'));
  if (spec.template == null) errs.push(required('spec.template'));
  else {
    const labels = spec.template.metadata?.labels;
    if (Object.keys(sel).length > 0 && !selectorMatches({ matchLabels: sel }, labels))
      errs.push(invalid('spec.template.metadata.labels', goStringMap(labels ?? null), '`selector` does not match template `labels`'));
    errs.push(...validatePodTemplateSpec(spec.template, 'spec.template'));
    const rp = str(spec.template.spec?.restartPolicy) || 'Always';
    if (rp !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
    if (isSet(spec.template.spec?.activeDeadlineSeconds)) errs.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in ReplicationController is not Supported'));
  }
  return errs;
}

export function validateReplicaCountsStatus(st: any, extra: string[]): Errs {
  const errs: Errs = [];
  const n = (k: string) => (typeof st[k] === 'number' ? st[k] : 0);
  for (const k of ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration', ...extra]) errs.push(...validateNonnegative(n(k), child('status', k)));
  const msg = 'cannot be greater than status.replicas';
  if (n('fullyLabeledReplicas') > n('replicas')) errs.push(invalid('status.fullyLabeledReplicas', n('fullyLabeledReplicas'), msg));
  if (n('readyReplicas') > n('replicas')) errs.push(invalid('status.readyReplicas', n('readyReplicas'), msg));
  if (n('availableReplicas') > n('replicas')) errs.push(invalid('status.availableReplicas', n('availableReplicas'), msg));
  if (n('availableReplicas') > n('readyReplicas')) errs.push(invalid('status.availableReplicas', n('availableReplicas'), 'cannot be greater than readyReplicas'));
  return errs;
}

// ---- Event ----

const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

/** an events.k8s.io/v1 Event in the core/v1 shape validation reads */
export function eventAsCore(ev: any): any {
  return {
    metadata: ev.metadata,
    involvedObject: ev.regarding,
    reason: ev.reason,
    message: ev.note,
    source: ev.deprecatedSource,
    firstTimestamp: ev.deprecatedFirstTimestamp,
    lastTimestamp: ev.deprecatedLastTimestamp,
    count: ev.deprecatedCount,
    type: ev.type,
    eventTime: ev.eventTime,
    series: ev.series,
    action: ev.action,
    related: ev.related,
    reportingComponent: ev.reportingController,
    reportingInstance: ev.reportingInstance,
  };
}

const zeroTime = (t: unknown) => t == null || t === '' || t === '0001-01-01T00:00:00Z';

export function legacyValidateEvent(ev: any): Errs {
  const errs: Errs = [];
  const ns = str(ev.metadata?.namespace);
  const ions = str(ev.involvedObject?.namespace);
  if (zeroTime(ev.eventTime)) {
    if (!ions) {
      if (ns !== '' && ns !== 'default') errs.push(invalid('involvedObject.namespace', ions, 'does not match event.namespace'));
    } else if (ns !== ions) errs.push(invalid('involvedObject.namespace', ions, 'does not match event.namespace'));
  } else {
    if (!ions && ns !== 'default' && ns !== 'kube-system') errs.push(invalid('involvedObject.namespace', ions, 'does not match event.namespace'));
    const rc = str(ev.reportingComponent);
    if (!rc) errs.push(required('reportingController'));
    for (const m of isQualifiedName(rc)) errs.push(invalid('reportingController', rc, m));
    const ri = str(ev.reportingInstance);
    if (!ri) errs.push(required('reportingInstance'));
    if (ri.length > REPORTING_INSTANCE_LIMIT) errs.push(invalid('reportingInstance', '', `can have at most ${REPORTING_INSTANCE_LIMIT} characters`));
    const action = str(ev.action);
    if (!action) errs.push(required('action'));
    if (action.length > ACTION_LIMIT) errs.push(invalid('action', '', `can have at most ${ACTION_LIMIT} characters`));
    const reason = str(ev.reason);
    if (!reason) errs.push(required('reason'));
    if (reason.length > REASON_LIMIT) errs.push(invalid('reason', '', `can have at most ${REASON_LIMIT} characters`));
    if (str(ev.message).length > NOTE_LIMIT) errs.push(invalid('message', '', `can have at most ${NOTE_LIMIT} characters`));
  }
  for (const m of isDNS1123Subdomain(ns)) errs.push(invalid('namespace', ns, m));
  return errs;
}

function validateV1EventSeries(ev: any): Errs {
  const errs: Errs = [];
  if (ev.series != null) {
    if ((ev.series.count ?? 0) < 2) errs.push(invalid('series.count', '', 'should be at least 2'));
    if (zeroTime(ev.series.lastObservedTime)) errs.push(required('series.lastObservedTime'));
  }
  return errs;
}

/** ValidateEventCreate; strict rules apply to events.k8s.io (ev in the core shape) */
export function validateEventCreate(ev: any, strict: boolean): Errs {
  const errs = legacyValidateEvent(ev);
  if (!strict) return errs;
  errs.push(...validateV1EventSeries(ev));
  if (zeroTime(ev.eventTime)) errs.push(required('eventTime'));
  if (ev.type !== 'Normal' && ev.type !== 'Warning') errs.push(invalid('type', '', `has invalid value: ${str(ev.type)}`));
  if (!zeroTime(ev.firstTimestamp)) errs.push(invalid('firstTimestamp', '', 'needs to be unset'));
  if (!zeroTime(ev.lastTimestamp)) errs.push(invalid('lastTimestamp', '', 'needs to be unset'));
  if ((ev.count ?? 0) !== 0) errs.push(invalid('count', '', 'needs to be unset'));
  if (str(ev.source?.component) || str(ev.source?.host)) errs.push(invalid('source', '', 'needs to be unset'));
  return errs;
}

export function validateEventUpdate(ev: any, old: any, strict: boolean): Errs {
  const errs = legacyValidateEvent(ev);
  if (!strict) return errs;
  if (!jsonEqual(ev.series, old.series)) errs.push(...validateV1EventSeries(ev));
  const imm = (path: string, a: unknown, b: unknown, shown: unknown) => {
    if (!jsonEqual(a ?? null, b ?? null)) errs.push(invalid(path, shown, FIELD_IMMUTABLE));
  };
  imm('involvedObject', ev.involvedObject, old.involvedObject, objectRefRepr(ev.involvedObject));
  imm('reason', ev.reason, old.reason, str(ev.reason));
  imm('message', ev.message, old.message, str(ev.message));
  imm('source', ev.source, old.source, new GoRepr(`core.EventSource{Component:${goQuote(str(ev.source?.component))}, Host:${goQuote(str(ev.source?.host))}}`));
  imm('firstTimestamp', ev.firstTimestamp, old.firstTimestamp, new GoRepr(String(ev.firstTimestamp ?? '0001-01-01 00:00:00 +0000 UTC')));
  imm('lastTimestamp', ev.lastTimestamp, old.lastTimestamp, new GoRepr(String(ev.lastTimestamp ?? '0001-01-01 00:00:00 +0000 UTC')));
  imm('count', ev.count ?? 0, old.count ?? 0, ev.count ?? 0);
  imm('reason', ev.reason, old.reason, str(ev.reason));
  imm('type', ev.type, old.type, str(ev.type));
  imm('eventTime', ev.eventTime, old.eventTime, new GoRepr(String(ev.eventTime ?? '0001-01-01 00:00:00 +0000 UTC')));
  imm('action', ev.action, old.action, str(ev.action));
  imm('related', ev.related, old.related, ev.related == null ? null : objectRefRepr(ev.related));
  imm('reportingController', ev.reportingComponent, old.reportingComponent, str(ev.reportingComponent));
  imm('reportingInstance', ev.reportingInstance, old.reportingInstance, str(ev.reportingInstance));
  return errs;
}

function objectRefRepr(r: any): GoRepr {
  const o = obj(r);
  return new GoRepr(
    `core.ObjectReference{Kind:${goQuote(str(o.kind))}, Namespace:${goQuote(str(o.namespace))}, Name:${goQuote(str(o.name))}, UID:${goQuote(str(o.uid))}, APIVersion:${goQuote(str(o.apiVersion))}, ResourceVersion:${goQuote(str(o.resourceVersion))}, FieldPath:${goQuote(str(o.fieldPath))}}`,
  );
}

// ---- Binding ----

export function validateBinding(b: any): Errs {
  const errs: Errs = [];
  const kind = str(b.target?.kind);
  if (kind && kind !== 'Node') errs.push(notSupported('target.kind', kind, ['Node', '<empty>']));
  if (!str(b.target?.name)) errs.push(required('target.name'));
  return errs;
}

export { IS_NEGATIVE, isDNS1123Label, quantityString };
