// Objects for the CBOR codec tests (imported by cbor.test.ts, cbor-independent.test.ts and
// cbor-malformed.test.ts; this module declares no tests of its own). Each is in the JSON form
// Kubernetes prints (json.ts normalize leaves it unchanged), so decode(encode(x)) must give x.

/** the canonical type name of each fixture */
export const TYPES = {
  pod: 'io.k8s.api.core.v1.Pod',
  deployment: 'io.k8s.api.apps.v1.Deployment',
  secret: 'io.k8s.api.core.v1.Secret',
  lease: 'io.k8s.api.coordination.v1.Lease',
  crd: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
  controllerRevision: 'io.k8s.api.apps.v1.ControllerRevision',
  csr: 'io.k8s.api.certificates.v1.CertificateSigningRequest',
  hpa: 'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler',
  event: 'io.k8s.api.events.v1.Event',
} as const;

export type FixtureName = keyof typeof TYPES;

type Obj = Record<string, any>;

export function pod(): Obj {
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name: 'web-0',
      generateName: 'web-',
      namespace: 'prod',
      uid: '5a0c7a6e-1b2c-4d3e-8f90-0a1b2c3d4e5f',
      resourceVersion: '918273',
      generation: 2,
      creationTimestamp: '2025-04-01T08:30:00Z',
      deletionGracePeriodSeconds: 30,
      labels: { app: 'web', 'app.kubernetes.io/component': 'frontend', tier: 'a' },
      annotations: { 'example.com/note': 'grüße ✓ 😀', empty: '' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'owner-uid', controller: true, blockOwnerDeletion: true }],
      finalizers: ['example.com/protect'],
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2025-04-01T08:30:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:ports': { 'k:{"containerPort":8080,"protocol":"TCP"}': {} } } } } },
        },
        { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time: '2025-04-01T08:30:05Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:phase': {} } }, subresource: 'status' },
      ],
    },
    spec: {
      volumes: [
        { name: 'config', configMap: { name: 'web-config', items: [{ key: 'app.yaml', path: 'app.yaml', mode: 256 }], defaultMode: 420 } },
        { name: 'tls', secret: { secretName: 'web-tls', defaultMode: 288, optional: false } },
        { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
      ],
      initContainers: [{ name: 'init', image: 'busybox:1.36', command: ['sh', '-c', 'echo ready'], resources: {}, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent' }],
      containers: [
        {
          name: 'web',
          image: 'nginx:1.27',
          args: ['--port=8080'],
          workingDir: '/srv',
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { containerPort: 9090, hostPort: 19090, protocol: 'UDP' }],
          env: [
            { name: 'MODE', value: 'production' },
            { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
            { name: 'LIMIT', valueFrom: { resourceFieldRef: { containerName: 'web', resource: 'limits.memory', divisor: '1Mi' } } },
          ],
          resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '250m', memory: '128Mi', 'ephemeral-storage': '1Gi' } },
          volumeMounts: [{ name: 'config', readOnly: true, mountPath: '/etc/web' }, { name: 'tls', mountPath: '/etc/tls', subPath: 'tls.crt' }],
          livenessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP', httpHeaders: [{ name: 'X-Probe', value: '1' }] }, initialDelaySeconds: 5, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
          readinessProbe: { tcpSocket: { port: 'http' }, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: 10 },
          lifecycle: { preStop: { exec: { command: ['nginx', '-s', 'quit'] } } },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
          securityContext: { capabilities: { drop: ['ALL'] }, runAsUser: 101, runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      activeDeadlineSeconds: 9007199254740991,
      dnsPolicy: 'ClusterFirst',
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      serviceAccountName: 'web',
      serviceAccount: 'web',
      nodeName: 'node-1',
      securityContext: { fsGroup: 101, sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] },
      hostname: 'web-0',
      subdomain: 'web',
      affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] }, topologyKey: 'kubernetes.io/hostname' } }] } },
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' },
      ],
      priorityClassName: 'high',
      priority: -5,
      dnsConfig: { nameservers: ['10.0.0.10'], options: [{ name: 'ndots', value: '2' }] },
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
      overhead: { cpu: '10m' },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }],
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-04-01T08:30:01Z' },
        { type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: '2025-04-01T08:30:09Z', reason: 'ContainersNotReady', message: 'containers with unready status: [web]' },
      ],
      hostIP: '192.168.1.10',
      hostIPs: [{ ip: '192.168.1.10' }],
      podIP: '10.244.1.7',
      podIPs: [{ ip: '10.244.1.7' }, { ip: 'fd00::7' }],
      startTime: '2025-04-01T08:30:00Z',
      initContainerStatuses: [{ name: 'init', state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: '2025-04-01T08:30:01Z', finishedAt: '2025-04-01T08:30:02Z', containerID: 'containerd://aa' } }, lastState: {}, ready: true, restartCount: 0, image: 'docker.io/library/busybox:1.36', imageID: 'docker.io/library/busybox@sha256:00', containerID: 'containerd://aa', started: false }],
      containerStatuses: [{ name: 'web', state: { running: { startedAt: '2025-04-01T08:30:03Z' } }, lastState: { terminated: { exitCode: 137, signal: 9, reason: 'OOMKilled', startedAt: '2025-04-01T08:00:00Z', finishedAt: '2025-04-01T08:29:59Z' } }, ready: false, restartCount: 4, image: 'docker.io/library/nginx:1.27', imageID: 'docker.io/library/nginx@sha256:11', containerID: 'containerd://bb', started: true }],
      qosClass: 'Burstable',
    },
  };
}
export function deployment(): Obj {
  return {
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    metadata: { name: 'web', namespace: 'prod', uid: 'd-uid', resourceVersion: '77', generation: 4, creationTimestamp: '2025-04-01T08:00:00Z', labels: { app: 'web' }, annotations: { 'deployment.kubernetes.io/revision': '3' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { creationTimestamp: null, labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27', resources: {}, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent' }], restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', securityContext: {}, schedulerName: 'default-scheduler' },
      },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 1 } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
    status: {
      observedGeneration: 4,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      unavailableReplicas: 1,
      conditions: [{ type: 'Available', status: 'True', lastUpdateTime: '2025-04-01T08:01:00Z', lastTransitionTime: '2025-04-01T08:01:00Z', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' }],
    },
  };
}
export function secret(): Obj {
  return {
    kind: 'Secret',
    apiVersion: 'v1',
    metadata: { name: 'tls', namespace: 'prod', creationTimestamp: '2025-04-01T08:00:00Z' },
    immutable: true,
    data: { 'tls.crt': Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64'), 'tls.key': Buffer.from([0, 1, 2, 253, 254, 255]).toString('base64'), empty: '', big: Buffer.alloc(300, 7).toString('base64') },
    type: 'kubernetes.io/tls',
  };
}
export function lease(): Obj {
  return {
    kind: 'Lease',
    apiVersion: 'coordination.k8s.io/v1',
    metadata: { name: 'kube-scheduler', namespace: 'kube-system', resourceVersion: '5', creationTimestamp: '2025-04-01T08:00:00Z' },
    spec: { holderIdentity: 'node-1_0f1e', leaseDurationSeconds: 15, acquireTime: '2025-04-01T08:00:00.000000Z', renewTime: '2025-04-01T08:10:07.123456Z', leaseTransitions: 2 },
  };
}
export function crd(): Obj {
  return {
    kind: 'CustomResourceDefinition',
    apiVersion: 'apiextensions.k8s.io/v1',
    metadata: { name: 'widgets.example.com', creationTimestamp: null },
    spec: {
      group: 'example.com',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wd'] },
      scope: 'Namespaced',
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: {
              type: 'object',
              required: ['size'],
              properties: {
                size: { type: 'integer', minimum: 1, maximum: 100.5, multipleOf: 0.1, default: 3 },
                ratio: { type: 'number', minimum: -0.5, exclusiveMinimum: true },
                tags: { type: 'array', items: { type: 'string' }, maxItems: 10 },
                mode: { type: 'string', enum: ['a', 'b', 7, null], default: 'a' },
                labels: { type: 'object', additionalProperties: { type: 'string' } },
                free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, additionalProperties: false },
                tuple: { items: [{ type: 'string' }, { type: 'integer' }] },
              },
              dependencies: { size: ['ratio'], tags: { required: ['mode'] } },
            },
          },
        } },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size' } },
        additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size', priority: 1 }],
      }],
      conversion: { strategy: 'None' },
    },
    status: { conditions: [{ type: 'Established', status: 'True', lastTransitionTime: '2025-04-01T08:00:00Z', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }], acceptedNames: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wd'] }, storedVersions: ['v1'] },
  };
}
export function controllerRevision(): Obj {
  return {
    kind: 'ControllerRevision',
    apiVersion: 'apps/v1',
    metadata: { name: 'web-5d8f', namespace: 'prod', creationTimestamp: '2025-04-01T08:00:00Z' },
    data: { spec: { template: { $patch: 'replace', metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80 }] }] } } }, ratio: 0.25, big: 12345678901 },
    revision: 3,
  };
}
export function csr(): Obj {
  return {
    kind: 'CertificateSigningRequest',
    apiVersion: 'certificates.k8s.io/v1',
    metadata: { name: 'node-csr', creationTimestamp: '2025-04-01T08:00:00Z' },
    spec: { request: Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n').toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', expirationSeconds: 86400, usages: ['digital signature', 'client auth'], username: 'system:node:n1', groups: ['system:nodes'], extra: { 'example.com/x': ['a', 'b'] } },
    status: { conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'ok', lastUpdateTime: '2025-04-01T08:00:01Z', lastTransitionTime: '2025-04-01T08:00:01Z' }], certificate: Buffer.from([0x30, 0x82, 0x01, 0x0a]).toString('base64') },
  };
}
export function hpa(): Obj {
  return {
    kind: 'HorizontalPodAutoscaler',
    apiVersion: 'autoscaling/v2',
    metadata: { name: 'web', namespace: 'prod', creationTimestamp: '2025-04-01T08:00:00Z' },
    spec: { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: 2, maxReplicas: 10, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }, { type: 'Pods', pods: { metric: { name: 'rps' }, target: { type: 'AverageValue', averageValue: '1500m' } } }], behavior: { scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }] } } },
    status: { lastScaleTime: '2025-04-01T08:05:00Z', currentReplicas: 3, desiredReplicas: 3, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageValue: '180m', averageUtilization: 72 } } }], conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2025-04-01T08:00:30Z', reason: 'ReadyForNewScale' }] },
  };
}
export function event(): Obj {
  return {
    kind: 'Event',
    apiVersion: 'events.k8s.io/v1',
    metadata: { name: 'web-0.17f', namespace: 'prod', creationTimestamp: '2025-04-01T08:00:00Z' },
    eventTime: '2025-04-01T08:00:00.654321Z',
    series: { count: 3, lastObservedTime: '2025-04-01T08:03:00.000001Z' },
    reportingController: 'kubelet',
    reportingInstance: 'node-1',
    action: 'Pulling',
    reason: 'Pulling',
    regarding: { kind: 'Pod', namespace: 'prod', name: 'web-0', uid: 'p-uid', apiVersion: 'v1', resourceVersion: '9', fieldPath: 'spec.containers{web}' },
    note: 'Pulling image "nginx:1.27"',
    type: 'Normal',
    deprecatedSource: {},
    deprecatedFirstTimestamp: null,
    deprecatedLastTimestamp: null,
  };
}

export const FIXTURES: Record<FixtureName, () => Obj> = { pod, deployment, secret, lease, crd, controllerRevision, csr, hpa, event };

/** where each fixture holds Go []byte values (JSON base64), as paths of keys; '*' is every value of a map */
export const BYTES_PATHS: Partial<Record<FixtureName, string[][]>> = {
  secret: [['data', '*']],
  csr: [
    ['spec', 'request'],
    ['status', 'certificate'],
  ],
};

/** a meta.k8s.io Status as the API server sends it */
export function status(): Obj {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'pods "web-0" not found',
    reason: 'NotFound',
    details: { name: 'web-0', kind: 'pods', causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'spec.x' }], retryAfterSeconds: 2 },
    code: 404,
  };
}

/** a meta.k8s.io Table (schemaless: cells are free-form values) */
export function table(): Obj {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: '918273' },
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
      { name: 'Ready', type: 'string', format: '', description: 'The aggregate readiness state of this pod for accepting traffic.', priority: 0 },
      { name: 'Restarts', type: 'string', format: '', description: 'The number of times the containers in this pod have been restarted.', priority: 0 },
      { name: 'Ratio', type: 'number', format: 'float', description: 'a float column', priority: 1 },
    ],
    rows: [
      { cells: ['web-0', '1/1', 4, 0.75], object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'web-0', namespace: 'prod', creationTimestamp: '2025-04-01T08:30:00Z' } } },
      { cells: ['web-1', '0/1', 0, null], conditions: [{ type: 'Completed', status: 'False' }], object: null },
    ],
  };
}
