// Kind-specific validation: tables of invalid objects with the exact messages Kubernetes 1.33
// answers with (kubectl prints them as they come), valid objects that must pass, and updates of
// immutable fields. Objects are written the way they reach validation: defaulted, Go-shaped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateCreate, validateUpdate, validateStatusUpdate, validateSubresourceUpdate, nameRuleFor } from '../../src/schema/validation/index.js';
import { errors } from '../../src/machinery/errors.js';
import { DNS1035_MSG, LABEL_MSG, LABEL_VALUE_MSG, NAME_PART_MSG, SUBDOMAIN_MSG, container, mutate, podSpec } from './validation-helpers.js';

// ---- Kubernetes' messages ----

const CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const POD_UPDATE_MSG =
  'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n';

// ---- defaulted objects ----

function pod(spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): any {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', ...meta }, spec: podSpec(spec), status: { phase: 'Pending', qosClass: 'BestEffort' } };
}
function template(labels: Record<string, string> = { app: 'web' }, spec: Record<string, unknown> = {}): any {
  return { metadata: { labels }, spec: podSpec(spec) };
}
function deployment(spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: template(),
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      ...spec,
    },
  };
}
function replicaSet(spec: Record<string, unknown> = {}): any {
  return { metadata: { name: 'web', namespace: 'default' }, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: template(), ...spec } };
}
function statefulSet(spec: Record<string, unknown> = {}): any {
  return {
    metadata: { name: 'db', namespace: 'default' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: template(),
      serviceName: 'db',
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      ...spec,
    },
  };
}
function daemonSet(spec: Record<string, unknown> = {}): any {
  return {
    metadata: { name: 'agent', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: template(),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      revisionHistoryLimit: 10,
      ...spec,
    },
  };
}
const JOB_UID = '4d9b4f8e-2f7a-4a2b-9a35-6f0e8e8b1c11';
function job(spec: Record<string, unknown> = {}, labels: Record<string, string> | null = null): any {
  const l = labels ?? { 'batch.kubernetes.io/controller-uid': JOB_UID, 'batch.kubernetes.io/job-name': 'pi', 'controller-uid': JOB_UID, 'job-name': 'pi' };
  return {
    metadata: { name: 'pi', namespace: 'default', uid: JOB_UID },
    spec: {
      parallelism: 1,
      completions: 1,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
      manualSelector: false,
      podReplacementPolicy: 'TerminatingOrFailed',
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': JOB_UID } },
      template: template(l, { restartPolicy: 'Never' }),
      ...spec,
    },
  };
}
function cronJob(spec: Record<string, unknown> = {}, name = 'hello'): any {
  return {
    metadata: { name, namespace: 'default' },
    spec: {
      schedule: '*/5 * * * *',
      concurrencyPolicy: 'Allow',
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      jobTemplate: { metadata: {}, spec: { backoffLimit: 6, completionMode: 'NonIndexed', template: { metadata: {}, spec: podSpec({ restartPolicy: 'OnFailure' }) } } },
      ...spec,
    },
  };
}
function service(spec: Record<string, unknown> = {}): any {
  return {
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      type: 'ClusterIP',
      ports: [{ protocol: 'TCP', port: 80, targetPort: 8080 }],
      selector: { app: 'web' },
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
      ...spec,
    },
  };
}
function ingress(spec: Record<string, unknown> = {}): any {
  return {
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      rules: [{ host: 'example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }],
      ...spec,
    },
  };
}
const CSR_PEM_B64 =
  'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIYU1JR0FBZ0VBTUI0eERqQU1CZ05WQkFNTUJXRnNhV05sTVF3d0NnWURWUVFLREFOa1pYWXdXVEFUQmdjcQpoa2pPUFFJQkJnZ3Foa2pPUFFNQkJ3TkNBQVFOYkZrSWF2NWdacWlBOUpNNVBJY28zdWk4bkxlWFEzbHFzK0YwCkNrUjRMdC9HcUcyUnNuM2twZnU1WlpScFowWjYxUWEzM0pGRTkvVFFBY3ZrU2xaNG9BQXdDZ1lJS29aSXpqMEUKQXdJRFNRQXdSZ0loQUw2N0k5NTRCYXhaWWNUTXJqNlZzSG9oUlp1NTVPMVpYdmszYk4zbzBvVVhBaUVBOVpFbQpmNmtBMEIwM3h6blpmcTVRNHNRaHB0Rk9kMENsR1FMS0cvMW5hZW89Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=';

// ---- the tables ----

interface Case {
  name: string;
  group?: string;
  kind: string;
  obj: any;
  want: string[];
}

function check(cases: Case[]) {
  for (const c of cases)
    test(`${c.group ?? 'core'}/${c.kind}: ${c.name}`, () => {
      assert.deepEqual(validateCreate(c.group ?? '', c.kind, c.obj).map(String), c.want);
    });
}

check([
  { name: 'a valid pod', kind: 'Pod', obj: pod(), want: [] },
  { name: 'no containers', kind: 'Pod', obj: pod({ containers: [] }), want: ['spec.containers: Required value'] },
  {
    name: 'container name and image',
    kind: 'Pod',
    obj: pod({ containers: [container({ name: 'Web_1', image: '' })] }),
    want: [`spec.containers[0].name: Invalid value: "Web_1": ${LABEL_MSG}`, 'spec.containers[0].image: Required value'],
  },
  {
    name: 'duplicate container names',
    kind: 'Pod',
    obj: pod({ containers: [container(), container({ image: 'busybox' })] }),
    want: ['spec.containers[1].name: Duplicate value: "app"'],
  },
  {
    name: 'container ports',
    kind: 'Pod',
    obj: pod({
      containers: [
        container({
          ports: [
            { containerPort: 0, protocol: 'TCP' },
            { containerPort: 70000, protocol: 'TCP' },
            { name: 'http', containerPort: 80, protocol: 'HTTP' },
            { name: 'http', containerPort: 81, protocol: 'TCP' },
            { name: 'averyveryverylongname', containerPort: 82, protocol: 'TCP' },
          ],
        }),
      ],
    }),
    want: [
      'spec.containers[0].ports[0].containerPort: Required value',
      'spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.containers[0].ports[2].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
      'spec.containers[0].ports[3].name: Duplicate value: "http"',
      'spec.containers[0].ports[4].name: Invalid value: "averyveryverylongname": must be no more than 15 characters',
    ],
  },
  {
    name: 'requests above limits',
    kind: 'Pod',
    obj: pod({ containers: [container({ resources: { limits: { cpu: '1', memory: '512Mi' }, requests: { cpu: '1500m', memory: '1Gi' } } })] }),
    want: [
      'spec.containers[0].resources.requests: Invalid value: "1500m": must be less than or equal to cpu limit of 1',
      'spec.containers[0].resources.requests: Invalid value: "1Gi": must be less than or equal to memory limit of 512Mi',
    ],
  },
  {
    name: 'negative and unknown resources',
    kind: 'Pod',
    obj: pod({ containers: [container({ resources: { limits: { cpu: '-1', gpus: '1' } } })] }),
    want: [
      'spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.containers[0].resources.limits[gpus]: Invalid value: "gpus": must be a standard resource type or fully qualified',
      'spec.containers[0].resources.limits[gpus]: Invalid value: "gpus": must be a standard resource for containers',
    ],
  },
  {
    name: 'extended resources must be integers and requests must equal limits',
    kind: 'Pod',
    obj: pod({ containers: [container({ resources: { limits: { 'example.com/gpu': '2' }, requests: { 'example.com/gpu': '1' } } })] }),
    want: ['spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2'],
  },
  {
    name: 'volumes and mounts',
    kind: 'Pod',
    obj: pod({
      volumes: [{ name: 'cfg', configMap: { name: 'cfg', defaultMode: 420 } }, { name: 'cfg', emptyDir: {} }, { name: 'empty' }, { name: 'two', emptyDir: {}, hostPath: { path: '/tmp', type: '' } }],
      containers: [container({ volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }, { name: 'data', mountPath: '/data' }, { name: 'cfg', mountPath: '/etc/cfg' }] })],
    }),
    want: [
      'spec.volumes[1].name: Duplicate value: "cfg"',
      'spec.volumes[2]: Required value: must specify a volume type',
      'spec.volumes[3].hostPath: Forbidden: may not specify more than 1 volume type',
      'spec.containers[0].volumeMounts[1].name: Not found: "data"',
      'spec.containers[0].volumeMounts[2].mountPath: Invalid value: "/etc/cfg": must be unique',
    ],
  },
  {
    name: 'restart and DNS policies',
    kind: 'Pod',
    obj: pod({ restartPolicy: 'Sometimes', dnsPolicy: 'None' }),
    want: ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"', 'spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None'],
  },
  {
    name: 'environment variables',
    kind: 'Pod',
    obj: pod({ containers: [container({ env: [{ name: 'A=B', value: 'x' }, { name: 'FROM', valueFrom: {} }, { name: '' }, { name: 'KEY', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'a b' } } }] })] }),
    want: [
      `spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`,
      'spec.containers[0].env[1].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
      'spec.containers[0].env[2].name: Required value',
      `spec.containers[0].env[3].valueFrom.configMapKeyRef.key: Invalid value: "a b": ${CONFIG_KEY_MSG}`,
    ],
  },
  {
    name: 'downward API field paths',
    kind: 'Pod',
    obj: pod({ containers: [container({ env: [{ name: 'A', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } } }, { name: 'B', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nope' } } }] })] }),
    want: [
      'spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "metadata.labels": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"',
      'spec.containers[0].env[1].valueFrom.fieldRef.fieldPath: Invalid value: "spec.nope": error converting fieldPath: field label not supported: spec.nope',
    ],
  },
  {
    name: 'tolerations',
    kind: 'Pod',
    obj: pod({ tolerations: [{ operator: 'Equal', value: 'x' }, { key: 'k', operator: 'Exists', value: 'v' }, { key: 'k', operator: 'Equal', effect: 'Sometimes' }, { key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 10 }] }),
    want: [
      'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
      "spec.tolerations[1].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
      'spec.tolerations[2].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      "spec.tolerations[3].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
    ],
  },
  {
    name: 'probes',
    kind: 'Pod',
    obj: pod({
      containers: [
        container({
          livenessProbe: { httpGet: { path: '/', port: 80, scheme: 'HTTP' }, successThreshold: 2, timeoutSeconds: 1, periodSeconds: 10, failureThreshold: 3 },
          readinessProbe: { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
          startupProbe: { tcpSocket: { port: 'Not-A-Port' }, periodSeconds: -1, successThreshold: 1, timeoutSeconds: 1, failureThreshold: 3 },
        }),
      ],
    }),
    want: [
      'spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1',
      'spec.containers[0].readinessProbe: Required value: must specify a handler type',
      'spec.containers[0].startupProbe.tcpSocket.port: Invalid value: "Not-A-Port": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'spec.containers[0].startupProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0',
    ],
  },
  {
    name: 'init containers without restartPolicy may not have probes',
    kind: 'Pod',
    obj: pod({ initContainers: [container({ name: 'init', livenessProbe: { exec: { command: ['true'] }, successThreshold: 1 } }), container({ name: 'sidecar', restartPolicy: 'OnFailure' })] }),
    want: [
      'spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.initContainers[1].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
    ],
  },
  {
    name: 'a sleep action longer than the grace period',
    kind: 'Pod',
    obj: pod({ terminationGracePeriodSeconds: 10, containers: [container({ lifecycle: { preStop: { sleep: { seconds: 20 } } } })] }),
    want: ['spec.containers[0].lifecycle.preStop.sleep: Invalid value: 20: must be non-negative and less than terminationGracePeriodSeconds (10)'],
  },
  {
    name: 'spec fields',
    kind: 'Pod',
    obj: pod({ activeDeadlineSeconds: 0, nodeSelector: { disk: 'fast ssd' }, hostname: 'Web', serviceAccountName: 'Robot' }),
    want: [
      `spec.nodeSelector: Invalid value: "fast ssd": ${LABEL_VALUE_MSG}`,
      `spec.serviceAccountName: Invalid value: "Robot": ${SUBDOMAIN_MSG}`,
      'spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive',
      `spec.hostname: Invalid value: "Web": ${LABEL_MSG}`,
    ],
  },
  {
    name: 'host network needs host ports equal to container ports',
    kind: 'Pod',
    obj: pod({ hostNetwork: true, containers: [container({ ports: [{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }] })] }),
    want: ['spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true'],
  },
  {
    name: 'conflicting host ports',
    kind: 'Pod',
    obj: pod({ containers: [container({ ports: [{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }] }), container({ name: 'b', ports: [{ containerPort: 81, hostPort: 8080, protocol: 'TCP' }] })] }),
    want: ['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"'],
  },
  {
    name: 'ephemeral containers on create',
    kind: 'Pod',
    obj: pod({ ephemeralContainers: [container({ name: 'debug', image: 'busybox' })] }),
    want: ['spec.ephemeralContainers: Forbidden: cannot be set on create'],
  },
  {
    name: 'the pod deletion cost annotation',
    kind: 'Pod',
    obj: pod({}, { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '007' } }),
    want: ['metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "007": must be a 32bit integer'],
  },
  {
    name: 'security contexts',
    kind: 'Pod',
    obj: pod({ securityContext: { runAsUser: -1, seccompProfile: { type: 'Localhost' } }, containers: [container({ securityContext: { procMount: 'Bogus', allowPrivilegeEscalation: false, privileged: true } })] }),
    want: [
      'spec.containers[0].securityContext.procMount: Unsupported value: "Bogus": supported values: "Default", "Unmasked"',
      'spec.containers[0].securityContext: Invalid value: core.SecurityContext{...}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true',
      'spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive',
      'spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost',
    ],
  },
  {
    name: 'topology spread constraints',
    kind: 'Pod',
    obj: pod({ topologySpreadConstraints: [{ maxSkew: 0, topologyKey: '', whenUnsatisfiable: 'Maybe' }] }),
    want: [
      'spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero',
      'spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty',
      'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"',
    ],
  },
  {
    name: 'node affinity',
    kind: 'Pod',
    obj: pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'Near', values: ['a'] }] }] } } } }),
    want: ['spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator'],
  },
  {
    name: 'metadata finalizers and owner references',
    kind: 'Pod',
    obj: pod({}, { finalizers: ['keep-me'], ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: '' }] }),
    want: ['metadata.ownerReferences.uid: Invalid value: "": must not be empty', 'metadata.finalizers[0]: Invalid value: "keep-me": name is neither a standard finalizer name nor is it fully qualified'],
  },
]);

test('a pod: the Status kubectl prints', () => {
  const errs = validateCreate('', 'Pod', pod({ containers: [container({ image: '' })] }));
  const st = errors.invalid({ group: '', name: 'Pod' }, 'web', errs).toStatus();
  assert.equal(st.code, 422);
  assert.equal(st.message, 'Pod "web" is invalid: spec.containers[0].image: Required value');
  assert.deepEqual(st.details?.causes, [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[0].image' }]);
});

test('core/Pod: updates', () => {
  const old = pod({ tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }], activeDeadlineSeconds: 100 });
  // images, activeDeadlineSeconds (down), tolerationSeconds and new tolerations may change
  const ok = mutate(old, (p) => {
    p.spec.containers[0].image = 'nginx:1.28';
    p.spec.activeDeadlineSeconds = 50;
    p.spec.tolerations[0].tolerationSeconds = 60;
    p.spec.tolerations.push({ key: 'other', operator: 'Exists' });
    p.metadata.labels = { new: 'label' };
  });
  assert.deepEqual(validateUpdate('', 'Pod', ok, old).map(String), []);
  const renamed = mutate(old, (p) => (p.spec.containers[0].name = 'other'));
  const errs = validateUpdate('', 'Pod', renamed, old).map(String);
  assert.equal(errs.length, 1);
  assert.ok(errs[0]!.startsWith(POD_UPDATE_MSG), errs[0]);
  assert.deepEqual(validateUpdate('', 'Pod', mutate(old, (p) => p.spec.containers.push(container({ name: 'b' }))), old).map(String), ['spec.containers: Forbidden: pod updates may not add or remove containers']);
  assert.deepEqual(validateUpdate('', 'Pod', mutate(old, (p) => (p.spec.activeDeadlineSeconds = 200)), old).map(String), ['spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value']);
  assert.deepEqual(validateUpdate('', 'Pod', mutate(old, (p) => delete p.spec.activeDeadlineSeconds), old).map(String), [
    'spec.activeDeadlineSeconds: Invalid value: "null": must not update from a positive integer to nil value',
  ]);
  assert.deepEqual(validateUpdate('', 'Pod', mutate(old, (p) => (p.spec.tolerations[0].effect = 'NoSchedule')), old).map(String), [
    "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
    'spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds',
  ]);
  assert.deepEqual(validateUpdate('', 'Pod', mutate(old, (p) => (p.spec.containers[0].image = ' nginx')), old).map(String), [
    'spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace',
    'spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace',
  ]);
  // a terminating pod takes no new finalizers
  const deleting = mutate(old, (p) => (p.metadata.deletionTimestamp = '2025-01-01T00:00:00Z'));
  assert.deepEqual(validateUpdate('', 'Pod', mutate(deleting, (p) => (p.metadata.finalizers = ['example.com/x'])), deleting).map(String), [
    'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/x"}',
  ]);
});

test('core/Pod: status updates', () => {
  const old = pod();
  const next = mutate(old, (p) => (p.status = { phase: 'Running', qosClass: 'Guaranteed', podIPs: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }] }));
  assert.deepEqual(validateStatusUpdate('', 'Pod', next, old).map(String), [
    'status.qosClass: Invalid value: "Guaranteed": field is immutable',
    'status.podIPs: Invalid value: []core.PodIP{core.PodIP{IP:"10.0.0.1"}, core.PodIP{IP:"10.0.0.2"}}: may specify no more than one IP for each IP family',
  ]);
  const dual = mutate(old, (p) => (p.status.podIPs = [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }]));
  assert.deepEqual(validateStatusUpdate('', 'Pod', dual, old).map(String), []);
});

// ---- apps ----

check([
  { name: 'a valid deployment', group: 'apps', kind: 'Deployment', obj: deployment(), want: [] },
  {
    name: 'selector does not match the template labels',
    group: 'apps',
    kind: 'Deployment',
    obj: deployment({ template: template({ app: 'api' }) }),
    want: ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"api"}: `selector` does not match template `labels`'],
  },
  {
    name: 'no selector',
    group: 'apps',
    kind: 'Deployment',
    obj: deployment({ selector: undefined }),
    want: ['spec.selector: Required value', 'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`'],
  },
  {
    name: 'an empty selector',
    group: 'apps',
    kind: 'Deployment',
    obj: deployment({ selector: {} }),
    want: ['spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment'],
  },
  {
    name: 'a selector with a bad expression',
    group: 'apps',
    kind: 'Deployment',
    obj: deployment({ selector: { matchExpressions: [{ key: 'app', operator: 'Is', values: ['web'] }] } }),
    want: [
      'spec.selector.matchExpressions[0].operator: Invalid value: "Is": not a valid selector operator',
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"Is", Values:[]string{"web"}}}}: invalid label selector',
    ],
  },
  {
    name: 'replicas, strategy and deadlines',
    group: 'apps',
    kind: 'Deployment',
    obj: deployment({ replicas: -1, minReadySeconds: 10, progressDeadlineSeconds: 5, strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }),
    want: [
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0',
      'spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds',
    ],
  },
  {
    name: 'percentages',
    group: 'apps',
    kind: 'Deployment',
    obj: deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '110%', maxSurge: 'half' } } }),
    want: [
      "spec.strategy.rollingUpdate.maxSurge: Invalid value: half: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 110%: must not be greater than 100%',
    ],
  },
  {
    name: 'an unknown strategy',
    group: 'apps',
    kind: 'Deployment',
    obj: deployment({ strategy: { type: 'BlueGreen' } }),
    want: ['spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"BlueGreen", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"'],
  },
  {
    name: 'Recreate with rolling update parameters',
    group: 'apps',
    kind: 'Deployment',
    obj: deployment({ strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } }),
    want: ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
  },
  {
    name: 'the pod template',
    group: 'apps',
    kind: 'Deployment',
    obj: deployment({ template: template({ app: 'web', 'bad key': 'x' }, { restartPolicy: 'Never', containers: [container({ image: '' })] }) }),
    want: [
      `spec.template.labels: Invalid value: "bad key": ${NAME_PART_MSG}`,
      'spec.template.spec.containers[0].image: Required value',
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ],
  },
  {
    name: 'an empty ReplicaSet selector',
    group: 'apps',
    kind: 'ReplicaSet',
    obj: replicaSet({ selector: { matchLabels: {} } }),
    want: ['spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment'],
  },
  { name: 'a valid statefulset', group: 'apps', kind: 'StatefulSet', obj: statefulSet(), want: [] },
  {
    name: 'statefulset policies',
    group: 'apps',
    kind: 'StatefulSet',
    obj: statefulSet({ podManagementPolicy: 'Random', updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 1 } }, ordinals: { start: -1 } }),
    want: [
      'spec.podManagementPolicy: Invalid value: "Random": must be \'OrderedReady\' or \'Parallel\'',
      "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:1, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'",
      'spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0',
    ],
  },
  {
    name: 'a statefulset template is not validated beyond its metadata',
    group: 'apps',
    kind: 'StatefulSet',
    obj: statefulSet({ template: template({ app: 'web' }, { containers: [container({ image: '' })] }) }),
    want: [],
  },
  {
    name: 'an empty statefulset selector',
    group: 'apps',
    kind: 'StatefulSet',
    obj: statefulSet({ selector: {} }),
    want: ['spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset'],
  },
  { name: 'a valid daemonset', group: 'apps', kind: 'DaemonSet', obj: daemonSet(), want: [] },
  {
    name: 'daemonset rolling update',
    group: 'apps',
    kind: 'DaemonSet',
    obj: daemonSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } } }),
    want: ['spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero'],
  },
  {
    name: 'daemonset with nothing unavailable',
    group: 'apps',
    kind: 'DaemonSet',
    obj: daemonSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }),
    want: ['spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0'],
  },
  {
    name: 'daemonset without selector',
    group: 'apps',
    kind: 'DaemonSet',
    obj: daemonSet({ selector: undefined }),
    want: ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`'],
  },
  { name: 'a controller revision without data', group: 'apps', kind: 'ControllerRevision', obj: { metadata: { name: 'r' }, revision: -1 }, want: ['data: Required value: data is mandatory', 'revision: Invalid value: -1: must be greater than or equal to 0'] },
]);

test('apps: selectors are immutable, other fields are not', () => {
  const old = deployment();
  const scaled = mutate(old, (d) => {
    d.spec.replicas = 5;
    d.spec.template.spec.containers[0].image = 'nginx:1.28';
  });
  assert.deepEqual(validateUpdate('apps', 'Deployment', scaled, old).map(String), []);
  const relabeled = mutate(old, (d) => {
    d.spec.selector.matchLabels.app = 'api';
    d.spec.template.metadata.labels.app = 'api';
  });
  const want = ['spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"api"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'];
  assert.deepEqual(validateUpdate('apps', 'Deployment', relabeled, old).map(String), want);
  assert.deepEqual(validateUpdate('apps', 'ReplicaSet', mutate(replicaSet(), (r) => ((r.spec.selector.matchLabels.app = 'api'), (r.spec.template.metadata.labels.app = 'api'))), replicaSet()).map(String), want);
  assert.deepEqual(validateUpdate('apps', 'DaemonSet', mutate(daemonSet(), (r) => ((r.spec.selector.matchLabels.app = 'api'), (r.spec.template.metadata.labels.app = 'api'))), daemonSet()).map(String), want);
});

test('apps/StatefulSet: only some spec fields may change', () => {
  const old = statefulSet();
  const ok = mutate(old, (s) => {
    s.spec.replicas = 3;
    s.spec.template.spec.containers[0].image = 'postgres:17';
    s.spec.updateStrategy = { type: 'OnDelete' };
    s.spec.minReadySeconds = 5;
    s.spec.persistentVolumeClaimRetentionPolicy = { whenDeleted: 'Delete', whenScaled: 'Retain' };
  });
  assert.deepEqual(validateUpdate('apps', 'StatefulSet', ok, old).map(String), []);
  assert.deepEqual(validateUpdate('apps', 'StatefulSet', mutate(old, (s) => (s.spec.serviceName = 'other')), old).map(String), [
    "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
  ]);
});

test('apps: status updates', () => {
  const old = mutate(deployment(), (d) => (d.status = { replicas: 2, readyReplicas: 2, availableReplicas: 2, collisionCount: 2 }));
  const next = mutate(old, (d) => (d.status = { replicas: 1, readyReplicas: 2, availableReplicas: 3, collisionCount: 1 }));
  assert.deepEqual(validateStatusUpdate('apps', 'Deployment', next, old).map(String), [
    'status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas',
    'status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas',
    'status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas',
    'status.collisionCount: Invalid value: 1: cannot be decremented',
  ]);
});

// ---- services ----

check([
  { name: 'a valid service', kind: 'Service', obj: service(), want: [] },
  { name: 'a valid headless service', kind: 'Service', obj: service({ clusterIP: 'None', clusterIPs: ['None'], ports: [] }), want: [] },
  { name: 'no ports', kind: 'Service', obj: service({ ports: [] }), want: ['spec.ports: Required value'] },
  {
    name: 'ports',
    kind: 'Service',
    obj: service({ ports: [{ protocol: 'TCP', port: 0, targetPort: 80 }, { name: 'Web', protocol: 'ICMP', port: 80, targetPort: 'http-web-server-x' }, { name: 'b', protocol: 'TCP', port: 80, targetPort: 80, nodePort: 30001 }] }),
    want: [
      'spec.ports[0].name: Required value',
      'spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      `spec.ports[1].name: Invalid value: "Web": ${LABEL_MSG}`,
      'spec.ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      'spec.ports[1].targetPort: Invalid value: "http-web-server-x": must be no more than 15 characters',
      "spec.ports[2].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
    ],
  },
  {
    name: 'duplicate ports',
    kind: 'Service',
    obj: service({ ports: [{ name: 'a', protocol: 'TCP', port: 80, targetPort: 80 }, { name: 'b', protocol: 'TCP', port: 80, targetPort: 81 }] }),
    want: ['spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}'],
  },
  { name: 'an unknown type', kind: 'Service', obj: service({ type: 'Internal' }), want: ['spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'] },
  {
    name: 'ExternalName',
    kind: 'Service',
    obj: service({ type: 'ExternalName', ports: [], internalTrafficPolicy: undefined, ipFamilyPolicy: 'SingleStack' }),
    want: ['spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services', 'spec.externalName: Required value'],
  },
  {
    name: 'a bad cluster IP',
    kind: 'Service',
    obj: service({ clusterIP: '10.0.0' }),
    want: ['spec.clusterIPs[0]: Invalid value: "10.0.0": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'],
  },
  {
    name: 'session affinity and traffic policy',
    kind: 'Service',
    obj: service({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 0 } }, externalTrafficPolicy: 'Local', loadBalancerSourceRanges: ['10.0.0.0/8'] }),
    want: [
      'spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400',
      "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'",
      'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services',
    ],
  },
  {
    name: 'external IPs',
    kind: 'Service',
    obj: service({ externalIPs: ['127.0.0.1', 'nope'], externalTrafficPolicy: 'Cluster' }),
    want: [
      'spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      'spec.externalIPs[1]: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ],
  },
  {
    name: 'endpoints',
    kind: 'Endpoints',
    obj: { metadata: { name: 'web' }, subsets: [{ ports: [{ port: 80, protocol: 'TCP' }] }, { addresses: [{ ip: '0.0.0.0' }] }] },
    want: ['subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`', 'subsets[1].addresses[0].ip: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)'],
  },
]);

test('core/Service: cluster IPs are immutable; the allocated values carry over', () => {
  const old = service({ clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' });
  // a replace without clusterIP keeps the allocated one
  assert.deepEqual(validateUpdate('', 'Service', service({ ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' }), old).map(String), []);
  const changed = mutate(old, (s) => (s.spec.clusterIP = '10.96.0.11'));
  assert.deepEqual(validateUpdate('', 'Service', changed, old).map(String), ['spec.clusterIPs[0]: Invalid value: []string{"10.96.0.11"}: may not change once set']);
  const lb = service({ type: 'LoadBalancer', allocateLoadBalancerNodePorts: true, externalTrafficPolicy: 'Cluster', loadBalancerClass: 'example.com/lb' });
  assert.deepEqual(validateUpdate('', 'Service', mutate(lb, (s) => (s.spec.loadBalancerClass = 'example.com/other')), lb).map(String), ['spec.loadBalancerClass: Invalid value: "example.com/other": may not change once set']);
});

test('core/Service: status', () => {
  const svc = service();
  const next = mutate(svc, (s) => (s.status = { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } }));
  assert.deepEqual(validateStatusUpdate('', 'Service', next, svc).map(String), ["status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"]);
});

// ---- config ----

check([
  { name: 'a valid configmap', kind: 'ConfigMap', obj: { metadata: { name: 'cfg' }, data: { 'app.properties': 'a=b', KEY_1: 'x' }, binaryData: { 'logo.png': 'iVBORw0KGgo=' } }, want: [] },
  {
    name: 'keys',
    kind: 'ConfigMap',
    obj: { metadata: { name: 'cfg' }, data: { 'a/b': 'x', '..': 'y', same: 'z' }, binaryData: { same: 'eA==' } },
    want: [
      `data[a/b]: Invalid value: "a/b": ${CONFIG_KEY_MSG}`,
      `data[..]: Invalid value: "..": must not be '..'`,
      'data[same]: Invalid value: "same": duplicate of key present in binaryData',
    ],
  },
  { name: 'more than 1 MiB', kind: 'ConfigMap', obj: { metadata: { name: 'cfg' }, data: { big: 'x'.repeat(1024 * 1024), more: 'y' } }, want: [': Too long: may not be more than 1048576 bytes'] },
  { name: 'a valid opaque secret', kind: 'Secret', obj: { metadata: { name: 's' }, type: 'Opaque', data: { password: 'aHVudGVyMg==' } }, want: [] },
  { name: 'a TLS secret without keys', kind: 'Secret', obj: { metadata: { name: 's' }, type: 'kubernetes.io/tls', data: {} }, want: ['data[tls.crt]: Required value', 'data[tls.key]: Required value'] },
  { name: 'stringData counts as data', kind: 'Secret', obj: { metadata: { name: 's' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'c', 'tls.key': 'k', 'bad key': 'x' } }, want: [`data[bad key]: Invalid value: "bad key": ${CONFIG_KEY_MSG}`] },
  { name: 'docker config without its key', kind: 'Secret', obj: { metadata: { name: 's' }, type: 'kubernetes.io/dockerconfigjson', data: {} }, want: ['data[.dockerconfigjson]: Required value'] },
  {
    name: 'docker config that is not JSON',
    kind: 'Secret',
    obj: { metadata: { name: 's' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from('not json').toString('base64') } },
    want: ['data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character \'o\' in literal null (expecting \'u\')'],
  },
  {
    name: 'a service account token without its annotation',
    kind: 'Secret',
    obj: { metadata: { name: 's' }, type: 'kubernetes.io/service-account-token' },
    want: ['metadata.annotations[kubernetes.io/service-account.name]: Required value'],
  },
  { name: 'basic auth without credentials', kind: 'Secret', obj: { metadata: { name: 's' }, type: 'kubernetes.io/basic-auth', data: {} }, want: ['data[username]: Required value', 'data[password]: Required value'] },
  {
    name: 'a secret over 1 MiB',
    kind: 'Secret',
    obj: { metadata: { name: 's' }, type: 'Opaque', data: { a: Buffer.alloc(1024 * 1024 + 1).toString('base64') } },
    want: ['data: Too long: may not be more than 1048576 bytes'],
  },
]);

test('core/ConfigMap and Secret: immutable objects', () => {
  const cm = { metadata: { name: 'cfg' }, immutable: true, data: { a: '1' } };
  assert.deepEqual(validateUpdate('', 'ConfigMap', mutate(cm, (c) => ((c.data.a = '2'), (c.metadata.labels = { x: 'y' }))), cm).map(String), ['data: Forbidden: field is immutable when `immutable` is set']);
  assert.deepEqual(validateUpdate('', 'ConfigMap', mutate(cm, (c) => (c.immutable = false)), cm).map(String), ['immutable: Forbidden: field is immutable when `immutable` is set']);
  assert.deepEqual(validateUpdate('', 'ConfigMap', mutate(cm, (c) => (c.binaryData = { b: 'eA==' })), cm).map(String), ['binaryData: Forbidden: field is immutable when `immutable` is set']);
  const mutable = { metadata: { name: 'cfg' }, data: { a: '1' } };
  assert.deepEqual(validateUpdate('', 'ConfigMap', mutate(mutable, (c) => (c.data.a = '2')), mutable).map(String), []);
  const s = { metadata: { name: 's' }, type: 'Opaque', immutable: true, data: { a: 'MQ==' } };
  assert.deepEqual(validateUpdate('', 'Secret', mutate(s, (c) => (c.data.a = 'Mg==')), s).map(String), ['data: Forbidden: field is immutable when `immutable` is set']);
  assert.deepEqual(validateUpdate('', 'Secret', mutate(s, (c) => ((c.type = 'kubernetes.io/tls'), (c.data = { a: 'MQ==', 'tls.crt': 'eA==', 'tls.key': 'eA==' }))), s).map(String), [
    'type: Invalid value: "kubernetes.io/tls": field is immutable',
    'data: Forbidden: field is immutable when `immutable` is set',
  ]);
});

// ---- batch ----

check([
  { name: 'a valid job', group: 'batch', kind: 'Job', obj: job(), want: [] },
  {
    name: 'restartPolicy Always',
    group: 'batch',
    kind: 'Job',
    obj: mutate(job(), (j) => (j.spec.template.spec.restartPolicy = 'Always')),
    want: ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
  },
  {
    name: 'counts',
    group: 'batch',
    kind: 'Job',
    obj: job({ parallelism: -1, backoffLimit: -2, activeDeadlineSeconds: -3 }),
    want: [
      'spec.parallelism: Invalid value: -1: must be greater than or equal to 0',
      'spec.activeDeadlineSeconds: Invalid value: -3: must be greater than or equal to 0',
      'spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0',
    ],
  },
  {
    name: 'generated labels missing from the template',
    group: 'batch',
    kind: 'Job',
    obj: job({}, { 'controller-uid': JOB_UID, 'job-name': 'pi', 'batch.kubernetes.io/controller-uid': JOB_UID }),
    want: ["spec.template.metadata.labels[batch.kubernetes.io/job-name]: Required value: must be 'pi'"],
  },
  {
    name: 'an indexed job without completions',
    group: 'batch',
    kind: 'Job',
    obj: job({ completionMode: 'Indexed', completions: undefined, parallelism: 2 }),
    want: ['spec.completions: Required value: when completion mode is Indexed'],
  },
  {
    name: 'a pod failure policy needs restartPolicy Never',
    group: 'batch',
    kind: 'Job',
    obj: mutate(job({ podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [0, 3, 2] } }, { action: 'Explode', onPodConditions: [] }] } }), (j) => (j.spec.template.spec.restartPolicy = 'OnFailure')),
    want: [
      'spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator',
      'spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 3, 2}: must be ordered',
      'spec.podFailurePolicy.rules[1].action: Unsupported value: "Explode": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
      'spec.podFailurePolicy.rules[1]: Invalid value: field.OmitValueType{}: specifying one of OnExitCodes and OnPodConditions is required',
      'spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"',
      'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified',
    ],
  },
  { name: 'a valid cronjob', group: 'batch', kind: 'CronJob', obj: cronJob(), want: [] },
  { name: 'descriptors', group: 'batch', kind: 'CronJob', obj: cronJob({ schedule: '@hourly' }), want: [] },
  { name: '@every', group: 'batch', kind: 'CronJob', obj: cronJob({ schedule: '@every 1h30m' }), want: [] },
  { name: 'names of months and days', group: 'batch', kind: 'CronJob', obj: cronJob({ schedule: '0 9 * JAN-MAR mon-fri' }), want: [] },
  { name: 'a time zone', group: 'batch', kind: 'CronJob', obj: cronJob({ timeZone: 'Europe/Berlin' }), want: [] },
  { name: 'three fields', group: 'batch', kind: 'CronJob', obj: cronJob({ schedule: '* * *' }), want: ['spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]'] },
  { name: 'minute out of range', group: 'batch', kind: 'CronJob', obj: cronJob({ schedule: '60 * * * *' }), want: ['spec.schedule: Invalid value: "60 * * * *": end of range (60) above maximum (59): 60'] },
  { name: 'day of month below range', group: 'batch', kind: 'CronJob', obj: cronJob({ schedule: '0 0 0 * *' }), want: ['spec.schedule: Invalid value: "0 0 0 * *": beginning of range (0) below minimum (1): 0'] },
  { name: 'a reversed range', group: 'batch', kind: 'CronJob', obj: cronJob({ schedule: '5-1 * * * *' }), want: ['spec.schedule: Invalid value: "5-1 * * * *": beginning of range (5) beyond end of range (1): 5-1'] },
  { name: 'a zero step', group: 'batch', kind: 'CronJob', obj: cronJob({ schedule: '*/0 * * * *' }), want: ['spec.schedule: Invalid value: "*/0 * * * *": step of range should be a positive number: */0'] },
  {
    name: 'not a number',
    group: 'batch',
    kind: 'CronJob',
    obj: cronJob({ schedule: 'x * * * *' }),
    want: ['spec.schedule: Invalid value: "x * * * *": failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
  },
  { name: 'an unknown descriptor', group: 'batch', kind: 'CronJob', obj: cronJob({ schedule: '@fortnightly' }), want: ['spec.schedule: Invalid value: "@fortnightly": unrecognized descriptor: @fortnightly'] },
  {
    name: 'a bad duration',
    group: 'batch',
    kind: 'CronJob',
    obj: cronJob({ schedule: '@every 5x' }),
    want: ['spec.schedule: Invalid value: "@every 5x": failed to parse duration @every 5x: time: unknown unit "x" in duration "5x"'],
  },
  {
    name: 'TZ in the schedule',
    group: 'batch',
    kind: 'CronJob',
    obj: cronJob({ schedule: 'CRON_TZ=Europe/Berlin 0 * * * *' }),
    want: ['spec.schedule: Invalid value: "CRON_TZ=Europe/Berlin 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead'],
  },
  {
    name: 'a bad TZ in the schedule',
    group: 'batch',
    kind: 'CronJob',
    obj: cronJob({ schedule: 'TZ=Nowhere/Land 0 * * * *' }),
    want: [
      'spec.schedule: Invalid value: "TZ=Nowhere/Land 0 * * * *": provided bad location Nowhere/Land: unknown time zone Nowhere/Land',
      'spec.schedule: Invalid value: "TZ=Nowhere/Land 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
    ],
  },
  { name: 'an unknown time zone', group: 'batch', kind: 'CronJob', obj: cronJob({ timeZone: 'Mars/Olympus_Mons' }), want: ['spec.timeZone: Invalid value: "Mars/Olympus_Mons": unknown time zone Mars/Olympus_Mons'] },
  {
    name: 'the Local time zone',
    group: 'batch',
    kind: 'CronJob',
    obj: cronJob({ timeZone: 'Local' }),
    want: ['spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'],
  },
  {
    name: 'policies, limits and the job template',
    group: 'batch',
    kind: 'CronJob',
    obj: mutate(cronJob({ concurrencyPolicy: 'Sometimes', startingDeadlineSeconds: -1 }), (c) => {
      c.spec.jobTemplate.spec.selector = { matchLabels: { a: 'b' } };
      c.spec.jobTemplate.spec.template.spec.restartPolicy = 'Always';
    }),
    want: [
      'spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0',
      'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
      'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
      'spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated',
    ],
  },
  {
    name: 'a name too long for its jobs',
    group: 'batch',
    kind: 'CronJob',
    obj: cronJob({}, 'a'.repeat(53)),
    want: [`metadata.name: Invalid value: "${'a'.repeat(53)}": must be no more than 52 characters`],
  },
]);

test('batch/Job: the template, selector and completions are immutable', () => {
  const old = job();
  assert.deepEqual(validateUpdate('batch', 'Job', mutate(old, (j) => (j.spec.template.spec.containers[0].image = 'perl:5')), old).map(String), [
    'spec.template: Invalid value: core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{...}, Spec:core.PodSpec{...}}: field is immutable',
  ]);
  assert.deepEqual(validateUpdate('batch', 'Job', mutate(old, (j) => (j.spec.completions = 3)), old).map(String), ['spec.completions: Invalid value: 3: field is immutable']);
  assert.deepEqual(validateUpdate('batch', 'Job', mutate(old, (j) => (j.spec.selector.matchLabels.extra = 'x')), old).map(String), [
    'spec.template.metadata.labels: Invalid value: map[string]string{"batch.kubernetes.io/controller-uid":"4d9b4f8e-2f7a-4a2b-9a35-6f0e8e8b1c11", "batch.kubernetes.io/job-name":"pi", "controller-uid":"4d9b4f8e-2f7a-4a2b-9a35-6f0e8e8b1c11", "job-name":"pi"}: `selector` does not match template `labels`',
    'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"batch.kubernetes.io/controller-uid":"4d9b4f8e-2f7a-4a2b-9a35-6f0e8e8b1c11", "extra":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
  ]);
  // parallelism and suspend may change; a suspended job that never ran may change its node selector
  assert.deepEqual(validateUpdate('batch', 'Job', mutate(old, (j) => ((j.spec.parallelism = 3), (j.spec.suspend = true))), old).map(String), []);
  const suspended = mutate(old, (j) => (j.spec.suspend = true));
  assert.deepEqual(validateUpdate('batch', 'Job', mutate(suspended, (j) => (j.spec.template.spec.nodeSelector = { zone: 'a' })), suspended).map(String), []);
  // an indexed job may scale completions together with parallelism
  const indexed = job({ completionMode: 'Indexed', completions: 2, parallelism: 2 });
  assert.deepEqual(validateUpdate('batch', 'Job', mutate(indexed, (j) => ((j.spec.completions = 4), (j.spec.parallelism = 4))), indexed).map(String), []);
  assert.deepEqual(validateUpdate('batch', 'Job', mutate(indexed, (j) => (j.spec.completions = 4)), indexed).map(String), ['spec.completions: Invalid value: 4: can only be modified in tandem with spec.parallelism']);
});

test('batch/CronJob: updates', () => {
  const old = cronJob();
  assert.deepEqual(validateUpdate('batch', 'CronJob', mutate(old, (c) => (c.spec.schedule = '0 * * * *')), old).map(String), []);
  assert.deepEqual(validateUpdate('batch', 'CronJob', cronJob({}, 'a'.repeat(60)), cronJob({}, 'a'.repeat(60))).map(String), []);
});

// ---- networking ----

check([
  { name: 'a valid ingress', group: 'networking.k8s.io', kind: 'Ingress', obj: ingress(), want: [] },
  { name: 'no rules and no default backend', group: 'networking.k8s.io', kind: 'Ingress', obj: ingress({ rules: undefined }), want: ['spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified'] },
  {
    name: 'paths',
    group: 'networking.k8s.io',
    kind: 'Ingress',
    obj: ingress({
      rules: [
        {
          host: '10.0.0.1',
          http: {
            paths: [
              { path: '/', backend: { service: { name: 'web', port: { number: 80 } } } },
              { path: '/x', pathType: 'Regex', backend: { service: { name: 'web', port: { number: 80 } } } },
              { path: 'api', pathType: 'Prefix', backend: { service: { name: 'Web', port: {} } } },
              { path: '/a//b/.', pathType: 'Exact', backend: { service: { name: 'web', port: { name: 'http', number: 80 } } } },
            ],
          },
        },
      ],
    }),
    want: [
      'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
      'spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
      'spec.rules[0].http.paths[1].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"',
      'spec.rules[0].http.paths[2].path: Invalid value: "api": must be an absolute path',
      `spec.rules[0].http.paths[2].backend.service.name: Invalid value: "Web": ${DNS1035_MSG}`,
      'spec.rules[0].http.paths[2].backend: Required value: port name or number is required',
      "spec.rules[0].http.paths[3].path: Invalid value: \"/a//b/.\": must not contain '//'",
      "spec.rules[0].http.paths[3].path: Invalid value: \"/a//b/.\": cannot end with '/.'",
      'spec.rules[0].http.paths[3].backend: Invalid value: "": cannot set both port name & port number',
    ],
  },
  {
    name: 'wildcard hosts',
    group: 'networking.k8s.io',
    kind: 'Ingress',
    obj: ingress({ rules: [{ host: '*.*.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] }),
    want: [
      "spec.rules[0].host: Invalid value: \"*.*.example.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ],
  },
  {
    name: 'a valid network policy',
    group: 'networking.k8s.io',
    kind: 'NetworkPolicy',
    obj: { metadata: { name: 'np' }, spec: { podSelector: {}, policyTypes: ['Ingress'], ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }], ports: [{ protocol: 'TCP', port: 80, endPort: 90 }] }] } },
    want: [],
  },
  {
    name: 'network policy peers and ports',
    group: 'networking.k8s.io',
    kind: 'NetworkPolicy',
    obj: {
      metadata: { name: 'np' },
      spec: {
        podSelector: {},
        policyTypes: ['Sideways'],
        ingress: [{ from: [{}, { ipBlock: { cidr: '10.0.0.0/16', except: ['192.168.0.0/24'] }, podSelector: {} }], ports: [{ protocol: 'TCP', port: 0 }, { port: 'http', endPort: 90 }] }],
      },
    },
    want: [
      'spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      'spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` is non-numeric',
      'spec.ingress[0].from[0]: Required value: must specify a peer',
      'spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: "192.168.0.0/24": must be a strict subset of `cidr`',
      'spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer',
      'spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
    ],
  },
  { name: 'an ingress class without controller', group: 'networking.k8s.io', kind: 'IngressClass', obj: { metadata: { name: 'nginx' }, spec: {} }, want: ['spec.controller: Required value'] },
]);

test('networking/IngressClass: the controller is immutable', () => {
  const old = { metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } };
  assert.deepEqual(validateUpdate('networking.k8s.io', 'IngressClass', mutate(old, (c) => (c.spec.controller = 'example.com/other')), old).map(String), [
    'spec.controller: Invalid value: "example.com/other": field is immutable',
  ]);
});

// ---- rbac ----

const RBAC = 'rbac.authorization.k8s.io';
check([
  { name: 'a valid role', group: RBAC, kind: 'Role', obj: { metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }, want: [] },
  {
    name: 'rules',
    group: RBAC,
    kind: 'Role',
    obj: { metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['pods'] }, { verbs: ['get'] }, { verbs: ['get'], nonResourceURLs: ['/healthz'] }] },
    want: [
      'rules[0].verbs: Required value: verbs must contain at least one value',
      'rules[1].apiGroups: Required value: resource rules must supply at least one api group',
      'rules[1].resources: Required value: resource rules must supply at least one resource',
      'rules[2].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs',
    ],
  },
  { name: 'a cluster role with non-resource URLs', group: RBAC, kind: 'ClusterRole', obj: { metadata: { name: 'r' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] }, want: [] },
  {
    name: 'an empty aggregation rule',
    group: RBAC,
    kind: 'ClusterRole',
    obj: { metadata: { name: 'r' }, aggregationRule: { clusterRoleSelectors: [] } },
    want: ['aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil'],
  },
  {
    name: 'role bindings',
    group: RBAC,
    kind: 'RoleBinding',
    obj: {
      metadata: { name: 'b' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Pod', name: '' },
      subjects: [{ kind: 'Robot', name: 'r2' }, { kind: 'User', name: 'alice', apiGroup: 'example.com' }, { kind: 'ServiceAccount', name: 'default', apiGroup: 'v1' }],
    },
    want: [
      'roleRef.kind: Unsupported value: "Pod": supported values: "Role", "ClusterRole"',
      'roleRef.name: Required value',
      'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
      'subjects[1].apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
      'subjects[2].apiGroup: Unsupported value: "v1": supported values: ""',
    ],
  },
  {
    name: 'cluster role bindings',
    group: RBAC,
    kind: 'ClusterRoleBinding',
    obj: { metadata: { name: 'b' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'view' }, subjects: [{ kind: 'ServiceAccount', name: 'default' }] },
    want: ['roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"', 'subjects[0].namespace: Required value'],
  },
]);

test('rbac: roleRef is immutable', () => {
  const old = { metadata: { name: 'b' }, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: RBAC }] };
  assert.deepEqual(validateUpdate(RBAC, 'RoleBinding', mutate(old, (b) => (b.roleRef.name = 'edit')), old).map(String), [
    'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
  ]);
  assert.deepEqual(validateUpdate(RBAC, 'RoleBinding', mutate(old, (b) => b.subjects.push({ kind: 'Group', name: 'devs', apiGroup: RBAC })), old).map(String), []);
});

// ---- policy, scheduling, storage, discovery, coordination, certificates ----

check([
  { name: 'a valid PDB', group: 'policy', kind: 'PodDisruptionBudget', obj: { metadata: { name: 'p' }, spec: { minAvailable: '50%', selector: { matchLabels: { app: 'web' } } } }, want: [] },
  {
    name: 'both minAvailable and maxUnavailable',
    group: 'policy',
    kind: 'PodDisruptionBudget',
    obj: { metadata: { name: 'p' }, spec: { minAvailable: -1, maxUnavailable: '120%' } },
    want: [
      'spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)(0xc000010000), Selector:(*v1.LabelSelector)(nil), MaxUnavailable:(*intstr.IntOrString)(0xc000010000), UnhealthyPodEvictionPolicy:(*policy.UnhealthyPodEvictionPolicyType)(nil)}: minAvailable and maxUnavailable cannot be both set',
      'spec.minAvailable: Invalid value: -1: must be greater than or equal to 0',
      'spec.maxUnavailable: Invalid value: 120%: must not be greater than 100%',
    ],
  },
  { name: 'a user priority too high', group: 'scheduling.k8s.io', kind: 'PriorityClass', obj: { metadata: { name: 'top' }, value: 2000000000 }, want: ['value: Forbidden: maximum allowed value of a user defined priority is 1000000000'] },
  {
    name: 'a reserved name',
    group: 'scheduling.k8s.io',
    kind: 'PriorityClass',
    obj: { metadata: { name: 'system-vip' }, value: 10 },
    want: ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-vip is not a known system priority class"],
  },
  { name: 'a valid storage class', group: 'storage.k8s.io', kind: 'StorageClass', obj: { metadata: { name: 'fast' }, provisioner: 'ebs.csi.aws.com', reclaimPolicy: 'Delete', volumeBindingMode: 'WaitForFirstConsumer' }, want: [] },
  {
    name: 'storage class fields',
    group: 'storage.k8s.io',
    kind: 'StorageClass',
    obj: { metadata: { name: 'fast' }, provisioner: '', reclaimPolicy: 'Recycle', volumeBindingMode: 'Eventually' },
    want: [
      'provisioner: Required value',
      'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
      'volumeBindingMode: Unsupported value: "Eventually": supported values: "Immediate", "WaitForFirstConsumer"',
    ],
  },
  {
    name: 'endpoint slices',
    group: 'discovery.k8s.io',
    kind: 'EndpointSlice',
    obj: { metadata: { name: 'web-abc' }, addressType: 'IPv4', endpoints: [{ addresses: ['fd00::1'] }, { addresses: [] }], ports: [{ name: 'http', protocol: 'TCP', port: 80 }, { name: 'http', protocol: 'TCP', port: 81 }] },
    want: ['endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address', 'endpoints[1].addresses: Required value: must contain at least 1 address', 'ports[1].name: Duplicate value: "http"'],
  },
  { name: 'an unknown address type', group: 'discovery.k8s.io', kind: 'EndpointSlice', obj: { metadata: { name: 's' }, addressType: 'IP' }, want: ['addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"'] },
  {
    name: 'a lease',
    group: 'coordination.k8s.io',
    kind: 'Lease',
    obj: { metadata: { name: 'l' }, spec: { leaseDurationSeconds: 0, leaseTransitions: -1, holderIdentity: 'me' } },
    want: ['spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0', 'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0'],
  },
  {
    name: 'a valid CSR',
    group: 'certificates.k8s.io',
    kind: 'CertificateSigningRequest',
    obj: { metadata: { name: 'alice' }, spec: { request: CSR_PEM_B64, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth', 'digital signature'], expirationSeconds: 86400 } },
    want: [],
  },
  {
    name: 'CSR fields',
    group: 'certificates.k8s.io',
    kind: 'CertificateSigningRequest',
    obj: { metadata: { name: 'alice' }, spec: { request: Buffer.from('not').toString('base64'), signerName: 'alice', usages: [], expirationSeconds: 60 } },
    want: [
      'spec.request: Invalid value: []byte{0x6e, 0x6f, 0x74}: PEM block type must be CERTIFICATE REQUEST',
      'spec.usages: Required value',
      "spec.signerName: Invalid value: \"alice\": must be a fully qualified domain and path of the form 'example.com/signer-name'",
      'spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)',
    ],
  },
  {
    name: 'CSR usages',
    group: 'certificates.k8s.io',
    kind: 'CertificateSigningRequest',
    obj: { metadata: { name: 'alice' }, spec: { request: CSR_PEM_B64, signerName: 'example.com/signer', usages: ['client auth', 'flying', 'client auth'] } },
    want: [
      'spec.usages[1]: Unsupported value: "flying": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"',
      'spec.usages[2]: Duplicate value: "client auth"',
    ],
  },
]);

test('scheduling and storage: immutable fields', () => {
  const pc = { metadata: { name: 'high' }, value: 1000, preemptionPolicy: 'PreemptLowerPriority' };
  assert.deepEqual(validateUpdate('scheduling.k8s.io', 'PriorityClass', mutate(pc, (p) => ((p.value = 2000), (p.preemptionPolicy = 'Never'))), pc).map(String), [
    'value: Forbidden: may not be changed in an update.',
    'preemptionPolicy: Invalid value: "Never": field is immutable',
  ]);
  assert.deepEqual(validateUpdate('scheduling.k8s.io', 'PriorityClass', mutate(pc, (p) => (p.description = 'new')), pc).map(String), []);
  const sc = { metadata: { name: 'fast' }, provisioner: 'ebs.csi.aws.com', parameters: { type: 'gp3' }, reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' };
  assert.deepEqual(
    validateUpdate('storage.k8s.io', 'StorageClass', mutate(sc, (s) => ((s.parameters.type = 'io2'), (s.provisioner = 'other.csi'), (s.reclaimPolicy = 'Retain'), (s.volumeBindingMode = 'WaitForFirstConsumer'))), sc).map(String),
    [
      'parameters: Forbidden: updates to parameters are forbidden.',
      'provisioner: Forbidden: updates to provisioner are forbidden.',
      'reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.',
      'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
    ],
  );
  assert.deepEqual(validateUpdate('storage.k8s.io', 'StorageClass', mutate(sc, (s) => (s.allowVolumeExpansion = true)), sc).map(String), []);
  const es = { metadata: { name: 's' }, addressType: 'IPv4', endpoints: [] };
  assert.deepEqual(validateUpdate('discovery.k8s.io', 'EndpointSlice', mutate(es, (e) => (e.addressType = 'IPv6')), es).map(String), ['addressType: Invalid value: "IPv6": field is immutable']);
});

test('certificates: conditions and the certificate', () => {
  const csr = { metadata: { name: 'alice' }, spec: { request: CSR_PEM_B64, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] }, status: {} };
  const approved = mutate(csr, (c) => (c.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'OK' }] }));
  assert.deepEqual(validateUpdate('certificates.k8s.io', 'CertificateSigningRequest', approved, csr).map(String), ['status.conditions: Forbidden: updates may not add a condition of type "Approved"']);
  assert.deepEqual(validateSubresourceUpdate('certificates.k8s.io', 'CertificateSigningRequest', 'approval', approved, csr).map(String), []);
  const both = mutate(approved, (c) => c.status.conditions.push({ type: 'Denied', status: 'True' }));
  assert.deepEqual(validateSubresourceUpdate('certificates.k8s.io', 'CertificateSigningRequest', 'approval', both, approved).map(String), [
    'status.conditions: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
  ]);
  const withCert = mutate(approved, (c) => (c.status.certificate = Buffer.from('garbage').toString('base64')));
  assert.deepEqual(validateStatusUpdate('certificates.k8s.io', 'CertificateSigningRequest', withCert, approved).map(String), [
    'status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block',
  ]);
});

// ---- storage in the core group ----

function pvc(spec: Record<string, unknown> = {}): any {
  return { metadata: { name: 'data', namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem', ...spec }, status: { phase: 'Pending' } };
}
function pv(spec: Record<string, unknown> = {}): any {
  return { metadata: { name: 'pv1' }, spec: { capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', volumeMode: 'Filesystem', hostPath: { path: '/data', type: '' }, ...spec } };
}

check([
  { name: 'a valid claim', kind: 'PersistentVolumeClaim', obj: pvc(), want: [] },
  {
    name: 'claim fields',
    kind: 'PersistentVolumeClaim',
    obj: pvc({ accessModes: ['ReadWriteSometimes'], resources: { requests: { storage: '0' } }, storageClassName: 'Fast' }),
    want: [
      'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
      'spec.resources[storage]: Invalid value: "0": must be greater than zero',
      `spec.storageClassName: Invalid value: "Fast": ${SUBDOMAIN_MSG}`,
    ],
  },
  {
    name: 'a claim without modes or size',
    kind: 'PersistentVolumeClaim',
    obj: pvc({ accessModes: [], resources: {} }),
    want: ['spec.accessModes: Required value: at least 1 access mode is required', 'spec.resources[storage]: Required value'],
  },
  { name: 'a valid volume', kind: 'PersistentVolume', obj: pv(), want: [] },
  {
    name: 'volume sources',
    kind: 'PersistentVolume',
    obj: pv({ nfs: { server: 'nfs', path: 'exports' }, capacity: undefined }),
    want: [
      'spec.capacity: Required value',
      'spec.capacity: Unsupported value: core.ResourceList(nil): supported values: "storage"',
      'spec.nfs: Forbidden: may not specify more than 1 volume type',
    ],
  },
  { name: 'no volume source', kind: 'PersistentVolume', obj: pv({ hostPath: undefined }), want: ['spec: Required value: must specify a volume type'] },
  {
    name: 'a local volume needs node affinity',
    kind: 'PersistentVolume',
    obj: pv({ hostPath: undefined, local: { path: '/mnt/disks/ssd1' } }),
    want: ['spec.nodeAffinity: Required value: Local volume requires node affinity'],
  },
]);

test('core: claim and volume updates', () => {
  const old = mutate(pvc(), (c) => ((c.spec.volumeName = 'pv1'), (c.status = { phase: 'Bound', capacity: { storage: '1Gi' } })));
  assert.deepEqual(validateUpdate('', 'PersistentVolumeClaim', mutate(old, (c) => (c.spec.resources.requests.storage = '2Gi')), old).map(String), []);
  const modes = validateUpdate('', 'PersistentVolumeClaim', mutate(old, (c) => (c.spec.accessModes = ['ReadWriteMany'])), old).map(String);
  assert.equal(modes.length, 1);
  assert.ok(modes[0]!.startsWith('spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n'), modes[0]);
  assert.deepEqual(validateUpdate('', 'PersistentVolumeClaim', mutate(old, (c) => (c.spec.resources.requests.storage = '512Mi')), old).map(String), [
    'spec.resources.requests.storage: Forbidden: field can not be less than status.capacity',
  ]);
  const unbound = pvc();
  assert.deepEqual(validateUpdate('', 'PersistentVolumeClaim', mutate(unbound, (c) => (c.spec.volumeName = 'pv2')), unbound).map(String), []);
  const vol = pv();
  const moved = validateUpdate('', 'PersistentVolume', mutate(vol, (v) => (v.spec.hostPath.path = '/other')), vol).map(String);
  assert.equal(moved.length, 1);
  assert.ok(moved[0]!.startsWith('spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n'), moved[0]);
  assert.deepEqual(validateUpdate('', 'PersistentVolume', mutate(vol, (v) => (v.spec.volumeMode = 'Block')), vol).map(String), ['volumeMode: Invalid value: "Block": field is immutable']);
  assert.deepEqual(validateUpdate('', 'PersistentVolume', mutate(vol, (v) => (v.spec.persistentVolumeReclaimPolicy = 'Delete')), vol).map(String), []);
});

// ---- the rest of core ----

check([
  { name: 'a namespace finalizer', kind: 'Namespace', obj: { metadata: { name: 'ns' }, spec: { finalizers: ['kubernetes', 'mine'] } }, want: ['spec.finalizers: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified'] },
  {
    name: 'node taints and CIDRs',
    kind: 'Node',
    obj: { metadata: { name: 'n1' }, spec: { podCIDRs: ['10.0.0.0/33'], taints: [{ key: 'a', effect: '' }, { key: 'b', value: 'x', effect: 'NoSchedule' }, { key: 'b', value: 'y', effect: 'NoSchedule' }] } },
    want: [
      'metadata.taints[0].effect: Required value',
      'metadata.taints[2]: Duplicate value: core.Taint{Key:"b", Value:"y", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair',
      'spec.podCIDRs[0]: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ],
  },
  {
    name: 'limit ranges',
    kind: 'LimitRange',
    obj: { metadata: { name: 'lr' }, spec: { limits: [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }, { type: 'Pod', default: { cpu: '1' } }] } },
    want: ["spec.limits[0].min[cpu]: Invalid value: 2: min value 2 is greater than max value 1", "spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod'"],
  },
  {
    name: 'resource quotas',
    kind: 'ResourceQuota',
    obj: { metadata: { name: 'q' }, spec: { hard: { pods: '1.5', widgets: '1' }, scopes: ['BestEffort', 'NotBestEffort'] } },
    want: [
      'spec.hard[pods]: Invalid value: 1500m: must be an integer',
      'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource type or fully qualified',
      'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota',
      'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: conflicting scopes',
    ],
  },
  {
    name: 'a replication controller',
    kind: 'ReplicationController',
    obj: { metadata: { name: 'rc' }, spec: { replicas: 1, selector: { app: 'web' }, template: template({ app: 'web' }, { restartPolicy: 'OnFailure' }) } },
    want: ['spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'],
  },
  {
    name: 'a legacy event in the wrong namespace',
    kind: 'Event',
    obj: { metadata: { name: 'e.1', namespace: 'default' }, involvedObject: { kind: 'Pod', namespace: 'other', name: 'p' }, reason: 'Started', source: {} },
    want: ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
  },
  {
    name: 'an events.k8s.io event',
    group: 'events.k8s.io',
    kind: 'Event',
    obj: { metadata: { name: 'e.2', namespace: 'default' }, eventTime: '2025-05-01T10:00:00.000000Z', regarding: { kind: 'Pod', namespace: 'default', name: 'p' }, type: 'Loud', reportingController: '', reportingInstance: 'i', action: '' },
    want: [
      'reportingController: Required value',
      'reportingController: Invalid value: "": name part must be non-empty',
      `reportingController: Invalid value: "": ${NAME_PART_MSG}`,
      'action: Required value',
      'reason: Required value',
      'type: Invalid value: "": has invalid value: Loud',
    ],
  },
  { name: 'a binding', kind: 'Binding', obj: { metadata: { name: 'p' }, target: { kind: 'Pod', name: '' } }, want: ['target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"', 'target.name: Required value'] },
]);

test('core: node, namespace and quota updates', () => {
  const node = { metadata: { name: 'n1' }, spec: { podCIDRs: ['10.244.1.0/24'], providerID: 'aws:///i-1' } };
  assert.deepEqual(validateUpdate('', 'Node', mutate(node, (n) => ((n.spec.podCIDRs = ['10.244.2.0/24']), (n.spec.providerID = 'aws:///i-2'))), node).map(String), [
    'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
    'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid',
  ]);
  assert.deepEqual(validateUpdate('', 'Node', mutate(node, (n) => (n.spec.unschedulable = true)), node).map(String), []);
  const ns = { metadata: { name: 'ns' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } };
  assert.deepEqual(validateStatusUpdate('', 'Namespace', mutate(ns, (n) => (n.status.phase = 'Terminating')), ns).map(String), [
    "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty",
  ]);
  assert.deepEqual(validateSubresourceUpdate('', 'Namespace', 'finalize', mutate(ns, (n) => (n.spec.finalizers = ['nope'])), ns).map(String), [
    'spec.finalizers[0]: Invalid value: "nope": name is neither a standard finalizer name nor is it fully qualified',
  ]);
  const q = { metadata: { name: 'q' }, spec: { hard: { pods: '10' }, scopes: ['BestEffort'] } };
  assert.deepEqual(validateUpdate('', 'ResourceQuota', mutate(q, (x) => (x.spec.scopes = ['NotTerminating'])), q).map(String), [
    'spec.scopes: Invalid value: []core.ResourceQuotaScope{"NotTerminating"}: field is immutable',
  ]);
  const ev = { metadata: { name: 'e', namespace: 'default' }, eventTime: '2025-05-01T10:00:00.000000Z', regarding: { kind: 'Pod', namespace: 'default', name: 'p' }, reason: 'Started', note: 'a', type: 'Normal', reportingController: 'kubelet', reportingInstance: 'n1', action: 'Start' };
  assert.deepEqual(validateUpdate('events.k8s.io', 'Event', mutate(ev, (e) => (e.note = 'b')), ev).map(String), ['message: Invalid value: "b": field is immutable']);
});

// ---- name rules ----

test('object-name rules', () => {
  assert.equal(nameRuleFor('', 'Namespace'), 'label');
  assert.equal(nameRuleFor('', 'Service'), 'dns1035');
  assert.equal(nameRuleFor('', 'Pod'), 'subdomain');
  assert.equal(nameRuleFor('', 'ConfigMap'), 'subdomain');
  assert.equal(nameRuleFor('apps', 'StatefulSet'), 'label');
  assert.equal(nameRuleFor('apps', 'Deployment'), 'subdomain');
  for (const k of ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']) assert.equal(nameRuleFor(RBAC, k), 'path');
  assert.equal(nameRuleFor('certificates.k8s.io', 'CertificateSigningRequest'), 'path');
});

test('label and annotation keys: a key checked once is answered the same on every later write', async () => {
  const { validateLabels, validateAnnotations } = await import('../../src/machinery/validation.js');
  const keys = ['app', 'app.kubernetes.io/name', 'example.com/', '/x', 'a/b/c', 'Bad Key', 'x'.repeat(64), 'ok_key.1', 'UPPER.example.com/x'];
  const labels = Object.fromEntries(keys.map((k, i) => [k, i % 2 ? 'v' : 'bad value!']));
  const annotations = Object.fromEntries(keys.map((k) => [k, 'v']));
  const first = [validateLabels(labels, 'metadata.labels'), validateAnnotations(annotations, 'metadata.annotations')];
  assert.ok(first[0].length > 0 && first[1].length > 0);
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(validateLabels(labels, 'metadata.labels'), first[0]);
    assert.deepEqual(validateAnnotations(annotations, 'metadata.annotations'), first[1]);
  }
  // the uppercase prefix is invalid for a label key but valid for an annotation's (checked in lower case)
  assert.ok(first[0].some((e) => e.field === 'metadata.labels' && e.value === 'UPPER.example.com/x'));
  assert.ok(!first[1].some((e) => e.value === 'UPPER.example.com/x'));
});
