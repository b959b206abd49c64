// Volume sources (pods), persistent volume and claim specs, and node selectors, with
// Kubernetes' rules and wording (pkg/apis/core/validation).
import { validateName } from '../../machinery/validation.js';
import { child, duplicate, forbidden, goStrings, GoRepr, idx, invalid, key, notSupported, required, tooLong, type Errs } from './errs.js';
import {
  arr,
  inclusiveRangeError,
  isDNS1123Label,
  isDNS1123Subdomain,
  isLabelValue,
  isSet,
  obj,
  q,
  qcmp,
  qrepr,
  qsign,
  str,
  validateDNS1123Label,
  validateDNS1123Subdomain,
  validateLabelName,
  validateLabelSelector,
  validateLabels,
  validateAnnotations,
  validateLocalDescendingPath,
  validateLocalNonReservedPath,
  validatePathNoBacksteps,
  validateQualifiedName,
  isQualifiedName,
  operatorErrors,
} from './util.js';
import { quantityString, quantityValue, goResourceList } from './quantity.js';

const FILE_MODE_ERR = 'must be a number between 0 and 0777 (octal), both inclusive';
const MORE_THAN_ONE = 'may not specify more than 1 volume type';

export interface PodValidationOptions {
  resourceIsPod: boolean;
  allowInvalidLabelValueInSelector?: boolean;
  allowInvalidTopologySpreadConstraintLabelSelector?: boolean;
  allowInvalidLabelValueInRequiredNodeAffinity?: boolean;
}

function fileMode(v: unknown, path: string): Errs {
  if (typeof v === 'number' && (v > 0o777 || v < 0)) return [invalid(path, v, FILE_MODE_ERR)];
  return [];
}

function validateKeyToPath(kp: any, path: string): Errs {
  const errs: Errs = [];
  if (!str(kp.key)) errs.push(required(child(path, 'key')));
  if (!str(kp.path)) errs.push(required(child(path, 'path')));
  errs.push(...validateLocalNonReservedPath(str(kp.path), child(path, 'path')));
  errs.push(...fileMode(kp.mode, child(path, 'mode')));
  return errs;
}

const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];

function hostPath(s: any, p: string): Errs {
  if (!str(s.path)) return [required(child(p, 'path'))];
  const errs = validatePathNoBacksteps(str(s.path), child(p, 'path'));
  if (isSet(s.type) && !HOST_PATH_TYPES.includes(str(s.type))) errs.push(notSupported(child(p, 'type'), str(s.type), HOST_PATH_TYPES));
  return errs;
}

function gitRepo(s: any, p: string): Errs {
  const errs: Errs = [];
  if (!str(s.repository)) errs.push(required(child(p, 'repository')));
  errs.push(...validateLocalDescendingPath(str(s.directory), child(p, 'directory')));
  return errs;
}

function partition(s: any, p: string, fieldName: string): Errs {
  const v = typeof s[fieldName] === 'number' ? s[fieldName] : 0;
  return v < 0 || v > 255 ? [invalid(child(p, fieldName), v, inclusiveRangeError(1, 255))] : [];
}

function gcePD(s: any, p: string): Errs {
  const errs: Errs = [];
  if (!str(s.pdName)) errs.push(required(child(p, 'pdName')));
  errs.push(...partition(s, p, 'partition'));
  return errs;
}

function awsEBS(s: any, p: string): Errs {
  const errs: Errs = [];
  if (!str(s.volumeID)) errs.push(required(child(p, 'volumeID')));
  errs.push(...partition(s, p, 'partition'));
  return errs;
}

function secretVol(s: any, p: string): Errs {
  const errs: Errs = [];
  if (!str(s.secretName)) errs.push(required(child(p, 'secretName')));
  errs.push(...fileMode(s.defaultMode, child(p, 'defaultMode')));
  arr(s.items).forEach((kp, i) => errs.push(...validateKeyToPath(kp, idx(child(p, 'items'), i))));
  return errs;
}

function configMapVol(s: any, p: string): Errs {
  const errs: Errs = [];
  if (!str(s.name)) errs.push(required(child(p, 'name')));
  errs.push(...fileMode(s.defaultMode, child(p, 'defaultMode')));
  arr(s.items).forEach((kp, i) => errs.push(...validateKeyToPath(kp, idx(child(p, 'items'), i))));
  return errs;
}

function nfs(s: any, p: string): Errs {
  const errs: Errs = [];
  if (!str(s.server)) errs.push(required(child(p, 'server')));
  if (!str(s.path)) errs.push(required(child(p, 'path')));
  if (!str(s.path).startsWith('/')) errs.push(invalid(child(p, 'path'), str(s.path), 'must be an absolute path'));
  return errs;
}

const reIqn = /iqn\.\d{4}-\d{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\s]+)$/;
const reEui = /^eui.[A-Za-z0-9]{16}$/;
const reNaa = /^naa.[A-Za-z0-9]{32}$/;

function iqnErrs(v: string, path: string, startMsg: string): Errs {
  if (!v.startsWith('iqn') && !v.startsWith('eui') && !v.startsWith('naa')) return [invalid(path, v, startMsg)];
  if (v.startsWith('iqn') && !reIqn.test(v)) return [invalid(path, v, 'must be valid format')];
  if (v.startsWith('eui') && !reEui.test(v)) return [invalid(path, v, 'must be valid format')];
  if (v.startsWith('naa') && !reNaa.test(v)) return [invalid(path, v, 'must be valid format')];
  return [];
}

function iscsi(s: any, p: string, volName: string): Errs {
  const errs: Errs = [];
  if (!str(s.targetPortal)) errs.push(required(child(p, 'targetPortal')));
  if (!str(s.iqn)) errs.push(required(child(p, 'iqn')));
  else errs.push(...iqnErrs(str(s.iqn), child(p, 'iqn'), 'must be valid format starting with iqn, eui, or naa'));
  const lun = typeof s.lun === 'number' ? s.lun : 0;
  if (lun < 0 || lun > 255) errs.push(invalid(child(p, 'lun'), lun, inclusiveRangeError(0, 255)));
  if ((s.chapAuthDiscovery || s.chapAuthSession) && s.secretRef == null) errs.push(required(child(p, 'secretRef')));
  if (isSet(s.initiatorName)) {
    const ini = str(s.initiatorName);
    if (!ini.startsWith('iqn') && !ini.startsWith('eui') && !ini.startsWith('naa'))
      errs.push(invalid(child(p, 'initiatorname'), ini, 'must be valid format starting with iqn, eui, or naa'));
    if (ini.startsWith('iqn') && !reIqn.test(ini)) errs.push(invalid(child(p, 'initiatorname'), ini, 'must be valid format'));
    else if (ini.startsWith('eui') && !reEui.test(ini)) errs.push(invalid(child(p, 'initiatorname'), ini, 'must be valid format'));
    else if (ini.startsWith('naa') && !reNaa.test(ini)) errs.push(invalid(child(p, 'initiatorname'), ini, 'must be valid format'));
  }
  void volName;
  return errs;
}

function glusterfs(s: any, p: string): Errs {
  const errs: Errs = [];
  if (!str(s.endpoints)) errs.push(required(child(p, 'endpoints')));
  if (!str(s.path)) errs.push(required(child(p, 'path')));
  return errs;
}

function flocker(s: any, p: string): Errs {
  const errs: Errs = [];
  const n = str(s.datasetName);
  const u = str(s.datasetUUID);
  if (!n && !u) errs.push(required(p, 'one of datasetName and datasetUUID is required'));
  if (n && u) errs.push(invalid(p, 'resource', 'datasetName and datasetUUID can not be specified simultaneously'));
  if (n.includes('/')) errs.push(invalid(child(p, 'datasetName'), n, "must not contain '/'"));
  return errs;
}

function pvcSource(s: any, p: string): Errs {
  return str(s.claimName) ? [] : [required(child(p, 'claimName'))];
}

function rbd(s: any, p: string): Errs {
  const errs: Errs = [];
  if (arr(s.monitors).length === 0) errs.push(required(child(p, 'monitors')));
  if (!str(s.image)) errs.push(required(child(p, 'image')));
  return errs;
}

function cinder(s: any, p: string, pv: boolean): Errs {
  const errs: Errs = [];
  if (!str(s.volumeID)) errs.push(required(child(p, 'volumeID')));
  if (s.secretRef != null) {
    if (!str(s.secretRef.name)) errs.push(required(child(p, 'secretRef', 'name')));
    if (pv && !str(s.secretRef.namespace)) errs.push(required(child(p, 'secretRef', 'namespace')));
  }
  return errs;
}

function cephfs(s: any, p: string): Errs {
  return arr(s.monitors).length === 0 ? [required(child(p, 'monitors'))] : [];
}

function quobyte(s: any, p: string): Errs {
  const errs: Errs = [];
  const reg = str(s.registry);
  if (!reg) errs.push(required(child(p, 'registry'), 'must be a host:port pair or multiple pairs separated by commas'));
  else if (str(s.tenant).length >= 65) errs.push(required(child(p, 'tenant'), 'must be a UUID and may not exceed a length of 64 characters'));
  else
    for (const hp of reg.split(','))
      if (!/^(\[[^\]]*\]|[^:[\]]*):[^:]*$/.test(hp)) errs.push(invalid(child(p, 'registry'), reg, 'must be a host:port pair or multiple pairs separated by commas'));
  if (!str(s.volume)) errs.push(required(child(p, 'volume')));
  return errs;
}

const VOL_DOWNWARD_PATHS = ['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid'];
export const ENV_DOWNWARD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];
export const RESOURCE_FIELD_PATHS = ['limits.cpu', 'limits.ephemeral-storage', 'limits.memory', 'requests.cpu', 'requests.ephemeral-storage', 'requests.memory'];

/** fieldpath.SplitMaybeSubscriptedPath */
function splitSubscripted(fp: string): [string, string, boolean] {
  if (!fp.endsWith("']")) return [fp, '', false];
  const s = fp.slice(0, -2);
  const i = s.indexOf("['");
  if (i < 0) return [fp, '', false];
  if (i === 0) return [fp, '', false];
  return [s.slice(0, i), s.slice(i + 2), true];
}

const DOWNWARD_LABELS = new Set([
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.serviceAccountName',
  'spec.schedulerName',
  'status.phase',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
]);

/** podshelper.ConvertDownwardAPIFieldLabel */
function convertDownwardLabel(version: string, label: string): [string, string | null] {
  if (version !== 'v1') return ['', `unsupported pod version: ${version}`];
  const [p, , ok] = splitSubscripted(label);
  if (ok) {
    if (p === 'metadata.annotations' || p === 'metadata.labels') return [label, null];
    return ['', `field label does not support subscript: ${label}`];
  }
  if (DOWNWARD_LABELS.has(label)) return [label, null];
  if (label === 'spec.host') return ['spec.nodeName', null];
  return ['', `field label not supported: ${label}`];
}

export function validateObjectFieldSelector(fs: any, expressions: string[], path: string): Errs {
  const apiVersion = str(fs.apiVersion) || 'v1';
  const fp = str(fs.fieldPath);
  if (!fp) return [required(child(path, 'fieldPath'))];
  const [internalPath, err] = convertDownwardLabel(apiVersion, fp);
  if (err) return [invalid(child(path, 'fieldPath'), fp, `error converting fieldPath: ${err}`)];
  const [p, sub, ok] = splitSubscripted(internalPath);
  if (ok) {
    if (p === 'metadata.annotations') return validateQualifiedName(sub.toLowerCase(), path);
    if (p === 'metadata.labels') return validateQualifiedName(sub, path);
    return [invalid(path, p, 'does not support subscript')];
  }
  if (!expressions.includes(p)) return [notSupported(child(path, 'fieldPath'), p, expressions)];
  return [];
}

const DIV_CPU = ['1m', '1'];
const DIV_MEM = ['1', '1k', '1M', '1G', '1T', '1P', '1E', '1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei'];

function validateDivisor(rName: string, divisor: unknown, path: string): Errs {
  const d = q(divisor);
  if (!d || d.nano === 0n) return [];
  const s = quantityString(d);
  const errs: Errs = [];
  const p = child(path, 'divisor');
  if ((rName === 'limits.cpu' || rName === 'requests.cpu') && !DIV_CPU.includes(s))
    errs.push(invalid(p, rName, "only divisor's values 1m and 1 are supported with the cpu resource"));
  if ((rName === 'limits.memory' || rName === 'requests.memory') && !DIV_MEM.includes(s))
    errs.push(invalid(p, rName, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource"));
  if ((rName === 'limits.ephemeral-storage' || rName === 'requests.ephemeral-storage') && !DIV_MEM.includes(s))
    errs.push(invalid(p, rName, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource"));
  if ((rName.startsWith('requests.hugepages-') || rName.startsWith('limits.hugepages-')) && !DIV_MEM.includes(s))
    errs.push(invalid(p, rName, "only divisor's values 1, 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the hugepages resource".replace('1, 1, ', '1, ')));
  return errs;
}

export function validateContainerResourceFieldSelector(fs: any, path: string, volume: boolean): Errs {
  const errs: Errs = [];
  const res = str(fs.resource);
  if (volume && !str(fs.containerName)) errs.push(required(child(path, 'containerName')));
  else if (!res) errs.push(required(child(path, 'resource')));
  else if (!RESOURCE_FIELD_PATHS.includes(res)) {
    if (!res.startsWith('limits.hugepages-') && !res.startsWith('requests.hugepages-')) errs.push(notSupported(child(path, 'resource'), res, RESOURCE_FIELD_PATHS));
  }
  errs.push(...validateDivisor(res, fs.divisor, path));
  return errs;
}

function downwardAPIFile(file: any, path: string): Errs {
  const errs: Errs = [];
  if (!str(file.path)) errs.push(required(child(path, 'path')));
  errs.push(...validateLocalNonReservedPath(str(file.path), child(path, 'path')));
  if (file.fieldRef != null) {
    errs.push(...validateObjectFieldSelector(file.fieldRef, VOL_DOWNWARD_PATHS, child(path, 'fieldRef')));
    if (file.resourceFieldRef != null) errs.push(invalid(path, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'));
  } else if (file.resourceFieldRef != null) {
    errs.push(...validateContainerResourceFieldSelector(file.resourceFieldRef, child(path, 'resourceFieldRef'), true));
  } else errs.push(required(path, 'one of fieldRef and resourceFieldRef is required'));
  errs.push(...fileMode(file.mode, child(path, 'mode')));
  return errs;
}

function downwardAPIVol(s: any, p: string): Errs {
  const errs = fileMode(s.defaultMode, child(p, 'defaultMode'));
  for (const f of arr(s.items)) errs.push(...downwardAPIFile(f, p));
  return errs;
}

function fc(s: any, p: string): Errs {
  const errs: Errs = [];
  const t = arr(s.targetWWNs);
  const w = arr(s.wwids);
  if (t.length < 1 && w.length < 1) errs.push(required(child(p, 'targetWWNs'), 'must specify either targetWWNs or wwids, but not both'));
  if (t.length && w.length) errs.push(invalid(child(p, 'targetWWNs'), goStrings(t), 'targetWWNs and wwids can not be specified simultaneously'));
  if (t.length) {
    if (!isSet(s.lun)) errs.push(required(child(p, 'lun'), 'lun is required if targetWWNs is specified'));
    else if (s.lun < 0 || s.lun > 255) errs.push(invalid(child(p, 'lun'), s.lun, inclusiveRangeError(0, 255)));
  }
  return errs;
}

function flex(s: any, p: string): Errs {
  const errs: Errs = [];
  if (!str(s.driver)) errs.push(required(child(p, 'driver')));
  for (const k of Object.keys(obj(s.options))) {
    const ns = k.includes('/') ? k.slice(0, k.indexOf('/')) : k;
    const n = '.' + ns.toLowerCase();
    if (n.endsWith('.kubernetes.io') || n.endsWith('.k8s.io')) errs.push(invalid(key(child(p, 'options'), k), k, 'kubernetes.io and k8s.io namespaces are reserved'));
  }
  return errs;
}

function azureFile(s: any, p: string, pv: boolean): Errs {
  const errs: Errs = [];
  if (!str(s.secretName)) errs.push(required(child(p, 'secretName')));
  if (!str(s.shareName)) errs.push(required(child(p, 'shareName')));
  if (pv && isSet(s.secretNamespace) && !str(s.secretNamespace)) errs.push(required(child(p, 'secretNamespace')));
  return errs;
}

function azureDisk(s: any, p: string): Errs {
  const errs: Errs = [];
  if (!str(s.diskName)) errs.push(required(child(p, 'diskName')));
  if (!str(s.diskURI)) errs.push(required(child(p, 'diskURI')));
  const modes = ['None', 'ReadOnly', 'ReadWrite'];
  const kinds = ['Dedicated', 'Managed', 'Shared'];
  if (isSet(s.cachingMode) && !modes.includes(s.cachingMode)) errs.push(notSupported(child(p, 'cachingMode'), s.cachingMode, modes));
  if (isSet(s.kind) && !kinds.includes(s.kind)) errs.push(notSupported(child(p, 'kind'), s.kind, kinds));
  const uri = str(s.diskURI);
  if (isSet(s.kind) && s.kind === 'Managed' && uri.indexOf('/subscriptions/') !== 0)
    errs.push(notSupported(child(p, 'diskURI'), uri, ['/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}']));
  if (isSet(s.kind) && s.kind !== 'Managed' && uri.indexOf('https://') !== 0)
    errs.push(notSupported(child(p, 'diskURI'), uri, ['https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd']));
  return errs;
}

const simpleRequired =
  (...names: string[]) =>
  (s: any, p: string): Errs =>
    names.filter((n) => !str(s[n])).map((n) => required(child(p, n)));

function storageos(s: any, p: string, pv: boolean): Errs {
  const errs: Errs = [];
  if (!str(s.volumeName)) errs.push(required(child(p, 'volumeName')));
  else errs.push(...validateDNS1123Label(str(s.volumeName), child(p, 'volumeName')));
  if (str(s.volumeNamespace)) errs.push(...validateDNS1123Label(str(s.volumeNamespace), child(p, 'volumeNamespace')));
  if (s.secretRef != null) {
    if (!str(s.secretRef.name)) errs.push(required(child(p, 'secretRef', 'name')));
    if (pv && !str(s.secretRef.namespace)) errs.push(required(child(p, 'secretRef', 'namespace')));
  }
  return errs;
}

export function validateCSIDriverName(driver: string, path: string): Errs {
  const errs: Errs = [];
  if (!driver) errs.push(required(path));
  if (driver.length > 63) errs.push(tooLong(path, 63));
  for (const m of isDNS1123Subdomain(driver.toLowerCase())) errs.push(invalid(path, driver, m));
  return errs;
}

function csiVol(s: any, p: string): Errs {
  const errs = validateCSIDriverName(str(s.driver), child(p, 'driver'));
  if (s.nodePublishSecretRef != null) {
    const n = str(s.nodePublishSecretRef.name);
    if (!n) errs.push(required(child(p, 'nodePublishSecretRef', 'name')));
    else for (const m of isDNS1123Subdomain(n)) errs.push(invalid(child(p, 'name'), n, m));
  }
  return errs;
}

function projected(s: any, p: string, opts: PodValidationOptions): Errs {
  const errs = fileMode(s.defaultMode, child(p, 'defaultMode'));
  const allPaths = new Set<string>();
  arr(s.sources).forEach((src: any, i: number) => {
    let n = 0;
    const sp = idx(child(p, 'sources'), i);
    if (src.secret != null) {
      n++;
      const pp = child(sp, 'secret');
      if (!str(src.secret.name)) errs.push(required(child(pp, 'name')));
      arr(src.secret.items).forEach((kp: any, j: number) => {
        errs.push(...validateKeyToPath(kp, idx(child(pp, 'items'), j)));
        if (str(kp.path)) {
          if (!allPaths.has(kp.path)) allPaths.add(kp.path);
          else errs.push(invalid(p, str(src.secret.name), 'conflicting duplicate paths'));
        }
      });
    }
    if (src.configMap != null) {
      n++;
      const pp = child(sp, 'configMap');
      if (!str(src.configMap.name)) errs.push(required(child(pp, 'name')));
      arr(src.configMap.items).forEach((kp: any, j: number) => {
        errs.push(...validateKeyToPath(kp, idx(child(pp, 'items'), j)));
        if (str(kp.path)) {
          if (!allPaths.has(kp.path)) allPaths.add(kp.path);
          else errs.push(invalid(p, str(src.configMap.name), 'conflicting duplicate paths'));
        }
      });
    }
    if (src.downwardAPI != null) {
      n++;
      const pp = child(sp, 'downwardAPI');
      for (const f of arr(src.downwardAPI.items)) {
        errs.push(...downwardAPIFile(f, pp));
        if (str(f.path)) {
          if (!allPaths.has(f.path)) allPaths.add(f.path);
          else errs.push(invalid(p, f.path, 'conflicting duplicate paths'));
        }
      }
    }
    if (src.serviceAccountToken != null) {
      n++;
      const pp = child(sp, 'serviceAccountToken');
      const exp = typeof src.serviceAccountToken.expirationSeconds === 'number' ? src.serviceAccountToken.expirationSeconds : 3600;
      if (exp < 600) errs.push(invalid(child(pp, 'expirationSeconds'), exp, 'may not specify a duration less than 10 minutes'));
      if (exp > 2 ** 32) errs.push(invalid(child(pp, 'expirationSeconds'), exp, 'may not specify a duration larger than 2^32 seconds'));
      if (!str(src.serviceAccountToken.path)) errs.push(required(child(p, 'path')));
      else errs.push(...validateLocalNonReservedPath(str(src.serviceAccountToken.path), child(p, 'path')));
    }
    if (src.clusterTrustBundle != null) {
      n++;
      const ctb = src.clusterTrustBundle;
      const pp = child(sp, 'clusterTrustBundle');
      const usingName = isSet(ctb.name);
      const usingSigner = isSet(ctb.signerName);
      if (usingName && usingSigner) errs.push(invalid(pp, 'clusterTrustBundle', 'only one of name and signerName may be used'));
      else if (usingName) {
        if (!str(ctb.name)) errs.push(required(child(pp, 'name'), 'must be a valid object name'));
        if (ctb.labelSelector != null) errs.push(invalid(child(pp, 'labelSelector'), 'labelSelector', 'labelSelector must be unset if name is specified'));
      } else if (usingSigner) {
        if (!str(ctb.signerName)) errs.push(required(child(pp, 'signerName'), 'must be a valid signer name'));
        errs.push(...validateLabelSelector(ctb.labelSelector, child(pp, 'labelSelector')));
      } else errs.push(required(pp, 'either name or signerName must be specified'));
      if (!str(ctb.path)) errs.push(required(child(pp, 'path')));
      errs.push(...validateLocalNonReservedPath(str(ctb.path), child(pp, 'path')));
      if (!allPaths.has(str(ctb.path))) allPaths.add(str(ctb.path));
      else errs.push(invalid(p, str(ctb.path), 'conflicting duplicate paths'));
    }
    if (n > 1) errs.push(forbidden(sp, 'may not specify more than 1 volume type per source'));
  });
  void opts;
  return errs;
}

function imageVol(s: any, p: string, opts: PodValidationOptions): Errs {
  const errs: Errs = [];
  if (opts.resourceIsPod && !str(s.reference)) errs.push(required(child(p, 'reference')));
  errs.push(...validatePullPolicy(s.pullPolicy, child(p, 'pullPolicy')));
  return errs;
}

export function validatePullPolicy(v: unknown, path: string): Errs {
  const s = str(v);
  if (s === '' || s === 'Always' || s === 'IfNotPresent' || s === 'Never') return [];
  return [notSupported(path, s, ['Always', 'IfNotPresent', 'Never'])];
}

function ephemeral(s: any, p: string): Errs {
  if (s.volumeClaimTemplate == null) return [required(child(p, 'volumeClaimTemplate'))];
  const t = s.volumeClaimTemplate;
  const tp = child(p, 'volumeClaimTemplate');
  const errs = validateTemplateObjectMeta(t.metadata, child(tp, 'metadata'));
  errs.push(...validatePersistentVolumeClaimSpec(obj(t.spec), child(tp, 'spec')));
  return errs;
}

/** ValidateTemplateObjectMeta: only labels and annotations may be set */
export function validateTemplateObjectMeta(meta: any, path: string): Errs {
  const m = obj(meta);
  const errs = validateAnnotations(m.annotations, child(path, 'annotations'));
  errs.push(...validateLabels(m.labels, child(path, 'labels')));
  for (const [k, v] of Object.entries(m)) {
    if (k === 'labels' || k === 'annotations') continue;
    const empty = v == null || v === '' || v === 0 || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && Object.keys(v as object).length === 0);
    if (!empty) errs.push(forbidden(child(path, k), 'cannot be set'));
  }
  return errs;
}

/** validateVolumeSource: exactly one source; the order of the checks is Kubernetes' */
export function validateVolumeSource(src: any, path: string, volName: string, podName: string | undefined, opts: PodValidationOptions): Errs {
  let n = 0;
  const errs: Errs = [];
  const one = (jsonName: string, forbidName: string, fn: () => Errs) => {
    if (src[jsonName] == null) return;
    if (n > 0) errs.push(forbidden(child(path, forbidName), MORE_THAN_ONE));
    else {
      n++;
      errs.push(...fn());
    }
  };
  if (src.emptyDir != null) {
    n++;
    const lim = src.emptyDir.sizeLimit;
    if (isSet(lim) && qsign(lim) < 0) errs.push(forbidden(child(path, 'emptyDir', 'sizeLimit'), 'SizeLimit field must be a valid resource quantity'));
  }
  one('hostPath', 'hostPath', () => hostPath(src.hostPath, child(path, 'hostPath')));
  one('gitRepo', 'gitRepo', () => gitRepo(src.gitRepo, child(path, 'gitRepo')));
  one('gcePersistentDisk', 'gcePersistentDisk', () => gcePD(src.gcePersistentDisk, child(path, 'persistentDisk')));
  one('awsElasticBlockStore', 'awsElasticBlockStore', () => awsEBS(src.awsElasticBlockStore, child(path, 'awsElasticBlockStore')));
  one('secret', 'secret', () => secretVol(src.secret, child(path, 'secret')));
  one('nfs', 'nfs', () => nfs(src.nfs, child(path, 'nfs')));
  if (src.iscsi != null) {
    one('iscsi', 'iscsi', () => iscsi(src.iscsi, child(path, 'iscsi'), volName));
    if (isSet(src.iscsi.initiatorName) && (volName + ':' + str(src.iscsi.targetPortal)).length > 64)
      errs.push(invalid(child(path, 'name'), volName, 'Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.'));
  }
  one('glusterfs', 'glusterfs', () => glusterfs(src.glusterfs, child(path, 'glusterfs')));
  one('flocker', 'flocker', () => flocker(src.flocker, child(path, 'flocker')));
  one('persistentVolumeClaim', 'persistentVolumeClaim', () => pvcSource(src.persistentVolumeClaim, child(path, 'persistentVolumeClaim')));
  one('rbd', 'rbd', () => rbd(src.rbd, child(path, 'rbd')));
  one('cinder', 'cinder', () => cinder(src.cinder, child(path, 'cinder'), false));
  one('cephfs', 'cephFS', () => cephfs(src.cephfs, child(path, 'cephfs')));
  one('quobyte', 'quobyte', () => quobyte(src.quobyte, child(path, 'quobyte')));
  one('downwardAPI', 'downwarAPI', () => downwardAPIVol(src.downwardAPI, child(path, 'downwardAPI')));
  one('fc', 'fc', () => fc(src.fc, child(path, 'fc')));
  one('flexVolume', 'flexVolume', () => flex(src.flexVolume, child(path, 'flexVolume')));
  one('configMap', 'configMap', () => configMapVol(src.configMap, child(path, 'configMap')));
  one('azureFile', 'azureFile', () => azureFile(src.azureFile, child(path, 'azureFile'), false));
  one('vsphereVolume', 'vsphereVolume', () => simpleRequired('volumePath')(src.vsphereVolume, child(path, 'vsphereVolume')));
  one('photonPersistentDisk', 'photonPersistentDisk', () => simpleRequired('pdID')(src.photonPersistentDisk, child(path, 'photonPersistentDisk')));
  one('portworxVolume', 'portworxVolume', () => simpleRequired('volumeID')(src.portworxVolume, child(path, 'portworxVolume')));
  one('azureDisk', 'azureDisk', () => azureDisk(src.azureDisk, child(path, 'azureDisk')));
  one('storageos', 'storageos', () => storageos(src.storageos, child(path, 'storageos'), false));
  one('projected', 'projected', () => projected(src.projected, child(path, 'projected'), opts));
  one('scaleIO', 'scaleIO', () => simpleRequired('gateway', 'system', 'volumeName')(src.scaleIO, child(path, 'scaleIO')));
  one('csi', 'csi', () => csiVol(src.csi, child(path, 'csi')));
  one('ephemeral', 'ephemeral', () => {
    const e = ephemeral(src.ephemeral, child(path, 'ephemeral'));
    if (podName && volName) {
      const pvcName = `${podName}-${volName}`;
      for (const m of isDNS1123Subdomain(pvcName)) e.push(invalid(child(path, 'name'), volName, `PVC name ${JSON.stringify(pvcName)}: ${m}`));
    }
    return e;
  });
  one('image', 'image', () => imageVol(src.image, child(path, 'image'), opts));
  if (n === 0) errs.push(required(path, 'must specify a volume type'));
  return errs;
}

export function validateVolumes(volumes: any[], podName: string | undefined, path: string, opts: PodValidationOptions): { vols: Map<string, any>; errs: Errs } {
  const errs: Errs = [];
  const names = new Set<string>();
  const created = new Set<string>();
  if (podName) for (const v of volumes) if (v?.ephemeral != null) created.add(`${podName}-${str(v.name)}`);
  const vols = new Map<string, any>();
  volumes.forEach((vol: any, i: number) => {
    const ip = idx(path, i);
    const np = child(ip, 'name');
    const name = str(vol?.name);
    const el = validateVolumeSource(obj(vol), ip, name, podName, opts);
    if (!name) el.push(required(np));
    else el.push(...validateDNS1123Label(name, np));
    if (names.has(name)) el.push(duplicate(np, name));
    if (el.length === 0) {
      names.add(name);
      vols.set(name, vol);
    } else errs.push(...el);
    if (vol?.persistentVolumeClaim != null && created.has(str(vol.persistentVolumeClaim.claimName)))
      errs.push(invalid(child(ip, 'persistentVolumeClaim', 'claimName'), str(vol.persistentVolumeClaim.claimName), 'must not reference a PVC that gets created for an ephemeral volume'));
  });
  return { vols, errs };
}

// ---- node selectors ----

export function validateNodeSelectorRequirement(rq: any, allowInvalidValues: boolean, path: string): Errs {
  const values = arr<string>(rq.values);
  const errs = operatorErrors(rq, path, false, true);
  errs.push(...validateLabelName(str(rq.key), child(path, 'key')));
  if (!allowInvalidValues) values.forEach((v, i) => isLabelValue(str(v)).forEach((m) => errs.push(invalid(idx(child(path, 'values'), i), str(v), m))));
  return errs;
}

function validateNodeFieldSelectorRequirement(rq: any, path: string): Errs {
  const errs: Errs = [];
  const values = arr<string>(rq.values);
  if (rq.operator === 'In' || rq.operator === 'NotIn') {
    if (values.length !== 1) errs.push(required(child(path, 'values'), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else errs.push(invalid(child(path, 'operator'), str(rq.operator), 'not a valid selector operator'));
  if (rq.key !== 'metadata.name') errs.push(invalid(child(path, 'key'), str(rq.key), 'not a valid field selector key'));
  else values.forEach((v, i) => isDNS1123Subdomain(str(v)).forEach((m) => errs.push(invalid(idx(child(path, 'values'), i), str(v), m))));
  return errs;
}

export function validateNodeSelectorTerm(term: any, allowInvalidValues: boolean, path: string): Errs {
  const errs: Errs = [];
  arr(term.matchExpressions).forEach((r, j) => errs.push(...validateNodeSelectorRequirement(r, allowInvalidValues, idx(child(path, 'matchExpressions'), j))));
  arr(term.matchFields).forEach((r, j) => errs.push(...validateNodeFieldSelectorRequirement(r, idx(child(path, 'matchFields'), j))));
  return errs;
}

export function validateNodeSelector(ns: any, allowInvalidValues: boolean, path: string): Errs {
  const terms = arr(ns.nodeSelectorTerms);
  const tp = child(path, 'nodeSelectorTerms');
  if (terms.length === 0) return [required(tp, 'must have at least one node selector term')];
  const errs: Errs = [];
  terms.forEach((t, i) => errs.push(...validateNodeSelectorTerm(obj(t), allowInvalidValues, idx(tp, i))));
  return errs;
}

/** ValidateTopologySelectorTerm; returns the term as a map for duplicate detection */
export function validateTopologySelectorTerm(term: any, path: string): { map: Map<string, Set<string>>; errs: Errs } {
  const errs: Errs = [];
  const map = new Map<string, Set<string>>();
  const ep = child(path, 'matchLabelExpressions');
  arr(term.matchLabelExpressions).forEach((rq: any, i: number) => {
    const ip = idx(ep, i);
    const vp = child(ip, 'values');
    const values = arr<string>(rq.values);
    const set = new Set<string>();
    if (values.length === 0) errs.push(required(vp));
    values.forEach((v, j) => {
      if (set.has(v)) errs.push(duplicate(idx(vp, j), v));
      set.add(v);
    });
    errs.push(...validateLabelName(str(rq.key), child(ip, 'key')));
    if (map.has(str(rq.key))) errs.push(duplicate(child(ip, 'key'), str(rq.key)));
    map.set(str(rq.key), set);
  });
  return { map, errs };
}

// ---- persistent volume claims ----

export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const VOLUME_MODES = ['Block', 'Filesystem'];

function validateAccessModes(modes: any[], path: string, requiredMsg: string): Errs {
  const errs: Errs = [];
  if (modes.length === 0) errs.push(required(path, requiredMsg));
  return errs;
}

function accessModeChecks(modes: any[], path: string): Errs {
  const errs: Errs = [];
  let rwop = false;
  let other = false;
  for (const m of modes) {
    if (!ACCESS_MODES.includes(m)) errs.push(notSupported(path, str(m), ACCESS_MODES));
    if (m === 'ReadWriteOncePod') rwop = true;
    else if (ACCESS_MODES.includes(m)) other = true;
  }
  if (rwop && other) errs.push(forbidden(path, 'may not use ReadWriteOncePod with other access modes'));
  return errs;
}

function validateDataSource(ds: any, path: string): Errs {
  const errs: Errs = [];
  if (!str(ds.name)) errs.push(required(child(path, 'name')));
  if (!str(ds.kind)) errs.push(required(child(path, 'kind')));
  const g = str(ds.apiGroup);
  if (!g && ds.kind !== 'PersistentVolumeClaim') errs.push(invalid(path, str(ds.kind), "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  if (g) for (const m of isDNS1123Subdomain(g)) errs.push(invalid(child(path, 'apiGroup'), g, m));
  return errs;
}

export function validatePersistentVolumeClaimSpec(spec: any, path: string, allowInvalidSelectorValues = false): Errs {
  const errs: Errs = [];
  const modes = arr(spec.accessModes);
  errs.push(...validateAccessModes(modes, child(path, 'accessModes'), 'at least 1 access mode is required'));
  if (spec.selector != null) errs.push(...validateLabelSelector(spec.selector, child(path, 'selector'), allowInvalidSelectorValues));
  errs.push(...accessModeChecks(modes, child(path, 'accessModes')));
  const storage = obj(obj(spec.resources).requests).storage;
  const sp = key(child(path, 'resources'), 'storage');
  if (storage === undefined) errs.push(required(sp));
  else if (qsign(storage) <= 0) errs.push(invalid(sp, qrepr(storage).repr, 'must be greater than zero'));
  if (isSet(spec.storageClassName) && str(spec.storageClassName))
    for (const m of isDNS1123Subdomain(str(spec.storageClassName))) errs.push(invalid(child(path, 'storageClassName'), str(spec.storageClassName), m));
  if (isSet(spec.volumeMode) && !VOLUME_MODES.includes(spec.volumeMode)) errs.push(notSupported(child(path, 'volumeMode'), str(spec.volumeMode), VOLUME_MODES));
  if (spec.dataSource != null) errs.push(...validateDataSource(spec.dataSource, child(path, 'dataSource')));
  if (spec.dataSourceRef != null) {
    const r = spec.dataSourceRef;
    errs.push(...validateDataSource(r, child(path, 'dataSourceRef')));
    if (str(r.namespace)) for (const m of isDNS1123Label(str(r.namespace))) errs.push(invalid(child(path, 'dataSourceRef', 'namespace'), str(r.namespace), m));
  }
  if (spec.dataSourceRef != null && str(spec.dataSourceRef.namespace)) {
    if (spec.dataSource != null) errs.push(invalid(path, child(path, 'dataSource'), 'may not be specified when dataSourceRef.namespace is specified'));
  } else if (spec.dataSource != null && spec.dataSourceRef != null) {
    const a = spec.dataSource;
    const b = spec.dataSourceRef;
    if ((a.apiGroup ?? null) !== (b.apiGroup ?? null) || a.kind !== b.kind || a.name !== b.name) errs.push(invalid(path, child(path, 'dataSource'), 'must match dataSourceRef'));
  }
  if (isSet(spec.volumeAttributesClassName) && str(spec.volumeAttributesClassName))
    for (const m of isDNS1123Subdomain(str(spec.volumeAttributesClassName))) errs.push(invalid(child(path, 'volumeAttributesClassName'), str(spec.volumeAttributesClassName), m));
  return errs;
}

// ---- persistent volumes ----

const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];

function validatePVSecretReference(ref: any, path: string): Errs {
  const errs: Errs = [];
  if (!str(ref.name)) errs.push(required(child(path, 'name')));
  else errs.push(...validateDNS1123Subdomain(str(ref.name), child(path, 'name')));
  if (!str(ref.namespace)) errs.push(required(child(path, 'namespace')));
  else errs.push(...validateDNS1123Label(str(ref.namespace), child(path, 'namespace')));
  return errs;
}

function csiPV(s: any, p: string): Errs {
  const errs = validateCSIDriverName(str(s.driver), child(p, 'driver'));
  if (!str(s.volumeHandle)) errs.push(required(child(p, 'volumeHandle')));
  for (const r of ['controllerPublishSecretRef', 'controllerExpandSecretRef', 'nodePublishSecretRef', 'nodeExpandSecretRef'])
    if (s[r] != null) errs.push(...validatePVSecretReference(s[r], child(p, r)));
  return errs;
}

function iscsiPV(s: any, p: string, pvName: string): Errs {
  const errs: Errs = [];
  if (!str(s.targetPortal)) errs.push(required(child(p, 'targetPortal')));
  if (isSet(s.initiatorName) && (pvName + ':' + str(s.targetPortal)).length > 64)
    errs.push(invalid(child(p, 'targetportal'), str(s.targetPortal), 'Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.'));
  if (!str(s.iqn)) errs.push(required(child(p, 'iqn')));
  else errs.push(...iqnErrs(str(s.iqn), child(p, 'iqn'), 'must be valid format'));
  const lun = typeof s.lun === 'number' ? s.lun : 0;
  if (lun < 0 || lun > 255) errs.push(invalid(child(p, 'lun'), lun, inclusiveRangeError(0, 255)));
  if ((s.chapAuthDiscovery || s.chapAuthSession) && s.secretRef == null) errs.push(required(child(p, 'secretRef')));
  if (s.secretRef != null && !str(s.secretRef.name)) errs.push(required(child(p, 'secretRef', 'name')));
  if (isSet(s.initiatorName)) {
    const ini = str(s.initiatorName);
    if (!ini.startsWith('iqn') && !ini.startsWith('eui') && !ini.startsWith('naa')) errs.push(invalid(child(p, 'initiatorname'), ini, 'must be valid format'));
    if (ini.startsWith('iqn') && !reIqn.test(ini)) errs.push(invalid(child(p, 'initiatorname'), ini, 'must be valid format'));
    else if (ini.startsWith('eui') && !reEui.test(ini)) errs.push(invalid(child(p, 'initiatorname'), ini, 'must be valid format'));
    else if (ini.startsWith('naa') && !reNaa.test(ini)) errs.push(invalid(child(p, 'initiatorname'), ini, 'must be valid format'));
  }
  return errs;
}

function glusterfsPV(s: any, p: string): Errs {
  const errs = glusterfs(s, p);
  if (isSet(s.endpointsNamespace)) {
    const ns = str(s.endpointsNamespace);
    if (!ns) errs.push(invalid(child(p, 'endpointsNamespace'), ns, 'if the endpointnamespace is set, it must be a valid namespace name'));
    else for (const m of isDNS1123Label(ns)) errs.push(invalid(child(p, 'endpointsNamespace'), ns, m));
  }
  return errs;
}

export function validatePersistentVolumeSpec(spec: any, pvName: string, path: string): Errs {
  const errs: Errs = [];
  const modes = arr(spec.accessModes);
  if (modes.length === 0) errs.push(required(child(path, 'accessModes')));
  errs.push(...accessModeChecks(modes, child(path, 'accessModes')));
  const cap = obj(spec.capacity);
  const capPath = child(path, 'capacity');
  const capKeys = Object.keys(cap);
  if (capKeys.length === 0) errs.push(required(capPath));
  if (!('storage' in cap) || capKeys.length > 1) errs.push(notSupported(capPath, spec.capacity == null ? new GoRepr('core.ResourceList(nil)') : goResourceList(cap), ['storage']));
  for (const k of capKeys) {
    const v = cap[k];
    const x = q(v);
    if (x && quantityValue(x) < 0n) errs.push(invalid(key(capPath, k), Number(quantityValue(x)), 'must be a valid resource quantity'));
    if (qsign(v) <= 0) errs.push(invalid(key(capPath, k), qrepr(v).repr, 'must be greater than zero'));
  }
  if (str(spec.persistentVolumeReclaimPolicy) && !RECLAIM_POLICIES.includes(spec.persistentVolumeReclaimPolicy))
    errs.push(notSupported(child(path, 'persistentVolumeReclaimPolicy'), str(spec.persistentVolumeReclaimPolicy), RECLAIM_POLICIES));
  let nodeAffinitySpecified = false;
  if (spec.nodeAffinity != null) {
    nodeAffinitySpecified = true;
    if (spec.nodeAffinity.required != null) errs.push(...validateNodeSelector(spec.nodeAffinity.required, false, child(path, 'nodeAffinity', 'required')));
    else errs.push(required(child(path, 'nodeAffinity', 'required'), 'must specify required node constraints'));
  }
  let n = 0;
  const one = (name: string, forbid: string, fn: () => Errs, alwaysCount = false) => {
    if (spec[name] == null) return;
    if (n > 0 && !alwaysCount) errs.push(forbidden(child(path, forbid), MORE_THAN_ONE));
    else {
      n++;
      errs.push(...fn());
    }
  };
  one('hostPath', 'hostPath', () => hostPath(spec.hostPath, child(path, 'hostPath')));
  one('gcePersistentDisk', 'gcePersistentDisk', () => gcePD(spec.gcePersistentDisk, child(path, 'persistentDisk')));
  one('awsElasticBlockStore', 'awsElasticBlockStore', () => awsEBS(spec.awsElasticBlockStore, child(path, 'awsElasticBlockStore')));
  one('glusterfs', 'glusterfs', () => glusterfsPV(spec.glusterfs, child(path, 'glusterfs')));
  one('flocker', 'flocker', () => flocker(spec.flocker, child(path, 'flocker')));
  one('nfs', 'nfs', () => nfs(spec.nfs, child(path, 'nfs')));
  one('rbd', 'rbd', () => rbd(spec.rbd, child(path, 'rbd')));
  one('quobyte', 'quobyte', () => quobyte(spec.quobyte, child(path, 'quobyte')));
  one('cephfs', 'cephFS', () => cephfs(spec.cephfs, child(path, 'cephfs')));
  one('iscsi', 'iscsi', () => iscsiPV(spec.iscsi, child(path, 'iscsi'), pvName));
  one('cinder', 'cinder', () => cinder(spec.cinder, child(path, 'cinder'), true));
  one('fc', 'fc', () => fc(spec.fc, child(path, 'fc')));
  one('flexVolume', 'flexVolume', () => flex(spec.flexVolume, child(path, 'flexVolume')), true);
  one('azureFile', 'azureFile', () => azureFile(spec.azureFile, child(path, 'azureFile'), true));
  one('vsphereVolume', 'vsphereVolume', () => simpleRequired('volumePath')(spec.vsphereVolume, child(path, 'vsphereVolume')));
  one('photonPersistentDisk', 'photonPersistentDisk', () => simpleRequired('pdID')(spec.photonPersistentDisk, child(path, 'photonPersistentDisk')));
  one('portworxVolume', 'portworxVolume', () => simpleRequired('volumeID')(spec.portworxVolume, child(path, 'portworxVolume')));
  one('azureDisk', 'azureDisk', () => azureDisk(spec.azureDisk, child(path, 'azureDisk')));
  one('scaleIO', 'scaleIO', () => simpleRequired('gateway', 'system', 'volumeName')(spec.scaleIO, child(path, 'scaleIO')));
  one('local', 'local', () => {
    const e: Errs = [];
    const lp = child(path, 'local');
    if (!str(spec.local.path)) e.push(required(child(lp, 'path')));
    else e.push(...validatePathNoBacksteps(str(spec.local.path), child(lp, 'path')));
    if (!nodeAffinitySpecified) e.push(required(child(path, 'nodeAffinity'), 'Local volume requires node affinity'));
    return e;
  });
  one('storageos', 'storageos', () => storageos(spec.storageos, child(path, 'storageos'), true));
  one('csi', 'csi', () => csiPV(spec.csi, child(path, 'csi')));
  if (n === 0) errs.push(required(path, 'must specify a volume type'));
  if (spec.hostPath != null && cleanPath(str(spec.hostPath.path)) === '/' && spec.persistentVolumeReclaimPolicy === 'Recycle')
    errs.push(forbidden(child(path, 'persistentVolumeReclaimPolicy'), "may not be 'recycle' for a hostPath mount of '/'"));
  if (str(spec.storageClassName))
    for (const m of isDNS1123Subdomain(str(spec.storageClassName))) errs.push(invalid(child(path, 'storageClassName'), str(spec.storageClassName), m));
  if (isSet(spec.volumeMode) && !VOLUME_MODES.includes(spec.volumeMode)) errs.push(notSupported(child(path, 'volumeMode'), str(spec.volumeMode), VOLUME_MODES));
  if (isSet(spec.volumeAttributesClassName)) {
    const v = str(spec.volumeAttributesClassName);
    if (!v) errs.push(required(child(path, 'volumeAttributesClassName'), 'an empty string is disallowed'));
    else for (const m of isDNS1123Subdomain(v)) errs.push(invalid(child(path, 'volumeAttributesClassName'), v, m));
    if (spec.csi == null) errs.push(required(child(path, 'csi'), 'has to be specified when using volumeAttributesClassName'));
  }
  return errs;
}

function cleanPath(p: string): string {
  const parts = p.split('/').filter((x) => x && x !== '.');
  return p.startsWith('/') ? '/' + parts.join('/') : parts.join('/');
}

export { qcmp, validateQualifiedName, isQualifiedName, validateName };
