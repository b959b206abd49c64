// The strategies of the built-in kinds: what is special about each one. Kinds not named here use
// the default strategy.
import { rfc3339 } from '../../machinery/time.js';
import type { KindDecl } from '../../schema/model.js';
import { defaultStrategy, type Strategy } from './strategy.js';
import { applyDefaults, dropServiceTypeDependentFields, orderServiceSpec, generateJobSelector, renameJobSelector, initServiceIPFamilies, normalizeServiceClusterIPs, setDaemonSetTemplateGeneration } from '../../schema/defaults/index.js';
import { hpaV1AnnotationError, hpaV1ToV2, hpaV2ToV1 } from '../../schema/autoscaling.js';
import { errors, field, type FieldError } from '../../machinery/errors.js';
import {
  validateValidatingAdmissionPolicy,
  validateValidatingAdmissionPolicyBinding,
  validateValidatingAdmissionPolicyBindingUpdate,
  validateValidatingAdmissionPolicyStatusUpdate,
  validateValidatingAdmissionPolicyUpdate,
} from '../admission/vap-validation.js';
import type { IPAllocator, PortAllocator } from './allocator.js';
import { apiServiceStrategy } from '../apiservices.js';
import { computePodQOS } from '../../schema/qos.js';
import { jsonEqual } from './store.js';
import { validateClusterIPsRelatedFields } from '../../schema/validation/service.js';
import { dropDisabledLeaseFields, dropDisabledPodSpecFields, dropDisabledVolumeAttributesClass } from '../../schema/defaults/gated.js';

type Tweak = (s: Strategy, kind: KindDecl) => void;

/** workload kinds keep metadata.generation and start with an empty status */
const workload: Tweak = (s) => {
  s.generation = true;
  s.prepareForCreate = (obj) => {
    obj.status = {};
  };
  s.prepareForUpdate = (obj, old) => {
    obj.status = old.status;
  };
};

const namespace: Tweak = (s) => {
  s.returnDeletedObject = true;
  s.prepareForCreate = (obj) => {
    obj.spec ??= {};
    // the kubernetes finalizer is added to whatever finalizers the namespace is created with
    const finalizers = Array.isArray(obj.spec.finalizers) ? obj.spec.finalizers : [];
    if (!finalizers.includes('kubernetes')) obj.spec.finalizers = [...finalizers, 'kubernetes'];
    obj.status = { phase: 'Active' };
    ensureNamespaceLabel(obj);
  };
  s.prepareForUpdate = (obj, old) => {
    obj.spec = old.spec; // spec.finalizers changes only through the finalize subresource
    obj.status = old.status;
    ensureNamespaceLabel(obj);
  };
  // the namespace REST's delete: the first one marks the namespace (deletionTimestamp, phase
  // Terminating; no grace period) for the namespace controller; later ones answer it unchanged
  // while spec.finalizers are pending, and remove it once they are gone
  s.namespaceStyleDelete = true;
  s.beforeDelete = (obj) => {
    const fin: string[] = obj.spec?.finalizers ?? [];
    if (!obj.metadata.deletionTimestamp) {
      obj.status = { ...(obj.status ?? {}), phase: 'Terminating' };
      return { graceful: false, markOnly: true };
    }
    return fin.length > 0 ? { graceful: false, unchanged: true } : { graceful: false };
  };
  s.readyToRemove = (obj) => (obj.spec?.finalizers ?? []).length === 0;
};

function ensureNamespaceLabel(obj: any) {
  // every namespace carries its own name as a label, so that selectors can pick namespaces by name
  // (an over-long name is then reported twice, as the name and as this label, as in Kubernetes)
  const name = obj.metadata.name;
  if (typeof name !== 'string' || name === '') return;
  obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': name };
}

/**
 * mutatePodAffinity (MatchLabelKeysInPodAffinity, on by default since Kubernetes 1.31): each pod
 * (anti-)affinity term with a labelSelector gets `key In (value)` for its matchLabelKeys and
 * `key NotIn (value)` for its mismatchLabelKeys, with the pod's own label values (keys the pod
 * lacks add nothing), so that the scheduler reads plain selectors
 */
function mergeAffinityLabelKeys(pod: any): void {
  const labels = pod?.metadata?.labels;
  const affinity = pod?.spec?.affinity;
  if (!affinity || typeof affinity !== 'object') return;
  const merge = (term: any) => {
    const sel = term?.labelSelector;
    if (!sel || typeof sel !== 'object') return;
    const add = (keys: unknown, operator: 'In' | 'NotIn') => {
      for (const key of Array.isArray(keys) ? keys : []) {
        if (!labels || typeof key !== 'string' || !Object.prototype.hasOwnProperty.call(labels, key)) continue;
        (sel.matchExpressions ??= []).push({ key, operator, values: [labels[key]] });
      }
    };
    add(term.matchLabelKeys, 'In');
    add(term.mismatchLabelKeys, 'NotIn');
  };
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = affinity[kind];
    if (!a || typeof a !== 'object') continue;
    for (const w of Array.isArray(a.preferredDuringSchedulingIgnoredDuringExecution) ? a.preferredDuringSchedulingIgnoredDuringExecution : []) merge(w?.podAffinityTerm);
    for (const t of Array.isArray(a.requiredDuringSchedulingIgnoredDuringExecution) ? a.requiredDuringSchedulingIgnoredDuringExecution : []) merge(t);
  }
}

const pod: Tweak = (s) => {
  s.returnDeletedObject = true;
  // Kubernetes 1.33 counts a Pod's generations: a change of its spec, through the resource or
  // its ephemeralcontainers and resize subresources
  s.generation = true;
  s.prepareForCreate = (obj) => {
    mergeAffinityLabelKeys(obj);
    obj.status = { phase: 'Pending', qosClass: computePodQOS(obj.spec) };
    // a pod created with scheduling gates says why it waits (applySchedulingGatedCondition; the
    // condition's times are Go's zero Time, written as null)
    if (Array.isArray(obj.spec?.schedulingGates) && obj.spec.schedulingGates.length) {
      obj.status.conditions = [{ type: 'PodScheduled', status: 'False', lastProbeTime: null, lastTransitionTime: null, reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' }];
    }
  };
  s.prepareForUpdate = (obj, old) => {
    obj.status = old.status;
  };
  s.prepareForSubresourceUpdate = (sub, obj, old) => {
    if (sub === 'ephemeralcontainers' || sub === 'resize') {
      if (!jsonEqual(obj.spec, old.spec)) obj.metadata.generation = (old.metadata.generation ?? 0) + 1;
      return;
    }
    if (sub !== 'status') return;
    // owner references are not the status writer's to change; the QoS class is set at creation
    // and backfilled when a (node agent's) status update leaves it out
    if (old.metadata.ownerReferences !== undefined) obj.metadata.ownerReferences = old.metadata.ownerReferences;
    else delete obj.metadata.ownerReferences;
    if (obj.status && (obj.status.qosClass === undefined || obj.status.qosClass === '') && old.status?.qosClass) obj.status.qosClass = old.status.qosClass;
  };
  s.beforeDelete = (obj, grace) => {
    // (CheckGracefulDelete: a pod already being deleted keeps its grace period unless a shorter
    // one is asked for, which the store handles)
    if (obj.metadata.deletionTimestamp) return { graceful: false };
    // Pods are always deleted gracefully: a pod on a node is stopped by its node agent first and
    // is only marked for deletion; an unbound or finished pod gets a grace period of 0 (marked,
    // then removed at once, so watchers see it terminating before it goes).
    const bound = typeof obj.spec?.nodeName === 'string' && obj.spec.nodeName !== '';
    const finished = obj.status?.phase === 'Succeeded' || obj.status?.phase === 'Failed';
    let g = grace ?? obj.spec?.terminationGracePeriodSeconds ?? 30;
    if (!bound || finished) g = 0;
    return { graceful: true, gracePeriodSeconds: g < 0 ? 0 : g };
  };
};

const service: Tweak = (s) => {
  s.returnDeletedObject = true;
  s.prepareForCreate = (obj) => {
    obj.status = { loadBalancer: {} };
  };
  s.prepareForUpdate = (obj, old) => {
    obj.status = old.status;
  };
};

const statusOnly: Tweak = (s) => {
  s.prepareForUpdate = (obj, old) => {
    obj.status = old.status;
  };
};

const returnsObject: Tweak = (s) => {
  s.returnDeletedObject = true;
};

/** metadata.generation counts the changes of what `part` picks of the object (not its spec) */
function generationOf(part: (obj: any) => unknown): Tweak {
  return (s) => {
    s.generation = true;
    s.generationChanged = (next, old) => !jsonEqual(part(next), part(old));
  };
}

/**
 * A CertificateSigningRequest records who asked for it: the creating user's name, uid, groups and
 * extra, whatever the body says (Kubernetes' PrepareForCreate); the server's own writes keep theirs.
 */
const csrRequestor: Tweak = (s) => {
  const create = s.prepareForCreate;
  s.prepareForCreate = (obj, user) => {
    create(obj, user);
    if (!user) return;
    obj.spec ??= {};
    const spec = obj.spec;
    delete spec.username;
    delete spec.uid;
    delete spec.groups;
    delete spec.extra;
    if (user.name) spec.username = user.name;
    if (user.uid) spec.uid = user.uid;
    if (user.groups.length) spec.groups = [...user.groups];
    if (user.extra && Object.keys(user.extra).length) spec.extra = Object.fromEntries(Object.keys(user.extra).sort().map((k) => [k, [...user.extra![k]!]]));
  };
};

/**
 * events.k8s.io/v1 Event is another view of the stored core/v1 Event: the same objects, with
 * renamed fields. Both resources serve the same stored events.
 */
const CORE_TO_EVENTS: [string, string][] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['reportingComponent', 'reportingController'],
];
const EVENTS_ORDER = [
  'kind',
  'apiVersion',
  'metadata',
  'eventTime',
  'series',
  'reportingController',
  'reportingInstance',
  'action',
  'reason',
  'regarding',
  'related',
  'note',
  'type',
  'deprecatedSource',
  'deprecatedFirstTimestamp',
  'deprecatedLastTimestamp',
  'deprecatedCount',
];
const CORE_ORDER = [
  'kind',
  'apiVersion',
  'metadata',
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'series',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
];

function renamed(obj: any, pairs: [string, string][], order: string[], apiVersion: string): any {
  const tmp: any = { ...obj, apiVersion, kind: 'Event' };
  for (const [from, to] of pairs) {
    if (from in tmp) {
      tmp[to] = tmp[from];
      delete tmp[from];
    }
  }
  const out: any = {};
  for (const k of order) if (tmp[k] !== undefined) out[k] = tmp[k];
  for (const k of Object.keys(tmp)) if (!(k in out) && tmp[k] !== undefined) out[k] = tmp[k];
  return out;
}

export function coreEventToEventsV1(core: any): any {
  const out = renamed(core, CORE_TO_EVENTS, EVENTS_ORDER, 'events.k8s.io/v1');
  // the core form's empty defaults are not part of the events.k8s.io form
  if (out.deprecatedSource && Object.keys(out.deprecatedSource).length === 0) delete out.deprecatedSource;
  if (out.regarding && Object.keys(out.regarding).length === 0) out.regarding = {};
  return out;
}

export function eventsV1ToCoreEvent(ev: any): any {
  const back = CORE_TO_EVENTS.map(([a, b]) => [b, a] as [string, string]);
  const out = renamed(ev, back, CORE_ORDER, 'v1');
  out.involvedObject ??= {};
  out.source ??= {};
  return out;
}

const eventsV1: Tweak = (s) => {
  s.storageForm = { toStorage: eventsV1ToCoreEvent, fromStorage: coreEventToEventsV1 };
};

/**
 * autoscaling/v1 HorizontalPodAutoscaler is another view of the stored autoscaling/v2 object
 * (schema/autoscaling.ts). The stored form gets v2's defaults, which Kubernetes applies when it
 * reads the object back (a behavior from the annotation gets its scaling rules filled in).
 */
const hpaV1: Tweak = (s, kind) => {
  if (kind.version !== 'v1') return;
  // an annotation that does not unmarshal: kube-apiserver cannot decode the request (400)
  const check = (obj: any) => {
    const why = hpaV1AnnotationError(obj);
    if (why !== undefined) throw errors.badRequest(why);
  };
  const create = s.prepareForCreate;
  const update = s.prepareForUpdate;
  s.prepareForCreate = (obj) => {
    check(obj);
    create(obj);
  };
  s.prepareForUpdate = (obj, old) => {
    check(obj);
    update(obj, old);
  };
  s.storageForm = {
    toStorage: (obj) => {
      const v2 = hpaV1ToV2(obj);
      applyDefaults('autoscaling', 'v2', 'HorizontalPodAutoscaler', v2);
      return v2;
    },
    fromStorage: hpaV2ToV1,
  };
};

/**
 * Fields of 1.33's alpha MutableCSINodeAllocatableCount (off by default), dropped as Kubernetes
 * drops a disabled feature's fields: a new value goes, one already stored stays.
 */
const csiDriver: Tweak = (s) => {
  s.prepareForCreate = (obj) => {
    if (obj.spec) delete obj.spec.nodeAllocatableUpdatePeriodSeconds;
  };
  s.prepareForUpdate = (obj, old) => {
    if (obj.spec && old.spec?.nodeAllocatableUpdatePeriodSeconds == null) delete obj.spec.nodeAllocatableUpdatePeriodSeconds;
  };
};

const volumeAttachment: Tweak = (s) => {
  s.prepareForCreate = (obj) => {
    obj.status = { attached: false };
  };
  s.prepareForSubresourceUpdate = (sub, obj, old) => {
    if (sub !== 'status') return;
    for (const k of ['attachError', 'detachError']) {
      const e = obj.status?.[k];
      if (e && typeof e === 'object' && old.status?.[k]?.errorCode == null) delete e.errorCode;
    }
  };
};

/**
 * The validation of ValidatingAdmissionPolicies and their bindings (admission/vap-validation.ts),
 * added to the generic checks; a policy starts with an empty status and counts generations, a
 * binding counts generations.
 */
const vapValidation =
  (create: (o: any) => FieldError[], update: (o: any, old: any) => FieldError[], status?: (o: any, old: any) => FieldError[]): Tweak =>
  (s) => {
    const baseCreate = s.validate;
    const baseUpdate = s.validateUpdate;
    const baseSub = s.validateSubresource;
    s.validate = (obj) => [...baseCreate(obj), ...create(obj)];
    s.validateUpdate = (obj, old) => [...baseUpdate(obj, old), ...update(obj, old)];
    if (status) s.validateSubresource = (sub, obj, old) => (sub === 'status' ? [...baseSub(sub, obj, old), ...status(obj, old)] : baseSub(sub, obj, old));
  };

/**
 * A status write keeps the metadata Kubernetes' status strategy takes from the stored object:
 * `all` (FlowSchema, PriorityLevelConfiguration: the whole ObjectMeta but managedFields), or
 * metav1.ResetObjectMetaForStatus's fields (deletionTimestamp, generation, labels, annotations,
 * finalizers, ownerReferences).
 */
const statusKeepsMeta =
  (all: boolean): Tweak =>
  (s) => {
    const base = s.prepareForSubresourceUpdate;
    s.prepareForSubresourceUpdate = (sub, obj, old) => {
      base?.(sub, obj, old);
      if (sub !== 'status') return;
      const m = (obj.metadata ??= {});
      const o = old.metadata ?? {};
      const keys = all ? [...new Set([...Object.keys(m), ...Object.keys(o)])].filter((k) => k !== 'managedFields') : ['deletionTimestamp', 'generation', 'labels', 'annotations', 'finalizers', 'ownerReferences'];
      for (const k of keys) {
        if (o[k] === undefined) delete m[k];
        else m[k] = structuredClone(o[k]);
      }
    };
  };

/**
 * A PersistentVolume's status.lastPhaseTransitionTime (GA in 1.31): set at create (the phase is
 * Pending), and on a status write that changes the phase unless the writer set a new time.
 */
const pvPhaseTransitions: Tweak = (s) => {
  const create = s.prepareForCreate;
  s.prepareForCreate = (obj, user, dryRun) => {
    create(obj, user, dryRun);
    obj.status = { phase: 'Pending', lastPhaseTransitionTime: rfc3339(Date.now()) };
  };
  const sub = s.prepareForSubresourceUpdate;
  s.prepareForSubresourceUpdate = (name, obj, old) => {
    sub?.(name, obj, old);
    if (name !== 'status') return;
    const phase = obj.status?.phase;
    const t = obj.status?.lastPhaseTransitionTime;
    if (phase !== old.status?.phase && (t === undefined || t === null || t === old.status?.lastPhaseTransitionTime)) {
      obj.status = { ...(obj.status ?? {}), lastPhaseTransitionTime: rfc3339(Date.now()) };
    }
  };
};

const gcPolicy =
  (p: NonNullable<Strategy['garbageCollectionPolicy']>): Tweak =>
  (s) =>
    void (s.garbageCollectionPolicy = p);

const TWEAKS: Record<string, Tweak[]> = {
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy': [
    workload,
    statusKeepsMeta(false),
    vapValidation(validateValidatingAdmissionPolicy, validateValidatingAdmissionPolicyUpdate, validateValidatingAdmissionPolicyStatusUpdate),
  ],
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding': [
    (s) => void (s.generation = true),
    vapValidation(validateValidatingAdmissionPolicyBinding, validateValidatingAdmissionPolicyBindingUpdate),
  ],
  'apiregistration.k8s.io/APIService': [apiServiceStrategy],
  '/PodTemplate': [returnsObject, generationOf((o) => o.template)],
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': [generationOf((o) => o.webhooks)],
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': [generationOf((o) => o.webhooks)],
  'networking.k8s.io/IngressClass': [(s) => void (s.generation = true)],
  // everything but the metadata, and the labels
  'discovery.k8s.io/EndpointSlice': [generationOf((o) => ({ ...o, metadata: o.metadata?.labels }))],
  'storage.k8s.io/CSIDriver': [returnsObject, csiDriver],
  'storage.k8s.io/CSINode': [returnsObject],
  'storage.k8s.io/VolumeAttachment': [returnsObject, volumeAttachment, statusKeepsMeta(false)],
  // (an empty status on create, generations of the spec: what the workload kinds' strategies do)
  'flowcontrol.apiserver.k8s.io/FlowSchema': [workload, statusKeepsMeta(true)],
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration': [workload, statusKeepsMeta(true)],
  'networking.k8s.io/ServiceCIDR': [statusKeepsMeta(false)],
  // (DefaultGarbageCollectionPolicy: Events take no garbage-collector finalizers; a
  // ReplicationController and a batch/v1 Job orphan their dependents by default)
  'events.k8s.io/Event': [eventsV1, gcPolicy('Unsupported')],
  '/Event': [gcPolicy('Unsupported')],
  'autoscaling/HorizontalPodAutoscaler': [hpaV1],
  '/Namespace': [namespace],
  '/Pod': [pod],
  '/Service': [service],
  '/ServiceAccount': [returnsObject],
  '/Node': [statusOnly],
  '/PersistentVolume': [statusOnly, returnsObject, pvPhaseTransitions],
  '/PersistentVolumeClaim': [statusOnly, returnsObject],
  '/ResourceQuota': [statusOnly, returnsObject],
  '/ReplicationController': [workload, gcPolicy('OrphanDependents')],
  'apps/Deployment': [
    workload,
    (s) => void (s.generationOnAnnotations = true),
    // deployments/status does not change the labels either
    (s) => {
      const base = s.prepareForSubresourceUpdate;
      s.prepareForSubresourceUpdate = (sub, obj, old) => {
        base?.(sub, obj, old);
        if (sub !== 'status') return;
        if (old.metadata.labels === undefined) delete obj.metadata.labels;
        else obj.metadata.labels = old.metadata.labels;
      };
    },
  ],
  'apps/ReplicaSet': [workload],
  'apps/StatefulSet': [workload],
  'apps/DaemonSet': [
    workload,
    (s) => {
      const create = s.prepareForCreate;
      const update = s.prepareForUpdate;
      s.prepareForCreate = (obj) => {
        create(obj);
        setDaemonSetTemplateGeneration(obj);
      };
      s.prepareForUpdate = (obj, old) => {
        update(obj, old);
        setDaemonSetTemplateGeneration(obj, old);
      };
    },
  ],
  'batch/Job': [
    workload,
    gcPolicy('OrphanDependents'),
    (s) => {
      const base = s.prepareForCreate;
      s.prepareForCreate = (obj) => {
        base(obj);
        generateJobSelector(obj);
      };
      s.renamed = renameJobSelector;
    },
  ],
  'batch/CronJob': [workload],
  'policy/PodDisruptionBudget': [workload],
  'networking.k8s.io/Ingress': [statusOnly, (s) => void (s.generation = true)],
  'networking.k8s.io/NetworkPolicy': [(s) => void (s.generation = true)],
  'storage.k8s.io/StorageClass': [returnsObject],
  'certificates.k8s.io/CertificateSigningRequest': [statusOnly, csrRequestor],
};

/** kinds whose PUT of an absent object creates it, as in Kubernetes */
const CREATE_ON_UPDATE = new Set([
  '/Service',
  '/Endpoints',
  '/Event',
  '/LimitRange',
  'events.k8s.io/Event',
  'coordination.k8s.io/Lease',
  'node.k8s.io/RuntimeClass',
  'rbac.authorization.k8s.io/Role',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/RoleBinding',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
]);

/** where a kind holds a pod spec, for the fields of gates off by default (defaults/gated.ts) */
const POD_SPEC_AT: Record<string, (o: any) => any> = {
  '/Pod': (o) => o?.spec,
  '/PodTemplate': (o) => o?.template?.spec,
  '/ReplicationController': (o) => o?.spec?.template?.spec,
  'apps/Deployment': (o) => o?.spec?.template?.spec,
  'apps/ReplicaSet': (o) => o?.spec?.template?.spec,
  'apps/StatefulSet': (o) => o?.spec?.template?.spec,
  'apps/DaemonSet': (o) => o?.spec?.template?.spec,
  'batch/Job': (o) => o?.spec?.template?.spec,
  'batch/CronJob': (o) => o?.spec?.jobTemplate?.spec?.template?.spec,
};

/** the fields of gates Kubernetes 1.33 has off by default, dropped on create and update (unless in use) */
const DROP_DISABLED: Record<string, (obj: any, old?: any) => void> = {
  ...Object.fromEntries(Object.entries(POD_SPEC_AT).map(([k, at]) => [k, (obj: any, old?: any) => dropDisabledPodSpecFields(at(obj), old === undefined ? undefined : at(old))])),
  '/PersistentVolumeClaim': dropDisabledVolumeAttributesClass,
  '/PersistentVolume': dropDisabledVolumeAttributesClass,
  'coordination.k8s.io/Lease': dropDisabledLeaseFields,
};

const dropsDisabledFields =
  (drop: (obj: any, old?: any) => void): Tweak =>
  (s) => {
    const create = s.prepareForCreate;
    const update = s.prepareForUpdate;
    s.prepareForCreate = (obj, user) => {
      create(obj, user);
      drop(obj);
    };
    s.prepareForUpdate = (obj, old) => {
      update(obj, old);
      drop(obj, old);
    };
  };

export function strategyFor(kind: KindDecl, ctx: { services?: ServiceAllocators } = {}): Strategy {
  const s = defaultStrategy(kind);
  s.allowCreateOnUpdate = CREATE_ON_UPDATE.has(`${kind.group}/${kind.kind}`);
  for (const t of TWEAKS[`${kind.group}/${kind.kind}`] ?? []) t(s, kind);
  const drop = DROP_DISABLED[`${kind.group}/${kind.kind}`];
  if (drop) dropsDisabledFields(drop)(s, kind);
  if (kind.group === '' && kind.kind === 'Service' && ctx.services) serviceStrategyWith(s, ctx.services);
  return s;
}

// ---- Service: cluster IP and node port allocation ----

export interface ServiceAllocators {
  ips: IPAllocator;
  ports: PortAllocator;
  log?: (e: unknown, msg: string) => void;
}

function needsNodePorts(spec: any): boolean {
  return spec?.type === 'NodePort' || (spec?.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
}

function needsHealthCheckPort(spec: any): boolean {
  return spec?.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
}

function hasClusterIP(spec: any): boolean {
  return spec?.type !== 'ExternalName';
}

/** the addresses and ports a Service holds */
function holdings(svc: any): { ips: string[]; ports: number[] } {
  const spec = svc?.spec ?? {};
  const ips = (spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : [])).filter((ip: string) => ip && ip !== 'None');
  const ports: number[] = [];
  for (const p of spec.ports ?? []) if (typeof p.nodePort === 'number' && p.nodePort > 0) ports.push(p.nodePort);
  if (typeof spec.healthCheckNodePort === 'number' && spec.healthCheckNodePort > 0) ports.push(spec.healthCheckNodePort);
  return { ips, ports };
}

/** record the holdings of a stored Service (rebuilding allocator state at start) */
export function markServiceAllocations(a: ServiceAllocators, svc: any): void {
  const h = holdings(svc);
  for (const ip of h.ips) a.ips.mark(ip);
  for (const p of h.ports) a.ports.mark(p);
}

function allocationFailed(svc: any, fieldPath: string, value: unknown, msg: string): never {
  throw errors.invalid({ group: '', name: 'Service' }, svc.metadata?.name ?? '', [field.invalid(fieldPath, value, msg)]);
}

/**
 * Allocate what a new (or changed) Service needs, keeping what it already holds. `taken` collects
 * what this call allocated, so that a failed or dry-run write can give it back.
 */
function allocateService(a: ServiceAllocators, svc: any, old: any | undefined, taken: { ips: string[]; ports: number[] }, dryRun: boolean): void {
  const spec = svc.spec ?? (svc.spec = {});
  const oldSpec = old?.spec;
  const oldHeld = holdings(old);
  if (hasClusterIP(spec)) {
    if ((spec.clusterIP === undefined || spec.clusterIP === '') && oldSpec && hasClusterIP(oldSpec) && oldSpec.clusterIP) {
      // an update that leaves the cluster IP out keeps the one allocated
      spec.clusterIP = oldSpec.clusterIP;
      spec.clusterIPs = oldSpec.clusterIPs ?? [oldSpec.clusterIP];
    }
    if (spec.clusterIP === 'None') spec.clusterIPs = ['None'];
    else if (spec.clusterIP === undefined || spec.clusterIP === '') {
      let ip: string;
      try {
        ip = a.ips.allocateNext(dryRun);
      } catch (e) {
        // (kube-apiserver's words and code: a full range is its fault, not the request's)
        throw errors.internal(new Error(`failed to allocate a serviceIP: ${(e as Error).message}`));
      }
      if (!dryRun) taken.ips.push(ip);
      spec.clusterIP = ip;
      spec.clusterIPs = [ip];
    } else if (!oldHeld.ips.includes(spec.clusterIP)) {
      try {
        a.ips.allocate(spec.clusterIP, dryRun);
      } catch (e) {
        return allocationFailed(svc, 'spec.clusterIPs', spec.clusterIPs ?? [spec.clusterIP], `failed to allocate IP ${spec.clusterIP}: ${(e as Error).message}`);
      }
      if (!dryRun) taken.ips.push(spec.clusterIP);
      if (!spec.clusterIPs || spec.clusterIPs.length === 0) spec.clusterIPs = [spec.clusterIP];
    }
  }
  const ports: any[] = spec.ports ?? [];
  if (needsNodePorts(spec)) {
    ports.forEach((p, i) => {
      if (p.nodePort === undefined || p.nodePort === 0) {
        // keep the node port an update left out, from the old port of the same number and protocol
        const prev = (oldSpec?.ports ?? []).find((o: any) => o.port === p.port && (o.protocol ?? 'TCP') === (p.protocol ?? 'TCP') && o.nodePort);
        if (prev && needsNodePorts(oldSpec)) {
          p.nodePort = prev.nodePort;
          return;
        }
        try {
          const n = a.ports.allocateNext();
          taken.ports.push(n);
          p.nodePort = n;
        } catch (e) {
          allocationFailed(svc, `spec.ports[${i}].nodePort`, 0, `failed to allocate port: ${(e as Error).message}`);
        }
      } else if (!oldHeld.ports.includes(p.nodePort) && !taken.ports.includes(p.nodePort)) {
        try {
          a.ports.allocate(p.nodePort);
        } catch (e) {
          allocationFailed(svc, `spec.ports[${i}].nodePort`, p.nodePort, (e as Error).message);
        }
        taken.ports.push(p.nodePort);
      }
    });
  }
  // (a node port or health check port on a type without them is the user's, and validation's to refuse;
  // an update that only changed the type has had them cleared by dropServiceTypeDependentFields)
  if (needsHealthCheckPort(spec)) {
    if (!spec.healthCheckNodePort) {
      if (oldSpec?.healthCheckNodePort && needsHealthCheckPort(oldSpec)) spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
      else {
        const n = a.ports.allocateNext();
        taken.ports.push(n);
        spec.healthCheckNodePort = n;
      }
    } else if (!oldHeld.ports.includes(spec.healthCheckNodePort) && !taken.ports.includes(spec.healthCheckNodePort)) {
      try {
        a.ports.allocate(spec.healthCheckNodePort);
      } catch (e) {
        allocationFailed(svc, 'spec.healthCheckNodePort', spec.healthCheckNodePort, (e as Error).message);
      }
      taken.ports.push(spec.healthCheckNodePort);
    }
  }
}

function release(a: ServiceAllocators, ips: string[], ports: number[]): void {
  for (const ip of ips) a.ips.release(ip);
  for (const p of ports) a.ports.release(p);
}

/**
 * The IPAddress objects of a stored Service's new addresses are written, those of the addresses it
 * gave up deleted. A failure is logged and left to the repair loop (ipaddresses.ts), as
 * kube-apiserver leaves it: the Service is stored either way.
 */
async function syncIPAddresses(a: ServiceAllocators, svc: any, claim: string[], free: string[]): Promise<void> {
  const book = a.ips.book;
  if (!book || (claim.length === 0 && free.length === 0)) return;
  const ref = { namespace: svc.metadata?.namespace ?? '', name: svc.metadata?.name ?? '' };
  // (every claim starts at once: the book marks its addresses as being written before any await)
  await Promise.all(claim.map((ip) => book.claim(ip, ref).catch((e) => a.log?.(e, `Writing the IPAddress ${ip} of Service ${ref.namespace}/${ref.name} failed`))));
  for (const ip of free) await book.free(ip, ref).catch((e) => a.log?.(e, `Deleting the IPAddress ${ip} of Service ${ref.namespace}/${ref.name} failed`));
}

/** the IP family fields of a Service, filled in for this (single-stack IPv4) cluster; what cannot be is 422 */
function serviceIPFamilies(obj: any, old?: any): void {
  const errs = initServiceIPFamilies(obj, { families: ['IPv4'] }, old, validateClusterIPsRelatedFields);
  if (errs.length > 0) throw errors.invalid({ group: '', name: 'Service' }, obj.metadata?.name ?? '', errs);
}

export function serviceStrategyWith(s: Strategy, a: ServiceAllocators): void {
  const taken = new WeakMap<object, { ips: string[]; ports: number[] }>();
  const baseCreate = s.prepareForCreate;
  const baseUpdate = s.prepareForUpdate;
  s.prepareForCreate = (obj, user, dryRun) => {
    baseCreate(obj, user, dryRun);
    normalizeServiceClusterIPs(obj);
    serviceIPFamilies(obj);
    const t = { ips: [] as string[], ports: [] as number[] };
    taken.set(obj, t);
    try {
      allocateService(a, obj, undefined, t, dryRun === true);
      orderServiceSpec(obj);
    } catch (e) {
      release(a, t.ips, t.ports);
      taken.delete(obj);
      throw e;
    }
  };
  s.prepareForUpdate = (obj, old, dryRun) => {
    baseUpdate(obj, old, dryRun);
    dropServiceTypeDependentFields(obj, old);
    serviceIPFamilies(obj, old);
    const t = { ips: [] as string[], ports: [] as number[] };
    taken.set(obj, t);
    try {
      allocateService(a, obj, old, t, dryRun === true);
      orderServiceSpec(obj);
    } catch (e) {
      release(a, t.ips, t.ports);
      taken.delete(obj);
      throw e;
    }
  };
  s.afterCreate = (obj, stored) => {
    const t = taken.get(obj);
    taken.delete(obj);
    if (!t) return;
    if (!stored) release(a, t.ips, t.ports);
    else return syncIPAddresses(a, obj, t.ips, []);
  };
  s.afterUpdate = (obj, old, stored) => {
    const t = taken.get(obj);
    taken.delete(obj);
    if (!stored) {
      if (t) release(a, t.ips, t.ports);
      return;
    }
    // what the old service held and the new one does not is free again
    const now = holdings(obj);
    const before = holdings(old);
    const freed = before.ips.filter((ip) => !now.ips.includes(ip));
    release(
      a,
      freed,
      before.ports.filter((p) => !now.ports.includes(p)),
    );
    return syncIPAddresses(a, obj, t?.ips ?? [], freed);
  };
  s.afterDelete = (obj) => {
    const h = holdings(obj);
    release(a, h.ips, h.ports);
    return syncIPAddresses(a, obj, [], h.ips);
  };
}
