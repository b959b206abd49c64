// Random request pieces, seeded: methods, paths of every URL shape, query parameters with valid
// and odd values, media types, and bodies (objects, mutated and cut ones, deep ones, noise). Shared
// by the fuzz test (fuzz.test.ts) and the randomized probes (scripts/probe/requests.mjs imports
// the compiled module from dist/test/e2e/fuzzgen.js).

/** a seeded source of random numbers in [0, 1), and a random element of a list */
export interface Rand {
  rnd(): number;
  pick<T>(list: readonly T[]): T;
  /** an integer in [0, n) */
  int(n: number): number;
}

export function random(seed: number): Rand {
  let s = Number(seed) || 1;
  const rnd = (): number => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  return { rnd, pick: <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!, int: (n: number) => Math.floor(rnd() * n) };
}

/** odd values of query parameters (and of a few fields) */
export const ODD = ['', '0', '-1', '1', '99999999999999999999', 'abc', '%00', '..', '/', '\u00e9', 'a'.repeat(300), '1.5', 'true', 'null', '{}', '[]', ' ', '%', '%zz', 'x=y', '!', '!=', 'in (a)', 'a,b', 'metadata.name=x', 'spec.nodeName!=y', '=', '==', 'a in', 'Exact', 'NotOlderThan', 'All', 'Strict', 'Warn', 'Ignore', 'Foreground', 'Orphan', 'Background'];

/** the query parameters of lists, watches, writes, deletes and the connect subresources */
export const PARAMS = ['resourceVersion', 'resourceVersionMatch', 'limit', 'continue', 'fieldSelector', 'labelSelector', 'timeoutSeconds', 'watch', 'dryRun', 'fieldManager', 'fieldValidation', 'propagationPolicy', 'gracePeriodSeconds', 'pretty', 'allowWatchBookmarks', 'sendInitialEvents', 'force', 'orphanDependents', 'timeout', 'includeObject', 'container', 'follow', 'command', 'stdout', 'ports', 'tailLines', 'limitBytes'];

/** valid values of some parameters, so that requests get past the parameter checks too */
export const VALID_PARAMS: Record<string, readonly string[]> = {
  resourceVersion: ['0', '1', ''],
  resourceVersionMatch: ['NotOlderThan', 'Exact'],
  limit: ['1', '5', '500'],
  fieldSelector: ['metadata.name=n1', 'metadata.namespace!=x'],
  labelSelector: ['a=b', 'a in (x,y)', '!a', 'probe'],
  timeoutSeconds: ['1'],
  dryRun: ['All'],
  fieldManager: ['fuzz'],
  fieldValidation: ['Ignore', 'Warn', 'Strict'],
  propagationPolicy: ['Foreground', 'Background', 'Orphan'],
  gracePeriodSeconds: ['0', '30'],
  pretty: ['true', '1'],
  includeObject: ['None', 'Metadata', 'Object'],
  force: ['true'],
};

/** group, version, resource, namespaced, kind */
export type Resource = readonly [string, string, string, boolean, string];

export const RESOURCES: readonly Resource[] = [
  ['', 'v1', 'namespaces', false, 'Namespace'], ['', 'v1', 'pods', true, 'Pod'], ['', 'v1', 'configmaps', true, 'ConfigMap'], ['', 'v1', 'services', true, 'Service'], ['', 'v1', 'secrets', true, 'Secret'], ['', 'v1', 'nodes', false, 'Node'], ['', 'v1', 'events', true, 'Event'],
  ['', 'v1', 'persistentvolumes', false, 'PersistentVolume'], ['', 'v1', 'resourcequotas', true, 'ResourceQuota'], ['', 'v1', 'serviceaccounts', true, 'ServiceAccount'], ['', 'v1', 'limitranges', true, 'LimitRange'], ['', 'v1', 'endpoints', true, 'Endpoints'], ['', 'v1', 'replicationcontrollers', true, 'ReplicationController'],
  ['apps', 'v1', 'deployments', true, 'Deployment'], ['apps', 'v1', 'statefulsets', true, 'StatefulSet'], ['apps', 'v1', 'daemonsets', true, 'DaemonSet'], ['apps', 'v1', 'replicasets', true, 'ReplicaSet'], ['batch', 'v1', 'jobs', true, 'Job'], ['batch', 'v1', 'cronjobs', true, 'CronJob'],
  ['coordination.k8s.io', 'v1', 'leases', true, 'Lease'], ['rbac.authorization.k8s.io', 'v1', 'clusterroles', false, 'ClusterRole'], ['rbac.authorization.k8s.io', 'v1', 'rolebindings', true, 'RoleBinding'], ['networking.k8s.io', 'v1', 'ingresses', true, 'Ingress'], ['networking.k8s.io', 'v1', 'networkpolicies', true, 'NetworkPolicy'],
  ['policy', 'v1', 'poddisruptionbudgets', true, 'PodDisruptionBudget'], ['storage.k8s.io', 'v1', 'storageclasses', false, 'StorageClass'], ['certificates.k8s.io', 'v1', 'certificatesigningrequests', false, 'CertificateSigningRequest'], ['discovery.k8s.io', 'v1', 'endpointslices', true, 'EndpointSlice'], ['scheduling.k8s.io', 'v1', 'priorityclasses', false, 'PriorityClass'], ['events.k8s.io', 'v1', 'events', true, 'Event'], ['apiextensions.k8s.io', 'v1', 'customresourcedefinitions', false, 'CustomResourceDefinition'], ['admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', false, 'ValidatingWebhookConfiguration'],
  ['autoscaling', 'v2', 'horizontalpodautoscalers', true, 'HorizontalPodAutoscaler'], ['flowcontrol.apiserver.k8s.io', 'v1', 'flowschemas', false, 'FlowSchema'], ['authorization.k8s.io', 'v1', 'selfsubjectaccessreviews', false, 'SelfSubjectAccessReview'], ['authentication.k8s.io', 'v1', 'selfsubjectreviews', false, 'SelfSubjectReview'],
];

export const SUBRESOURCES = ['status', 'scale', 'log', 'exec', 'binding', 'eviction', 'approval', 'finalize', 'token', 'ephemeralcontainers', 'resize', 'proxy', 'attach', 'portforward', 'x'];
export const NAMES = ['n1', 'n2', 'a', 'x'.repeat(254), 'UPPER', 'a.b', '-a', 'a_b', '%2F', '..'];

/** paths that are not a resource's: discovery, OpenAPI, health, version, metrics, and nonsense */
export const OTHER_PATHS = [
  '/', '/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/apis/nope', '/apis/nope/v1', '/api/v9', '/apis/apps/v9', '/openapi/v2', '/openapi/v3', '/openapi/v3/api/v1', '/openapi/v3/apis/apps/v1', '/openapi/v3/nope',
  '/healthz', '/livez', '/readyz', '/healthz/ping', '/readyz/etcd', '/livez/nope', '/readyz?verbose', '/version', '/metrics', '/nope', '//', '/api/', '/apis/', '/api//v1', '/apis/apps/v1/', '/.well-known/openid-configuration', '/openid/v1/jwks',
  '/api/v1/namespaces/default/pods/n1/proxy/x', '/api/v1/namespaces/default/services/n1:80/proxy/', '/api/v1/watch/namespaces', '/apis/apps/v1/watch/deployments', '/api/v1/namespaces/default/configmaps/a%e9b', '/api/v1/namespaces/default/configmaps/%C3%A9', '/api/v1/namespaces/default/configmaps/%zz',
];

export const FIELDS = ['spec', 'status', 'metadata', 'data', 'stringData', 'rules', 'subsets', 'template', 'containers', 'replicas', 'selector', 'ports', 'type', 'value', 'items', 'conditions', 'finalizers', 'labels', 'annotations', 'ownerReferences', 'managedFields', 'name', 'namespace', 'resourceVersion', 'uid', 'generateName', 'deletionTimestamp', 'image', 'command', 'env', 'volumes', 'roleRef', 'subjects', 'versions', 'group', 'names', 'scope', 'webhooks', 'clientConfig', 'matchLabels', 'matchExpressions', 'key', 'operator', 'values', 'port', 'targetPort', 'protocol', 'nodeName', 'hard', 'limits', 'requests', 'capacity', 'accessModes', 'schedule', 'jobTemplate', 'backoffLimit', 'holderIdentity', 'minAvailable', 'provisioner', 'signerName', 'usages', 'addressType', 'endpoints', 'immutable', 'binaryData', 'apiVersion', 'kind', 'x-unknown'];
export const VALUES: readonly unknown[] = [0, 1, -1, 1.5, 1e308, 2 ** 53, 99999999999, 2 ** 63, '', 'x', 'ÿ', 'a'.repeat(100), true, false, null, '2020-01-01T00:00:00Z', 'bad-date', '100m', '1Gi', 'Always', 'TCP', 'ClusterIP', '*', '80', '/x'];

export const CONTENT_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/cbor', 'application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml', 'application/apply-patch+cbor', 'text/plain', 'application/json; charset=utf-16', 'garbage', ''];
export const ACCEPTS = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/cbor', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io', 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io', 'application/json;as=Table;v=v1beta1;g=meta.k8s.io', 'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io', 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', 'text/html', '*/*', 'application/json;stream=watch', 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json', 'garbage/;;', ''];

/** methods: the verbs, and tokens Go's server takes that no route has */
export const METHODS = ['GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'PATCH', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
export const ODD_METHODS = ['FOO', 'get', 'PROPFIND', 'M-SEARCH', 'X!#$', 'TRACE', 'CONNECT'];

/** a random JSON value, nested up to a few levels */
export function value(r: Rand, d = 0): unknown {
  const x = r.rnd();
  if (d > 4 || x < 0.25) return r.pick(VALUES);
  if (x < 0.5) return Array.from({ length: r.int(3) }, () => value(r, d + 1));
  return object(r, d + 1);
}

/** a random JSON object of known field names */
export function object(r: Rand, d = 0): Record<string, unknown> {
  return Object.fromEntries(Array.from({ length: r.int(5) }, () => [r.pick(FIELDS), value(r, d)]));
}

/** every path of an object (as key lists) */
function paths(o: unknown, p: string[] = [], out: string[][] = []): string[][] {
  out.push(p);
  if (o && typeof o === 'object') for (const k of Object.keys(o)) paths((o as Record<string, unknown>)[k], [...p, k], out);
  return out;
}

/** a copy of `o` with one to three values replaced, removed, added or grown */
export function mutate(r: Rand, o: unknown): unknown {
  const m = structuredClone(o) as Record<string, any>;
  for (let i = 1 + r.int(3); i > 0; i--) {
    const ps = paths(m).filter((p) => p.length > 0);
    if (!ps.length) break;
    const p = r.pick(ps);
    let parent: any = m;
    for (const k of p.slice(0, -1)) parent = parent[k];
    const last = p[p.length - 1]!;
    const x = r.rnd();
    if (x < 0.2 && !Array.isArray(parent)) delete parent[last];
    else if (x < 0.3 && !Array.isArray(parent)) parent[`${last}X`] = r.pick(VALUES);
    else if (x < 0.4 && Array.isArray(parent[last])) parent[last].push(structuredClone(parent[last][0] ?? r.pick(VALUES)));
    else parent[last] = structuredClone(r.pick(VALUES));
  }
  return m;
}

/** a query string of 0-3 parameters, valid or odd values, and sometimes a short watch */
export function query(r: Rand): string {
  const q = Array.from({ length: r.int(4) }, () => {
    const p = r.pick(PARAMS);
    const valid = VALID_PARAMS[p];
    return `${p}=${encodeURIComponent(valid && r.rnd() < 0.5 ? r.pick(valid) : r.pick(ODD))}`;
  });
  if (r.rnd() < 0.05) q.push('watch=1&timeoutSeconds=1');
  return q.length ? `?${q.join('&')}` : '';
}

/** a resource path: cluster-scoped, namespaced, across all namespaces, an object, a subresource */
export function resourcePath(r: Rand, res: Resource): string {
  const [g, v, plural, namespaced] = res;
  const withName = r.rnd() < 0.6;
  const ns = namespaced ? r.pick(['default', 'default', 'kube-system', 'nope', 'UPPER', '']) : r.rnd() < 0.1 ? 'default' : '';
  return `${g ? `/apis/${g}/${v}` : `/api/${v}`}${ns ? `/namespaces/${ns}` : ''}/${plural}${withName ? `/${encodeURIComponent(r.pick(NAMES))}` : ''}${withName && r.rnd() < 0.25 ? `/${r.pick(SUBRESOURCES)}` : ''}`;
}

/** JSON nested `depth` levels */
export function deep(depth: number): string {
  return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

/**
 * A body for a request of `method` with Content-Type `type` to resource `res`: noise, a Protobuf
 * prefix with noise, a cut object, a JSON patch, odd YAML, a deep one, one of `objects` (mutated or
 * not), or a random object of the resource's kind.
 */
export function body(r: Rand, type: string, res: Resource, method: string, objects: readonly unknown[] = []): Buffer {
  const x = r.rnd();
  if (x < 0.06) return Buffer.from(Array.from({ length: r.int(200) }, () => r.int(256)));
  if (x < 0.09) return Buffer.from('k8s\0' + 'x'.repeat(r.int(50)), 'latin1');
  if (x < 0.11) return Buffer.from(deep(r.pick([50, 200, 2000, 20000])));
  const [g, v, , , kind] = res;
  let obj: unknown;
  if (method === 'DELETE') obj = { kind: 'DeleteOptions', apiVersion: 'v1', ...object(r, 1) };
  else if (objects.length && x < 0.5) obj = x < 0.3 ? r.pick(objects) : mutate(r, r.pick(objects));
  else obj = { apiVersion: g ? `${g}/${v}` : v, kind, metadata: r.rnd() < 0.3 ? value(r, 1) : { name: r.pick(NAMES) }, ...object(r) };
  if (x < 0.15) return Buffer.from(JSON.stringify(obj).slice(0, r.int(60)));
  if (type.includes('json-patch')) {
    const op = { op: r.pick(['add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus']), path: r.pick(['/metadata/labels/a', '/spec', '', '/', '/metadata/name', '/x/-', '/data/~1a', '/kind', '/apiVersion']), value: value(r, 1), from: r.pick(['/metadata', '/spec/x']) };
    return Buffer.from(JSON.stringify(r.rnd() < 0.5 ? [op] : value(r)));
  }
  if (type.includes('yaml')) return Buffer.from(r.pick([JSON.stringify(obj), 'a: [', '- x\n- y', '{a: b, a: c}', '!!binary x', '&a [*a]', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata: {a: 1}']));
  return Buffer.from(JSON.stringify(obj));
}
