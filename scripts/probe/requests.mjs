// Random requests: methods, paths of every resource, subresources and odd names, query parameters
// with odd values, media types, and bodies (random objects, random bytes, cut JSON, JSON patches,
// odd YAML). No answer may be a 5xx (but 503 and 504, which Kubernetes sends for load and for a
// future resourceVersion), an error in JSON must be a Status, and every request must be answered
// (a watch is answered by its first bytes).
import http2 from 'node:http2';
import { client, random, report } from './common.mjs';

const ODD = ['', '0', '-1', '1', '99999999999999999999', 'abc', '%00', '..', '/', '\u00e9', 'a'.repeat(300), '1.5', 'true', 'null', '{}', '[]', ' ', '%', '%zz', 'x=y', '!', '!=', 'in (a)', 'a,b', 'metadata.name=x', 'spec.nodeName!=y', '=', '==', 'a in', 'Exact', 'NotOlderThan', 'All', 'Strict', 'Warn', 'Ignore', 'Foreground', 'Orphan', 'Background'];
const PARAMS = ['resourceVersion', 'resourceVersionMatch', 'limit', 'continue', 'fieldSelector', 'labelSelector', 'timeoutSeconds', 'watch', 'dryRun', 'fieldManager', 'fieldValidation', 'propagationPolicy', 'gracePeriodSeconds', 'pretty', 'allowWatchBookmarks', 'sendInitialEvents', 'force', 'orphanDependents', 'timeout', 'includeObject', 'container', 'follow'];
const RESOURCES = [
  ['', 'v1', 'namespaces', false, 'Namespace'], ['', 'v1', 'pods', true, 'Pod'], ['', 'v1', 'configmaps', true, 'ConfigMap'], ['', 'v1', 'services', true, 'Service'], ['', 'v1', 'secrets', true, 'Secret'], ['', 'v1', 'nodes', false, 'Node'], ['', 'v1', 'events', true, 'Event'],
  ['', 'v1', 'persistentvolumes', false, 'PersistentVolume'], ['', 'v1', 'resourcequotas', true, 'ResourceQuota'], ['', 'v1', 'serviceaccounts', true, 'ServiceAccount'], ['', 'v1', 'limitranges', true, 'LimitRange'], ['', 'v1', 'endpoints', true, 'Endpoints'], ['', 'v1', 'replicationcontrollers', true, 'ReplicationController'],
  ['apps', 'v1', 'deployments', true, 'Deployment'], ['apps', 'v1', 'statefulsets', true, 'StatefulSet'], ['apps', 'v1', 'daemonsets', true, 'DaemonSet'], ['apps', 'v1', 'replicasets', true, 'ReplicaSet'], ['batch', 'v1', 'jobs', true, 'Job'], ['batch', 'v1', 'cronjobs', true, 'CronJob'],
  ['coordination.k8s.io', 'v1', 'leases', true, 'Lease'], ['rbac.authorization.k8s.io', 'v1', 'clusterroles', false, 'ClusterRole'], ['rbac.authorization.k8s.io', 'v1', 'rolebindings', true, 'RoleBinding'], ['networking.k8s.io', 'v1', 'ingresses', true, 'Ingress'], ['networking.k8s.io', 'v1', 'networkpolicies', true, 'NetworkPolicy'],
  ['policy', 'v1', 'poddisruptionbudgets', true, 'PodDisruptionBudget'], ['storage.k8s.io', 'v1', 'storageclasses', false, 'StorageClass'], ['certificates.k8s.io', 'v1', 'certificatesigningrequests', false, 'CertificateSigningRequest'], ['discovery.k8s.io', 'v1', 'endpointslices', true, 'EndpointSlice'], ['scheduling.k8s.io', 'v1', 'priorityclasses', false, 'PriorityClass'], ['events.k8s.io', 'v1', 'events', true, 'Event'], ['apiextensions.k8s.io', 'v1', 'customresourcedefinitions', false, 'CustomResourceDefinition'], ['admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', false, 'ValidatingWebhookConfiguration'],
];
const SUBRESOURCES = ['status', 'scale', 'log', 'exec', 'binding', 'eviction', 'approval', 'finalize', 'token', 'ephemeralcontainers', 'resize', 'proxy', 'attach', 'portforward', 'x'];
const NAMES = ['n1', 'n2', 'a', 'x'.repeat(254), 'UPPER', 'a.b', '-a', 'a_b', '%2F', '..'];
const FIELDS = ['spec', 'status', 'metadata', 'data', 'stringData', 'rules', 'subsets', 'template', 'containers', 'replicas', 'selector', 'ports', 'type', 'value', 'items', 'conditions', 'finalizers', 'labels', 'annotations', 'ownerReferences', 'managedFields', 'name', 'namespace', 'resourceVersion', 'uid', 'generateName', 'deletionTimestamp', 'image', 'command', 'env', 'volumes', 'roleRef', 'subjects', 'versions', 'group', 'names', 'scope', 'webhooks', 'clientConfig', 'matchLabels', 'matchExpressions', 'key', 'operator', 'values', 'port', 'targetPort', 'protocol', 'nodeName', 'hard', 'limits', 'requests', 'capacity', 'accessModes', 'schedule', 'jobTemplate', 'backoffLimit', 'holderIdentity', 'minAvailable', 'provisioner', 'signerName', 'usages', 'addressType', 'endpoints', 'immutable', 'binaryData', 'apiVersion', 'kind', 'x-unknown'];
const VALUES = [0, 1, -1, 1.5, 1e308, 2 ** 53, '', 'x', 'ÿ', 'a'.repeat(100), true, false, null, '2020-01-01T00:00:00Z', 'bad-date', '100m', '1Gi', 'Always', 'TCP', 'ClusterIP', '*', '80', '/x'];
const TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/cbor', 'application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml', 'application/apply-patch+cbor', 'text/plain', 'application/json; charset=utf-16', 'garbage', ''];
const ACCEPTS = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/cbor', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io', 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io', 'application/json;as=Table;v=v1beta1;g=meta.k8s.io', 'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io', 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', 'text/html', '*/*', 'application/json;stream=watch', 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json', ''];

export async function run({ port, kubeconfig, seed, count = 2000, h2 = false }) {
  const c = await client(port, kubeconfig);
  const { rnd, pick } = random(seed);
  const value = (d) => {
    const r = rnd();
    if (d > 4 || r < 0.25) return pick(VALUES);
    if (r < 0.5) return Array.from({ length: Math.floor(rnd() * 3) }, () => value(d + 1));
    return object(d + 1);
  };
  const object = (d) => Object.fromEntries(Array.from({ length: Math.floor(rnd() * 5) }, () => [pick(FIELDS), value(d)]));
  const body = (type, res, name, method) => {
    const r = rnd();
    if (r < 0.08) return Buffer.from(Array.from({ length: Math.floor(rnd() * 200) }, () => Math.floor(rnd() * 256)));
    if (r < 0.12) return Buffer.from('k8s\0' + 'x'.repeat(Math.floor(rnd() * 50)), 'latin1');
    const [g, v, , , kind] = res;
    const obj = method === 'DELETE' ? { kind: 'DeleteOptions', apiVersion: 'v1', ...object(1) } : { apiVersion: g ? `${g}/${v}` : v, kind, metadata: rnd() < 0.3 ? value(1) : { name }, ...object(0) };
    if (r < 0.15) return Buffer.from(JSON.stringify(obj).slice(0, Math.floor(rnd() * 60)));
    if (type.includes('json-patch')) return Buffer.from(JSON.stringify(rnd() < 0.5 ? [{ op: pick(['add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus']), path: pick(['/metadata/labels/a', '/spec', '', '/', '/metadata/name', '/x/-', '/data/~1a']), value: value(1), from: pick(['/metadata', '/spec/x']) }] : value(0)));
    if (type.includes('yaml')) return Buffer.from(pick([JSON.stringify(obj), 'a: [', '- x\n- y', '{a: b, a: c}', '!!binary x', '&a [*a]', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata: {a: 1}']));
    return Buffer.from(JSON.stringify(obj));
  };
  let session;
  const over2 = (method, path, headers, b) =>
    new Promise((resolve) => {
      if (!session || session.closed || session.destroyed) session = http2.connect(`https://127.0.0.1:${port}`, { ca: c.tls.ca, cert: c.tls.cert, key: c.tls.key, servername: 'localhost' });
      const s = session.request({ ':method': method, ':path': path, ...headers, ...(b ? { 'content-length': b.length } : {}) }, { endStream: !b });
      let head;
      const chunks = [];
      let settled = false;
      const done = (r) => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          resolve(r);
        }
      };
      const timer = setTimeout(() => {
        s.close();
        done({ status: -1, text: 'no answer in 15 s' });
      }, 15_000);
      const answer = () => done({ status: head?.[':status'] ?? -3, type: head?.['content-type'], text: Buffer.concat(chunks).toString('utf8') });
      s.on('response', (h) => (head = h));
      s.on('data', (d) => {
        chunks.push(d);
        if (/[?&]watch=/.test(path)) s.close();
      });
      s.on('end', answer);
      s.on('close', answer);
      s.on('error', (e) => done({ status: -2, text: String(e) }));
      if (b) s.end(b);
    });
  const problems = [];
  for (let i = 0; i < count; i++) {
    const res = pick(RESOURCES);
    const [g, v, r, namespaced] = res;
    const name = pick(NAMES);
    const withName = rnd() < 0.6;
    const ns = namespaced ? pick(['default', 'default', 'kube-system', 'nope', 'UPPER', '']) : rnd() < 0.1 ? 'default' : '';
    let path = `${g ? `/apis/${g}/${v}` : `/api/${v}`}${ns ? `/namespaces/${ns}` : ''}/${r}${withName ? `/${encodeURIComponent(name)}` : ''}${withName && rnd() < 0.25 ? `/${pick(SUBRESOURCES)}` : ''}`;
    const query = Array.from({ length: Math.floor(rnd() * 3) }, () => `${pick(PARAMS)}=${encodeURIComponent(pick(ODD))}`);
    if (rnd() < 0.05) query.push('watch=1&timeoutSeconds=1');
    if (query.length) path += `?${query.join('&')}`;
    const method = pick(['GET', 'GET', 'POST', 'POST', 'PUT', 'PATCH', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
    const type = pick(TYPES);
    const headers = { accept: pick(ACCEPTS) };
    let b;
    if (!['GET', 'HEAD', 'OPTIONS'].includes(method) && rnd() < 0.95) {
      b = body(type, res, name, method);
      if (type) headers['content-type'] = type;
    }
    const out = h2 ? await over2(method, path, headers, b) : await c.request(method, path, { headers, body: b });
    // a watch without events is held open by design: its answer is its headers, which this client does not wait for
    const heldWatch = out.status === -1 && /[?&]watch=(1|true|[^&0f][^&]*)/i.test(path);
    let problem;
    if (out.status < 0 && !heldWatch) problem = 'no answer';
    else if (out.status >= 500 && out.status !== 503 && out.status !== 504) problem = '5xx';
    else if (out.status >= 400 && method !== 'HEAD' && out.status !== 406 && String(out.type).includes('json') && !/"kind":\s*"Status"/.test(out.text)) problem = 'an error that is not a Status';
    if (problem) problems.push({ problem, method, path, headers, status: out.status, body: b?.toString('utf8').slice(0, 300), answer: out.text?.slice(0, 300) });
  }
  session?.close();
  c.close();
  return report(`requests${h2 ? ' (HTTP/2)' : ''}`, { requests: count, problems: problems.length }, problems);
}
