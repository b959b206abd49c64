// The smaller pod and object plugins: Priority, DefaultTolerationSeconds, AlwaysPullImages,
// LimitPodHardAntiAffinityTopology, ExtendedResourceToleration, RuntimeClass,
// TaintNodesByCondition, DenyServiceExternalIPs, the storage and ingress class defaults,
// StorageObjectInUseProtection and PersistentVolumeClaimResize.
import { stringifyJSON } from '../../codec/int64.js';
import {
  addDefaultTolerations,
  addStorageProtectionFinalizer,
  admitPodPriority,
  applyDefaultIngressClass,
  applyDefaultStorageClass,
  type PriorityClassInfo,
} from '../../schema/defaults/admission.js';
import { cmpQuantity, parseQuantity } from '../../schema/validation/quantity.js';
import type { AdmissionAttributes, AdmissionPlugin, ClusterReader } from './types.js';
import { asArray, forbidden, isObject, resourceList } from './util.js';

const isPod = (a: AdmissionAttributes) => a.resource.group === '' && a.resource.resource === 'pods' && a.subresource === '' && isObject(a.object);

// ---- Priority ----

function classInfo(pc: any): PriorityClassInfo {
  return { name: pc.metadata?.name ?? '', value: Number(pc.value ?? 0), globalDefault: pc.globalDefault === true, preemptionPolicy: pc.preemptionPolicy };
}

export function priorityPlugin(reader: ClusterReader): AdmissionPlugin {
  const listClasses = () => reader.list('scheduling.k8s.io', 'priorityclasses', '').map(classInfo);
  return {
    name: 'Priority',
    mutate(a) {
      if (!isPod(a) || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
      const msg = admitPodPriority(a.object, {
        operation: a.operation,
        oldPod: a.oldObject,
        getClass: (name) => {
          const pc = reader.get('scheduling.k8s.io', 'priorityclasses', '', name);
          return pc ? classInfo(pc) : undefined;
        },
        listClasses,
      });
      if (msg) throw forbidden(a, msg);
    },
    validate(a) {
      if (a.resource.group !== 'scheduling.k8s.io' || a.resource.resource !== 'priorityclasses' || a.subresource !== '') return;
      if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
      const pc = a.object;
      if (pc?.globalDefault !== true) return;
      let def: PriorityClassInfo | undefined;
      for (const c of listClasses()) if (c.globalDefault && (!def || c.value < def.value)) def = c;
      if (!def) return;
      if (a.operation === 'CREATE' || def.name !== pc.metadata?.name) {
        throw forbidden(a, `PriorityClass ${def.name} is already marked as default. Only one default can exist`);
      }
    },
  };
}

// ---- DefaultTolerationSeconds ----

export function defaultTolerationSeconds(notReadySeconds = 300, unreachableSeconds = 300): AdmissionPlugin {
  return {
    name: 'DefaultTolerationSeconds',
    mutate(a) {
      if (!isPod(a) || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
      addDefaultTolerations(a.object, notReadySeconds, unreachableSeconds);
    },
  };
}

// ---- AlwaysPullImages ----

function containerLists(pod: any): [string, any[]][] {
  const spec = pod?.spec ?? {};
  return [
    ['initContainers', asArray(spec.initContainers)],
    ['containers', asArray(spec.containers)],
    ['ephemeralContainers', asArray(spec.ephemeralContainers)],
  ];
}

export function alwaysPullImages(): AdmissionPlugin {
  // on update only containers whose image is new are forced (Kubernetes' isUpdateWithNoNewImages)
  const oldImages = (a: AdmissionAttributes) => {
    const s = new Set<string>();
    if (a.operation === 'UPDATE') for (const [, list] of containerLists(a.oldObject)) for (const c of list) if (c?.image) s.add(c.image);
    return s;
  };
  const applies = (a: AdmissionAttributes) =>
    a.resource.group === '' && a.resource.resource === 'pods' && (a.subresource === '' || a.subresource === 'ephemeralcontainers') && isObject(a.object) && (a.operation === 'CREATE' || a.operation === 'UPDATE');
  return {
    name: 'AlwaysPullImages',
    mutate(a) {
      if (!applies(a)) return;
      const old = oldImages(a);
      for (const [, list] of containerLists(a.object)) {
        for (const c of list) if (isObject(c) && !old.has(c.image)) c.imagePullPolicy = 'Always';
      }
    },
    validate(a) {
      if (!applies(a)) return;
      const old = oldImages(a);
      const errs: string[] = [];
      for (const [field, list] of containerLists(a.object)) {
        list.forEach((c, i) => {
          if (!isObject(c) || old.has(c.image)) return;
          if (c.imagePullPolicy !== 'Always') errs.push(`spec.${field}[${i}].imagePullPolicy: Unsupported value: ${JSON.stringify(c.imagePullPolicy ?? '')}: supported values: "Always"`);
        });
      }
      if (errs.length) throw forbidden(a, errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);
    },
  };
}

// ---- LimitPodHardAntiAffinityTopology ----

export function limitPodHardAntiAffinityTopology(): AdmissionPlugin {
  return {
    name: 'LimitPodHardAntiAffinityTopology',
    validate(a) {
      if (!isPod(a) || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
      const terms = asArray(a.object.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
      for (const t of terms) {
        if (t?.topologyKey !== 'kubernetes.io/hostname') {
          throw forbidden(a, `affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${t?.topologyKey ?? ''} but only key kubernetes.io/hostname is allowed`);
        }
      }
    },
  };
}

// ---- ExtendedResourceToleration ----

/** helper.IsExtendedResourceName: a qualified name outside kubernetes.io that is not requests.* */
function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/') || name.startsWith('requests.')) return false;
  const domain = name.slice(0, name.indexOf('/'));
  return domain !== 'kubernetes.io' && !domain.endsWith('.kubernetes.io');
}

export function extendedResourceToleration(): AdmissionPlugin {
  return {
    name: 'ExtendedResourceToleration',
    mutate(a) {
      if (!isPod(a) || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
      const names = new Set<string>();
      for (const [, list] of containerLists(a.object).slice(0, 2)) {
        for (const c of list) {
          for (const k of Object.keys(isObject(c?.resources?.requests) ? c.resources.requests : {})) if (isExtendedResourceName(k)) names.add(k);
          for (const k of Object.keys(isObject(c?.resources?.limits) ? c.resources.limits : {})) if (isExtendedResourceName(k)) names.add(k);
        }
      }
      if (names.size === 0) return;
      const spec = a.object.spec;
      const tolerations: any[] = asArray(spec.tolerations);
      for (const key of [...names].sort()) {
        const t = { key, operator: 'Exists', effect: 'NoSchedule' };
        if (!tolerations.some((x) => x?.key === key && x?.operator === 'Exists' && x?.effect === 'NoSchedule')) tolerations.push(t);
      }
      spec.tolerations = tolerations;
    },
  };
}

// ---- RuntimeClass ----

export function runtimeClassPlugin(reader: ClusterReader): AdmissionPlugin {
  const lookup = (a: AdmissionAttributes) => {
    const name = a.object?.spec?.runtimeClassName;
    if (!name) return undefined;
    const rc = reader.get('node.k8s.io', 'runtimeclasses', '', name);
    if (!rc) throw forbidden(a, `pod rejected: RuntimeClass "${name}" not found`);
    return rc;
  };
  return {
    name: 'RuntimeClass',
    mutate(a) {
      if (!isPod(a) || a.operation !== 'CREATE') return;
      const rc = lookup(a);
      if (!rc) return;
      const spec = a.object.spec;
      const fixed = rc.overhead?.podFixed;
      if (isObject(fixed)) {
        if (isObject(spec.overhead)) {
          if (!sameResources(spec.overhead, fixed)) throw forbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
        } else spec.overhead = { ...fixed };
      }
      const scheduling = rc.scheduling;
      if (isObject(scheduling)) {
        if (isObject(scheduling.nodeSelector)) {
          const sel = isObject(spec.nodeSelector) ? { ...spec.nodeSelector } : {};
          for (const [k, v] of Object.entries(scheduling.nodeSelector)) {
            if (k in sel && sel[k] !== v) throw forbidden(a, 'pod rejected: conflict: runtimeClass.scheduling.nodeSelector[' + k + '] = ' + v + '; pod.spec.nodeSelector[' + k + '] = ' + sel[k]);
            sel[k] = v;
          }
          spec.nodeSelector = sel;
        }
        for (const t of asArray(scheduling.tolerations)) {
          const list: any[] = asArray(spec.tolerations);
          if (!list.some((x) => stringifyJSON(x) === stringifyJSON(t))) list.push(t);
          spec.tolerations = list;
        }
      }
    },
    validate(a) {
      if (!isPod(a) || a.operation !== 'CREATE') return;
      const rc = lookup(a);
      const overhead = a.object.spec?.overhead;
      if (!rc) {
        if (isObject(overhead) && Object.keys(overhead).length) throw forbidden(a, 'pod rejected: Overhead set without corresponding RuntimeClass defined Overhead');
        return;
      }
      const fixed = rc.overhead?.podFixed;
      if (!isObject(fixed)) {
        if (isObject(overhead) && Object.keys(overhead).length) throw forbidden(a, 'pod rejected: Overhead set without corresponding RuntimeClass defined Overhead');
      } else if (!isObject(overhead) || !sameResources(overhead, fixed)) {
        throw forbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
      }
    },
  };
}

function sameResources(a: unknown, b: unknown): boolean {
  const x = resourceList(a);
  const y = resourceList(b);
  if (x.size !== y.size) return false;
  for (const [k, v] of x) {
    const w = y.get(k);
    if (!w || cmpQuantity(v, w) !== 0) return false;
  }
  return true;
}

// ---- TaintNodesByCondition ----

export function taintNodesByCondition(): AdmissionPlugin {
  return {
    name: 'TaintNodesByCondition',
    mutate(a) {
      if (a.resource.group !== '' || a.resource.resource !== 'nodes' || a.subresource !== '' || a.operation !== 'CREATE' || !isObject(a.object)) return;
      const spec = isObject(a.object.spec) ? a.object.spec : (a.object.spec = {});
      const taints: any[] = asArray(spec.taints);
      if (taints.some((t) => t?.key === 'node.kubernetes.io/not-ready' && t?.effect === 'NoSchedule')) return;
      spec.taints = [...taints, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }];
    },
  };
}

// ---- DenyServiceExternalIPs ----

export function denyServiceExternalIPs(): AdmissionPlugin {
  return {
    name: 'DenyServiceExternalIPs',
    validate(a) {
      if (a.resource.group !== '' || a.resource.resource !== 'services' || a.subresource !== '' || !isObject(a.object)) return;
      if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
      const ips: string[] = asArray(a.object.spec?.externalIPs);
      if (ips.length === 0) return;
      if (a.operation === 'UPDATE') {
        const old = new Set(asArray<string>(a.oldObject?.spec?.externalIPs));
        if (ips.every((ip) => old.has(ip))) return; // nothing new: removing is always allowed
      }
      throw forbidden(a, 'spec.externalIPs: Forbidden: use of external IPs is denied by admission control');
    },
  };
}

// ---- storage and ingress ----

export function defaultStorageClass(reader: ClusterReader): AdmissionPlugin {
  return {
    name: 'DefaultStorageClass',
    mutate(a) {
      if (a.resource.group !== '' || a.resource.resource !== 'persistentvolumeclaims' || a.subresource !== '' || a.operation !== 'CREATE' || !isObject(a.object)) return;
      applyDefaultStorageClass(a.object, reader.list('storage.k8s.io', 'storageclasses', ''));
    },
  };
}

export function defaultIngressClass(reader: ClusterReader): AdmissionPlugin {
  return {
    name: 'DefaultIngressClass',
    mutate(a) {
      if (a.resource.group !== 'networking.k8s.io' || a.resource.resource !== 'ingresses' || a.subresource !== '' || a.operation !== 'CREATE' || !isObject(a.object)) return;
      applyDefaultIngressClass(a.object, reader.list('networking.k8s.io', 'ingressclasses', ''));
    },
  };
}

export function storageObjectInUseProtection(): AdmissionPlugin {
  return {
    name: 'StorageObjectInUseProtection',
    mutate(a) {
      if (a.resource.group !== '' || a.subresource !== '' || a.operation !== 'CREATE' || !isObject(a.object)) return;
      if (a.resource.resource === 'persistentvolumes') addStorageProtectionFinalizer(a.object, 'PersistentVolume');
      if (a.resource.resource === 'persistentvolumeclaims') addStorageProtectionFinalizer(a.object, 'PersistentVolumeClaim');
    },
  };
}

export function persistentVolumeClaimResize(reader: ClusterReader): AdmissionPlugin {
  return {
    name: 'PersistentVolumeClaimResize',
    validate(a) {
      if (a.resource.group !== '' || a.resource.resource !== 'persistentvolumeclaims' || a.subresource !== '' || a.operation !== 'UPDATE') return;
      const now = parseQuantity(a.object?.spec?.resources?.requests?.storage);
      const before = parseQuantity(a.oldObject?.spec?.resources?.requests?.storage);
      if (!now || !before || cmpQuantity(now, before) <= 0) return;
      if (a.oldObject?.status?.phase !== 'Bound') throw forbidden(a, 'Only bound persistent volume claims can be expanded');
      const className = a.object?.spec?.storageClassName ?? a.object?.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'];
      const sc = className ? reader.get('storage.k8s.io', 'storageclasses', '', className) : undefined;
      if (!sc || sc.allowVolumeExpansion !== true) {
        throw forbidden(a, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
      }
    },
  };
}
