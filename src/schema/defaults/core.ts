// core/v1 defaults: our reading of Kubernetes 1.33 pkg/apis/core/v1/defaults.go (the
// SetDefaults_X functions) with the feature gates at their 1.33 defaults, plus the pure
// normalizations of the core/v1 <-> internal conversion that a read-back shows (Secret
// stringData, the serviceAccount alias, podIP/podIPs, podCIDR/podCIDRs). The `+default=`
// markers (ports' protocol TCP, ReplicationController replicas, the RBD/iSCSI/AzureDisk/ScaleIO
// fields, gRPC probe service "") come from schema/gen and are applied by the engine.
import { defaulter, isEmpty, isNil, isObject, isZero, orderOf, put, putMapKey, sortedMap, sub, type Order } from './engine.js';
import { defaultPullPolicy } from './image.js';

const C = (n: string) => `io.k8s.api.core.v1.${n}`;
export const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** Feature gates that change defaults, at their Kubernetes 1.33 defaults. */
export const FEATURES_133 = {
  /** beta, off by default in 1.33: no pullPolicy default for image volumes */
  ImageVolume: false,
  /** alpha in 1.33: no pod-level resources defaulting */
  PodLevelResources: false,
};

// ---------------------------------------------------------------------------------------------
// Pod

/** containers' requests default to their limits (Pod only, not templates) */
function requestsFromLimits(c: any): void {
  const res = c.resources;
  if (!isObject(res) || isEmpty(res.limits)) return;
  let req = res.requests;
  if (!isObject(req)) {
    req = {};
    put(res, orderOf(C('ResourceRequirements')), 'requests', req);
  }
  for (const k of Object.keys(res.limits)) {
    if (!Object.prototype.hasOwnProperty.call(req, k)) putMapKey(req, k, res.limits[k]);
  }
}

/** with host networking every container port is also a host port */
function hostNetworkPorts(list: unknown): void {
  if (!Array.isArray(list)) return;
  const ord = orderOf(C('ContainerPort'));
  for (const c of list) {
    if (!isObject(c) || !Array.isArray(c.ports)) continue;
    for (const p of c.ports) {
      if (isObject(p) && isZero(p.hostPort) && !isZero(p.containerPort)) put(p, ord, 'hostPort', p.containerPort);
    }
  }
}

const INIT_CONTAINER_ANNOTATIONS = [
  'pod.beta.kubernetes.io/init-containers',
  'pod.alpha.kubernetes.io/init-containers',
  'pod.beta.kubernetes.io/init-container-statuses',
  'pod.alpha.kubernetes.io/init-container-statuses',
];

/** conversion: the legacy init-container annotations are dropped from pods and pod templates */
export function dropInitContainerAnnotations(meta: any): void {
  const a = meta?.annotations;
  if (!isObject(a)) return;
  for (const k of INIT_CONTAINER_ANNOTATIONS) delete a[k];
  if (isEmpty(a)) delete meta.annotations;
}

/** conversion: the singular podIP/hostIP and the lists podIPs/hostIPs agree (the singular
 *  value is authoritative when both are set and differ) */
function syncIPs(status: any, one: string, many: string): void {
  const ord = orderOf(C('PodStatus'));
  const ip = status[one];
  const list = status[many];
  if (typeof ip === 'string' && ip !== '' && (!Array.isArray(list) || list.length === 0 || list[0]?.ip !== ip)) {
    put(status, ord, many, [{ ip }]);
  }
  const after = status[many];
  if (Array.isArray(after) && after.length > 0 && typeof after[0]?.ip === 'string' && after[0].ip !== '') {
    put(status, ord, one, after[0].ip);
  }
}

defaulter(
  C('Pod'),
  ['spec.containers[].resources.requests', 'spec.initContainers[].resources.requests', 'spec.enableServiceLinks', 'spec.containers[].ports[].hostPort', 'spec.initContainers[].ports[].hostPort'],
  (pod, ord) => {
    const spec = sub(pod, ord, 'spec');
    if (Array.isArray(spec.containers)) for (const c of spec.containers) if (isObject(c)) requestsFromLimits(c);
    if (Array.isArray(spec.initContainers)) for (const c of spec.initContainers) if (isObject(c)) requestsFromLimits(c);
    if (isNil(spec.enableServiceLinks)) put(spec, orderOf(C('PodSpec')), 'enableServiceLinks', true);
    if (spec.hostNetwork === true) {
      hostNetworkPorts(spec.containers);
      hostNetworkPorts(spec.initContainers);
    }
    // conversion (v1 -> internal, Pod only): a negative grace period is stored as 1
    if (typeof spec.terminationGracePeriodSeconds === 'number' && spec.terminationGracePeriodSeconds < 0) {
      spec.terminationGracePeriodSeconds = 1;
    }
    dropInitContainerAnnotations(pod.metadata);
    if (isObject(pod.status)) {
      syncIPs(pod.status, 'podIP', 'podIPs');
      syncIPs(pod.status, 'hostIP', 'hostIPs');
    }
  },
);

defaulter(C('PodTemplateSpec'), [], (t) => dropInitContainerAnnotations(t.metadata));

defaulter(
  C('PodSpec'),
  ['dnsPolicy', 'restartPolicy', 'securityContext', 'terminationGracePeriodSeconds', 'schedulerName', 'serviceAccount'],
  (spec) => {
    const ord = orderOf(C('PodSpec'));
    // (independent defaults, written in Go field order so that they usually append in place)
    if (isZero(spec.restartPolicy)) put(spec, ord, 'restartPolicy', 'Always');
    if (isNil(spec.terminationGracePeriodSeconds)) put(spec, ord, 'terminationGracePeriodSeconds', 30);
    if (isZero(spec.dnsPolicy)) put(spec, ord, 'dnsPolicy', 'ClusterFirst');
    // conversion: serviceAccount is an alias of serviceAccountName; the new field wins
    if (isZero(spec.serviceAccountName) && !isZero(spec.serviceAccount)) put(spec, ord, 'serviceAccountName', spec.serviceAccount);
    if (isZero(spec.serviceAccountName)) delete spec.serviceAccount;
    else put(spec, ord, 'serviceAccount', spec.serviceAccountName);
    if (isNil(spec.securityContext)) put(spec, ord, 'securityContext', {});
    if (isZero(spec.schedulerName)) put(spec, ord, 'schedulerName', 'default-scheduler');
  },
);

// ---------------------------------------------------------------------------------------------
// Containers, probes, handlers

function containerDefaults(c: any, ord: Order): void {
  if (isZero(c.imagePullPolicy)) put(c, ord, 'imagePullPolicy', defaultPullPolicy(c.image));
  if (isZero(c.terminationMessagePath)) put(c, ord, 'terminationMessagePath', '/dev/termination-log');
  if (isZero(c.terminationMessagePolicy)) put(c, ord, 'terminationMessagePolicy', 'File');
}
const CONTAINER_SETS = ['imagePullPolicy', 'terminationMessagePath', 'terminationMessagePolicy'];
defaulter(C('Container'), CONTAINER_SETS, containerDefaults);
defaulter(C('EphemeralContainer'), CONTAINER_SETS, containerDefaults);

defaulter(C('Probe'), ['timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'], (p, ord) => {
  if (isZero(p.timeoutSeconds)) put(p, ord, 'timeoutSeconds', 1);
  if (isZero(p.periodSeconds)) put(p, ord, 'periodSeconds', 10);
  if (isZero(p.successThreshold)) put(p, ord, 'successThreshold', 1);
  if (isZero(p.failureThreshold)) put(p, ord, 'failureThreshold', 3);
});

defaulter(C('HTTPGetAction'), ['path', 'scheme'], (h, ord) => {
  if (isZero(h.path)) put(h, ord, 'path', '/');
  if (isZero(h.scheme)) put(h, ord, 'scheme', 'HTTP');
});

defaulter(C('ObjectFieldSelector'), ['apiVersion'], (s, ord) => {
  if (isZero(s.apiVersion)) put(s, ord, 'apiVersion', 'v1');
});

// ---------------------------------------------------------------------------------------------
// Volumes

let volumeSourceFields: string[] | undefined;
function volumeSourceKeys(): string[] {
  if (!volumeSourceFields) volumeSourceFields = [...orderOf(C('VolumeSource')).keys()];
  return volumeSourceFields;
}

defaulter(C('Volume'), FEATURES_133.ImageVolume ? ['emptyDir', 'image.pullPolicy'] : ['emptyDir'], (v, ord) => {
  // a volume without a source is an emptyDir
  if (volumeSourceKeys().every((k) => isNil(v[k]))) put(v, ord, 'emptyDir', {});
  if (FEATURES_133.ImageVolume && isObject(v.image) && isZero(v.image.pullPolicy)) {
    put(v.image, orderOf(C('ImageVolumeSource')), 'pullPolicy', defaultPullPolicy(v.image.reference));
  }
});

const MODE_0644 = 420;
for (const t of ['SecretVolumeSource', 'ConfigMapVolumeSource', 'DownwardAPIVolumeSource', 'ProjectedVolumeSource']) {
  defaulter(C(t), ['defaultMode'], (s, ord) => {
    if (isNil(s.defaultMode)) put(s, ord, 'defaultMode', MODE_0644);
  });
}

defaulter(C('ServiceAccountTokenProjection'), ['expirationSeconds'], (s, ord) => {
  if (isNil(s.expirationSeconds)) put(s, ord, 'expirationSeconds', 3600);
});

defaulter(C('HostPathVolumeSource'), ['type'], (s, ord) => {
  if (isNil(s.type)) put(s, ord, 'type', '');
});

// ---------------------------------------------------------------------------------------------
// ReplicationController

defaulter(C('ReplicationController'), ['spec.selector', 'metadata.labels'], (rc, ord) => {
  const spec = sub(rc, ord, 'spec');
  const labels = spec.template?.metadata?.labels;
  if (isNil(labels)) return;
  if (isEmpty(spec.selector)) put(spec, orderOf(C('ReplicationControllerSpec')), 'selector', sortedMap(labels));
  const meta = sub(rc, ord, 'metadata');
  if (isEmpty(meta.labels)) put(meta, orderOf(OBJECT_META), 'labels', sortedMap(labels));
});

// ---------------------------------------------------------------------------------------------
// Service

/** the service can be reached from outside the cluster (externalTrafficPolicy applies) */
function externallyAccessible(spec: any): boolean {
  return (
    spec.type === 'LoadBalancer' ||
    spec.type === 'NodePort' ||
    (spec.type === 'ClusterIP' && Array.isArray(spec.externalIPs) && spec.externalIPs.length > 0)
  );
}

defaulter(
  C('Service'),
  [
    'spec.sessionAffinity',
    'spec.sessionAffinityConfig.clientIP.timeoutSeconds',
    'spec.type',
    'spec.ports[].protocol',
    'spec.ports[].targetPort',
    'spec.externalTrafficPolicy',
    'spec.internalTrafficPolicy',
    'spec.allocateLoadBalancerNodePorts',
    'status.loadBalancer.ingress[].ipMode',
  ],
  (svc, ord) => {
    const spec = sub(svc, ord, 'spec');
    const so = orderOf(C('ServiceSpec'));
    // (Kubernetes defaults the affinity before the type; they are independent, and the type goes
    // first here because it comes first in the object)
    if (isZero(spec.type)) put(spec, so, 'type', 'ClusterIP');
    if (isZero(spec.sessionAffinity)) put(spec, so, 'sessionAffinity', 'None');
    if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
    if (spec.sessionAffinity === 'ClientIP' && isNil(spec.sessionAffinityConfig?.clientIP?.timeoutSeconds)) {
      put(spec, so, 'sessionAffinityConfig', { clientIP: { timeoutSeconds: 10800 } });
    }
    if (Array.isArray(spec.ports)) {
      const po = orderOf(C('ServicePort'));
      for (const p of spec.ports) {
        if (!isObject(p)) continue;
        if (isZero(p.protocol)) put(p, po, 'protocol', 'TCP');
        if (p.targetPort === undefined || p.targetPort === null || p.targetPort === 0 || p.targetPort === '') {
          put(p, po, 'targetPort', typeof p.port === 'number' ? p.port : 0);
        }
      }
    }
    if (externallyAccessible(spec) && isZero(spec.externalTrafficPolicy)) put(spec, so, 'externalTrafficPolicy', 'Cluster');
    if (isNil(spec.internalTrafficPolicy) && (spec.type === 'NodePort' || spec.type === 'LoadBalancer' || spec.type === 'ClusterIP')) {
      put(spec, so, 'internalTrafficPolicy', 'Cluster');
    }
    if (spec.type === 'LoadBalancer') {
      if (isNil(spec.allocateLoadBalancerNodePorts)) put(spec, so, 'allocateLoadBalancerNodePorts', true);
      const ingress = svc.status?.loadBalancer?.ingress;
      if (Array.isArray(ingress)) {
        const io = orderOf(C('LoadBalancerIngress'));
        for (const ing of ingress) {
          if (isObject(ing) && !isZero(ing.ip) && isNil(ing.ipMode)) put(ing, io, 'ipMode', 'VIP');
        }
      }
    }
  },
);

// ---------------------------------------------------------------------------------------------
// Secret, ConfigMap, Endpoints, Namespace, Node, LimitRange

defaulter(C('Secret'), ['type', 'data'], (s, ord) => {
  // conversion: stringData is written into data (and is never stored)
  if (isObject(s.stringData)) {
    const keys = Object.keys(s.stringData);
    if (keys.length > 0) {
      let data = s.data;
      if (!isObject(data)) {
        data = {};
        put(s, ord, 'data', data);
      }
      for (const k of keys) putMapKey(data, k, Buffer.from(String(s.stringData[k] ?? ''), 'utf8').toString('base64'));
    }
  }
  delete s.stringData;
  if (isZero(s.type)) put(s, ord, 'type', 'Opaque');
});

defaulter(C('Endpoints'), ['subsets[].ports[].protocol'], (ep) => {
  if (!Array.isArray(ep.subsets)) return;
  const po = orderOf(C('EndpointPort'));
  for (const ss of ep.subsets) {
    if (!isObject(ss) || !Array.isArray(ss.ports)) continue;
    for (const p of ss.ports) if (isObject(p) && isZero(p.protocol)) put(p, po, 'protocol', 'TCP');
  }
});

export const LABEL_METADATA_NAME = 'kubernetes.io/metadata.name';

defaulter(C('Namespace'), [`metadata.labels[${LABEL_METADATA_NAME}]`], (ns) => {
  const meta = ns.metadata;
  // a namespace created with generateName has no name yet: the strategy labels it later
  if (!isObject(meta) || typeof meta.name !== 'string' || meta.name === '') return;
  if (!isObject(meta.labels)) put(meta, orderOf(OBJECT_META), 'labels', {});
  putMapKey(meta.labels, LABEL_METADATA_NAME, meta.name);
});

defaulter(C('NamespaceStatus'), ['phase'], (st, ord) => {
  if (isZero(st.phase)) put(st, ord, 'phase', 'Active');
});

defaulter(C('NodeStatus'), ['allocatable'], (st, ord) => {
  if (isNil(st.allocatable) && !isNil(st.capacity)) put(st, ord, 'allocatable', { ...st.capacity });
});

defaulter(C('NodeSpec'), ['podCIDRs', 'podCIDR'], (spec, ord) => {
  // conversion: podCIDR and podCIDRs agree; podCIDR wins when both are set and differ
  const one = spec.podCIDR;
  const many = spec.podCIDRs;
  if (typeof one === 'string' && one !== '' && (!Array.isArray(many) || many.length === 0 || many[0] !== one)) {
    put(spec, ord, 'podCIDRs', [one]);
  }
  if (Array.isArray(spec.podCIDRs) && spec.podCIDRs.length > 0) put(spec, ord, 'podCIDR', spec.podCIDRs[0]);
});

defaulter(C('LimitRangeItem'), ['default', 'defaultRequest'], (item, ord) => {
  if (item.type !== 'Container') return;
  if (!isObject(item.default)) put(item, ord, 'default', {});
  if (!isObject(item.defaultRequest)) put(item, ord, 'defaultRequest', {});
  const has = (m: object, k: string) => Object.prototype.hasOwnProperty.call(m, k);
  // default limit from max; default request from the default limit, then from min
  if (isObject(item.max)) for (const k of Object.keys(item.max)) if (!has(item.default, k)) putMapKey(item.default, k, item.max[k]);
  for (const k of Object.keys(item.default)) if (!has(item.defaultRequest, k)) putMapKey(item.defaultRequest, k, item.default[k]);
  if (isObject(item.min)) for (const k of Object.keys(item.min)) if (!has(item.defaultRequest, k)) putMapKey(item.defaultRequest, k, item.min[k]);
  // empty maps are left out of the JSON (omitempty)
  if (isEmpty(item.default)) delete item.default;
  if (isEmpty(item.defaultRequest)) delete item.defaultRequest;
});

// ---------------------------------------------------------------------------------------------
// Persistent volumes

defaulter(C('PersistentVolume'), ['status.phase', 'spec.persistentVolumeReclaimPolicy', 'spec.volumeMode'], (pv, ord) => {
  const status = sub(pv, ord, 'status');
  if (isZero(status.phase)) put(status, orderOf(C('PersistentVolumeStatus')), 'phase', 'Pending');
  const spec = sub(pv, ord, 'spec');
  const so = orderOf(C('PersistentVolumeSpec'));
  if (isZero(spec.persistentVolumeReclaimPolicy)) put(spec, so, 'persistentVolumeReclaimPolicy', 'Retain');
  if (isNil(spec.volumeMode)) put(spec, so, 'volumeMode', 'Filesystem');
});

defaulter(C('PersistentVolumeClaim'), ['status.phase'], (pvc, ord) => {
  const status = sub(pvc, ord, 'status');
  if (isZero(status.phase)) put(status, orderOf(C('PersistentVolumeClaimStatus')), 'phase', 'Pending');
});

defaulter(C('PersistentVolumeClaimSpec'), ['volumeMode'], (spec, ord) => {
  if (isNil(spec.volumeMode)) put(spec, ord, 'volumeMode', 'Filesystem');
});
