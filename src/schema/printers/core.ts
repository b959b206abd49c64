// Printers for the core (v1) kinds other than Pod, and for events.k8s.io Events, which are the
// same stored objects under other field names.
import {
  age,
  arr,
  containerCells,
  formatLabels,
  goSorted,
  int,
  joinHostPort,
  nameOf,
  obj,
  since,
  str,
} from './format.js';
import { canonicalQuantity } from './quantity.js';
import { AGE_COLUMN, CONTAINERS_COLUMN, IMAGES_COLUMN, NAME_COLUMN, col, type Printer } from './types.js';

// ---------------------------------------------------------------------------------------------
// Node

function nodeStatus(node: any): string {
  // Only the Ready condition is reported; with several, the last one counts.
  let ready: any;
  for (const c of arr(node?.status?.conditions)) if (c?.type === 'Ready') ready = c;
  const parts = [ready === undefined ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady'];
  if (node?.spec?.unschedulable === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

const ROLE_PREFIX = 'node-role.kubernetes.io/';

/** Roles from node-role.kubernetes.io/<role> label keys and the kubernetes.io/role label value. */
function nodeRoles(node: any): string {
  const roles = new Set<string>();
  const labels = obj(node?.metadata?.labels);
  for (const [k, v] of Object.entries(labels)) {
    if (k.startsWith(ROLE_PREFIX)) {
      const role = k.slice(ROLE_PREFIX.length);
      if (role !== '') roles.add(role);
    } else if (k === 'kubernetes.io/role' && str(v) !== '') {
      roles.add(str(v));
    }
  }
  return roles.size === 0 ? '<none>' : goSorted(roles).join(',');
}

function nodeAddress(node: any, type: string): string {
  const a = arr(node?.status?.addresses).find((x) => x?.type === type);
  return a === undefined ? '<none>' : str(a.address);
}

export const nodePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Status', 'string', "Whether the node is Ready, and whether scheduling onto it is disabled."),
    col('Roles', 'string', 'The roles named by the node-role.kubernetes.io/<role> labels of the node.'),
    AGE_COLUMN,
    col('Version', 'string', 'The kubelet version the node reports.'),
    col('Internal-IP', 'string', 'The first InternalIP address of the node.', 1),
    col('External-IP', 'string', 'The first ExternalIP address of the node.', 1),
    col('OS-Image', 'string', 'The operating system image the node reports.', 1),
    col('Kernel-Version', 'string', 'The kernel version the node reports.', 1),
    col('Container-Runtime', 'string', 'The container runtime and its version, as the node reports them.', 1),
  ],
  cells(node: any, now: number): unknown[] {
    const info = obj(node?.status?.nodeInfo);
    const orUnknown = (v: unknown) => str(v) || '<unknown>';
    return [
      nameOf(node),
      nodeStatus(node),
      nodeRoles(node),
      age(node, now),
      str(info.kubeletVersion),
      nodeAddress(node, 'InternalIP'),
      nodeAddress(node, 'ExternalIP'),
      orUnknown(info.osImage),
      orUnknown(info.kernelVersion),
      orUnknown(info.containerRuntimeVersion),
    ];
  },
};

// ---------------------------------------------------------------------------------------------
// Service

/** The distinct load-balancer IPs (or hostnames, for entries without an IP), sorted. */
export function loadBalancerAddresses(status: any): string {
  const set = new Set<string>();
  for (const ing of arr(status?.ingress)) {
    if (str(ing?.ip) !== '') set.add(str(ing.ip));
    else if (str(ing?.hostname) !== '') set.add(str(ing.hostname));
  }
  // The server always renders the wide form, so the list is never clipped.
  return goSorted(set).join(',');
}

function serviceExternalIP(svc: any): string {
  const spec = obj(svc?.spec);
  const externalIPs = arr(spec.externalIPs).map(str);
  switch (spec.type ?? 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = loadBalancerAddresses(svc?.status?.loadBalancer);
      if (externalIPs.length > 0) return [...(lb !== '' ? lb.split(',') : []), ...externalIPs].join(',');
      return lb !== '' ? lb : '<pending>';
    }
    case 'ExternalName':
      return str(spec.externalName);
    default:
      return '<unknown>';
  }
}

function servicePorts(ports: unknown): string {
  const list = arr(ports).map((p) => {
    const protocol = str(p?.protocol) || 'TCP';
    const nodePort = int(p?.nodePort);
    return nodePort > 0 ? `${int(p?.port)}:${nodePort}/${protocol}` : `${int(p?.port)}/${protocol}`;
  });
  return list.length === 0 ? '<none>' : list.join(',');
}

export const servicePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Type', 'string', 'How the service is exposed: ClusterIP, NodePort, LoadBalancer or ExternalName.'),
    col('Cluster-IP', 'string', 'The virtual IP address of the service inside the cluster.'),
    col('External-IP', 'string', 'Addresses the service is reachable at from outside the cluster.'),
    col('Port(s)', 'string', 'The ports the service exposes, with node ports and protocols.'),
    AGE_COLUMN,
    col('Selector', 'string', 'The pod labels that select the endpoints of the service.', 1),
  ],
  cells(svc: any, now: number): unknown[] {
    const spec = obj(svc?.spec);
    const clusterIP = str(spec.clusterIP) || str(arr(spec.clusterIPs)[0]) || '<none>';
    return [
      nameOf(svc),
      str(spec.type ?? 'ClusterIP'),
      clusterIP,
      serviceExternalIP(svc),
      servicePorts(spec.ports),
      age(svc, now),
      formatLabels(spec.selector),
    ];
  },
};

// ---------------------------------------------------------------------------------------------
// Endpoints

/** Up to three address:port pairs, then "+ N more...". "<none>" without subsets. */
function formatEndpoints(ep: any): string {
  const subsets = arr(ep?.subsets);
  if (subsets.length === 0) return '<none>';
  const list: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  for (const ss of subsets) {
    const addresses = arr(ss?.addresses);
    const ports = arr(ss?.ports);
    if (ports.length === 0) {
      // A headless service may have no ports: list bare IPs.
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(str(a?.ip));
      }
      continue;
    }
    for (const port of ports) {
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(joinHostPort(str(a?.ip), int(port?.port)));
      }
    }
  }
  const ret = list.join(',');
  return more ? `${ret} + ${count - max} more...` : ret;
}

export const endpointsPrinter: Printer = {
  columns: [NAME_COLUMN, col('Endpoints', 'string', 'The ready addresses and ports behind the service (at most three shown).'), AGE_COLUMN],
  cells(ep: any, now: number): unknown[] {
    return [nameOf(ep), formatEndpoints(ep), age(ep, now)];
  },
};

// ---------------------------------------------------------------------------------------------
// Event (core/v1 and events.k8s.io/v1)

/** The fields the event printer reads, from either API group's representation. */
interface EventFacts {
  name: string;
  type: string;
  reason: string;
  message: string;
  involved: any;
  source: any;
  reportingController: string;
  reportingInstance: string;
  firstTimestamp: unknown;
  lastTimestamp: unknown;
  eventTime: unknown;
  count: number;
  series: any;
}

function coreEventFacts(ev: any): EventFacts {
  return {
    name: nameOf(ev),
    type: str(ev?.type),
    reason: str(ev?.reason),
    message: str(ev?.message),
    involved: obj(ev?.involvedObject),
    source: obj(ev?.source),
    reportingController: str(ev?.reportingComponent),
    reportingInstance: str(ev?.reportingInstance),
    firstTimestamp: ev?.firstTimestamp,
    lastTimestamp: ev?.lastTimestamp,
    eventTime: ev?.eventTime,
    count: int(ev?.count),
    series: ev?.series,
  };
}

function eventsV1Facts(ev: any): EventFacts {
  return {
    name: nameOf(ev),
    type: str(ev?.type),
    reason: str(ev?.reason),
    message: str(ev?.note),
    involved: obj(ev?.regarding),
    source: obj(ev?.deprecatedSource),
    reportingController: str(ev?.reportingController),
    reportingInstance: str(ev?.reportingInstance),
    firstTimestamp: ev?.deprecatedFirstTimestamp,
    lastTimestamp: ev?.deprecatedLastTimestamp,
    eventTime: ev?.eventTime,
    count: int(ev?.deprecatedCount),
    series: ev?.series,
  };
}

function eventSource(f: EventFacts): string {
  const component = str(f.source.component) || f.reportingController;
  const instance = str(f.source.host) || f.reportingInstance;
  return instance === '' ? component : `${component}, ${instance}`;
}

function eventCells(f: EventFacts, now: number): unknown[] {
  let first = since(f.firstTimestamp, now);
  if (first === '<unknown>') first = since(f.eventTime, now);
  let last = since(f.lastTimestamp, now);
  if (last === '<unknown>') last = first;
  let count = f.count;
  if (f.series !== undefined && f.series !== null) {
    last = since(f.series.lastObservedTime, now);
    count = int(f.series.count);
  } else if (count === 0) {
    count = 1; // a singleton event of the new API carries no count
  }
  const kind = str(f.involved.kind).toLowerCase();
  const target = str(f.involved.name) !== '' ? `${kind}/${str(f.involved.name)}` : kind;
  return [last, f.type, f.reason, target, str(f.involved.fieldPath), eventSource(f), f.message.trim(), first, count, f.name];
}

const EVENT_COLUMNS = [
  col('Last Seen', 'string', 'How long ago the event was last observed.'),
  col('Type', 'string', 'The kind of event: Normal or Warning.'),
  col('Reason', 'string', 'A short machine-readable reason for the event.'),
  col('Object', 'string', 'The object the event is about, as kind/name.'),
  col('Subobject', 'string', 'The part of the object the event is about, such as a container.', 1),
  col('Source', 'string', 'The component (and host) that reported the event.', 1),
  col('Message', 'string', 'A human-readable description of the event.'),
  col('First Seen', 'string', 'How long ago the event was first observed.', 1),
  col('Count', 'string', 'How many times the event has occurred.', 1),
  col('Name', 'string', "The event object's own name.", 1, 'name'),
];

export const eventPrinter: Printer = {
  columns: EVENT_COLUMNS,
  cells: (ev: any, now: number) => eventCells(coreEventFacts(ev), now),
};

export const eventsV1EventPrinter: Printer = {
  columns: EVENT_COLUMNS,
  cells: (ev: any, now: number) => eventCells(eventsV1Facts(ev), now),
};

// ---------------------------------------------------------------------------------------------
// Namespace, ConfigMap, Secret, ServiceAccount

export const namespacePrinter: Printer = {
  columns: [NAME_COLUMN, col('Status', 'string', 'The lifecycle phase of the namespace: Active or Terminating.'), AGE_COLUMN],
  cells: (ns: any, now: number) => [nameOf(ns), str(ns?.status?.phase), age(ns, now)],
};

export const configMapPrinter: Printer = {
  columns: [NAME_COLUMN, col('Data', 'string', 'The number of keys, text and binary together.'), AGE_COLUMN],
  cells: (cm: any, now: number) => [
    nameOf(cm),
    Object.keys(obj(cm?.data)).length + Object.keys(obj(cm?.binaryData)).length,
    age(cm, now),
  ],
};

export const secretPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Type', 'string', 'The type of secret, which says what keys it holds.'),
    col('Data', 'string', 'The number of keys in the secret.'),
    AGE_COLUMN,
  ],
  cells(secret: any, now: number): unknown[] {
    // stringData is write-only and merged into data; count the union in case it is still present.
    const keys = new Set([...Object.keys(obj(secret?.data)), ...Object.keys(obj(secret?.stringData))]);
    return [nameOf(secret), str(secret?.type), keys.size, age(secret, now)];
  },
};

export const serviceAccountPrinter: Printer = {
  columns: [NAME_COLUMN, col('Secrets', 'string', 'The number of secrets listed on the service account.'), AGE_COLUMN],
  cells: (sa: any, now: number) => [nameOf(sa), arr(sa?.secrets).length, age(sa, now)],
};

// ---------------------------------------------------------------------------------------------
// PersistentVolume, PersistentVolumeClaim

const BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';

/** RWO, ROX, RWX, RWOP in that order, each at most once. */
export function accessModes(modes: unknown): string {
  const set = new Set(arr(modes).map(str));
  const out: string[] = [];
  if (set.has('ReadWriteOnce')) out.push('RWO');
  if (set.has('ReadOnlyMany')) out.push('ROX');
  if (set.has('ReadWriteMany')) out.push('RWX');
  if (set.has('ReadWriteOncePod')) out.push('RWOP');
  return out.join(',');
}

function storageClassOf(o: any, specClass: unknown): string {
  const annotations = obj(o?.metadata?.annotations);
  if (Object.prototype.hasOwnProperty.call(annotations, BETA_STORAGE_CLASS)) return str(annotations[BETA_STORAGE_CLASS]);
  return str(specClass);
}

export const persistentVolumePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Capacity', 'string', 'The storage capacity of the volume.'),
    col('Access Modes', 'string', 'How the volume may be mounted: RWO, ROX, RWX, RWOP.'),
    col('Reclaim Policy', 'string', 'What happens to the volume when its claim is released.'),
    col('Status', 'string', 'The phase of the volume: Available, Bound, Released, Failed.'),
    col('Claim', 'string', 'The claim bound to the volume, as namespace/name.'),
    col('StorageClass', 'string', 'The storage class the volume belongs to.'),
    col('VolumeAttributesClass', 'string', 'The volume attributes class the volume uses.'),
    col('Reason', 'string', 'Why the volume is in its current phase, if the system said.'),
    AGE_COLUMN,
    col('VolumeMode', 'string', 'Whether the volume is a filesystem or a raw block device.', 1),
  ],
  cells(pv: any, now: number): unknown[] {
    const spec = obj(pv?.spec);
    const claim = spec.claimRef ? `${str(spec.claimRef.namespace)}/${str(spec.claimRef.name)}` : '';
    const phase = pv?.metadata?.deletionTimestamp ? 'Terminating' : str(pv?.status?.phase);
    return [
      nameOf(pv),
      canonicalQuantity(obj(spec.capacity).storage),
      accessModes(spec.accessModes),
      str(spec.persistentVolumeReclaimPolicy),
      phase,
      claim,
      storageClassOf(pv, spec.storageClassName),
      spec.volumeAttributesClassName != null ? str(spec.volumeAttributesClassName) : '<unset>',
      str(pv?.status?.reason),
      age(pv, now),
      spec.volumeMode != null ? str(spec.volumeMode) : '<unset>',
    ];
  },
};

export const persistentVolumeClaimPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Status', 'string', 'The phase of the claim: Pending, Bound or Lost.'),
    col('Volume', 'string', 'The volume bound to the claim.'),
    col('Capacity', 'string', 'The capacity of the bound volume.'),
    col('Access Modes', 'string', 'The access modes of the bound volume.'),
    col('StorageClass', 'string', 'The storage class the claim asks for.'),
    col('VolumeAttributesClass', 'string', 'The volume attributes class the claim asks for.'),
    AGE_COLUMN,
    col('VolumeMode', 'string', 'Whether the claim wants a filesystem or a raw block device.', 1),
  ],
  cells(pvc: any, now: number): unknown[] {
    const spec = obj(pvc?.spec);
    const status = obj(pvc?.status);
    const phase = pvc?.metadata?.deletionTimestamp ? 'Terminating' : str(status.phase);
    const volumeName = str(spec.volumeName);
    const bound = volumeName !== '';
    return [
      nameOf(pvc),
      phase,
      volumeName,
      bound ? canonicalQuantity(obj(status.capacity).storage) : '',
      bound ? accessModes(status.accessModes) : '',
      storageClassOf(pvc, spec.storageClassName),
      spec.volumeAttributesClassName != null ? str(spec.volumeAttributesClassName) : '<unset>',
      age(pvc, now),
      spec.volumeMode != null ? str(spec.volumeMode) : '<unset>',
    ];
  },
};

// ---------------------------------------------------------------------------------------------
// ReplicationController, PodTemplate, ResourceQuota

export const replicationControllerPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Desired', 'integer', 'The number of pods the controller should run.'),
    col('Current', 'integer', 'The number of pods the controller runs now.'),
    col('Ready', 'integer', 'The number of its pods that are ready.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    col('Selector', 'string', 'The labels that select the pods of the controller.', 1),
  ],
  cells(rc: any, now: number): unknown[] {
    const spec = obj(rc?.spec);
    const [names, images] = containerCells(spec.template?.spec?.containers);
    return [
      nameOf(rc),
      int(spec.replicas, 1),
      int(rc?.status?.replicas),
      int(rc?.status?.readyReplicas),
      age(rc, now),
      names,
      images,
      formatLabels(spec.selector),
    ];
  },
};

export const podTemplatePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Containers', 'string', 'The names of the containers in the template.'),
    col('Images', 'string', 'The images the template runs, one per container.'),
    col('Pod Labels', 'string', 'The labels pods made from the template carry.'),
  ],
  cells(pt: any): unknown[] {
    const [names, images] = containerCells(pt?.template?.spec?.containers);
    return [nameOf(pt), names, images, formatLabels(pt?.template?.metadata?.labels)];
  },
};

export const resourceQuotaPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Request', 'string', 'Usage against the hard limit of each quota resource other than limits.*, as used/hard.'),
    col('Limit', 'string', 'Usage against the hard limit of each limits.* quota resource, as used/hard.'),
    AGE_COLUMN,
  ],
  cells(rq: any, now: number): unknown[] {
    const hard = obj(rq?.status?.hard);
    const used = obj(rq?.status?.used);
    const request: string[] = [];
    const limit: string[] = [];
    for (const resource of goSorted(Object.keys(hard))) {
      const pieces = resource.split('.');
      const target = pieces.length > 1 && pieces[0] === 'limits' ? limit : request;
      target.push(`${resource}: ${canonicalQuantity(used[resource])}/${canonicalQuantity(hard[resource])}`);
    }
    return [nameOf(rq), request.join(', '), limit.join(', '), age(rq, now)];
  },
};
