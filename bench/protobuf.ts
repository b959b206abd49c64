// Protobuf codec benchmark: a typical Pod encoded and decoded, and a 10,000-Pod list built from
// cached item encodings, each beside JSON.stringify/JSON.parse of the same object.
// Prints one JSON document. Run: node scripts/build.mjs && node dist/bench/protobuf.js
import { pathToFileURL } from 'node:url';
import {
  decodeEnvelope,
  decodeMessage,
  decodeObject,
  encodeListObjectChunks,
  encodeListObjectFromItems,
  encodeMessage,
  encodeObject,
  encodeWatchEventFrame,
} from '../src/codec/protobuf.js';

const POD = 'io.k8s.api.core.v1.Pod';

/** a Pod as the API server returns it once it runs: spec, status, managedFields */
export function typicalPod(i: number): Record<string, unknown> {
  const name = `web-7d4b9c6f5-${(100000 + i).toString(36)}`;
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name,
      generateName: 'web-7d4b9c6f5-',
      namespace: 'default',
      uid: `5f0c8a52-9d1e-4c7b-8f3a-${(1e11 + i).toString(16).padStart(12, '0')}`,
      resourceVersion: String(100000 + i),
      creationTimestamp: '2025-03-01T10:00:00Z',
      labels: { app: 'web', 'pod-template-hash': '7d4b9c6f5', tier: 'frontend' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2025-03-01T09:59:00Z' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4b9c6f5', uid: '0b6a1c3e-2f4d-4e5f-8a9b-0c1d2e3f4a5b', controller: true, blockOwnerDeletion: true },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2025-03-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {} }, 'f:ownerReferences': { '.': {}, 'k:{"uid":"0b6a1c3e-2f4d-4e5f-8a9b-0c1d2e3f4a5b"}': {} } },
            'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': {}, 'f:resources': {} } } },
          },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2025-03-01T10:00:05Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { 'f:conditions': {}, 'f:containerStatuses': {}, 'f:hostIP': {}, 'f:phase': {}, 'f:podIP': {}, 'f:startTime': {} } },
          subresource: 'status',
        },
      ],
    },
    spec: {
      volumes: [
        { name: 'config', configMap: { name: 'web-config', defaultMode: 420 } },
        {
          name: 'kube-api-access-abcde',
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
            ],
            defaultMode: 420,
          },
        },
      ],
      containers: [
        {
          name: 'web',
          image: 'registry.example.com/web:1.4.2',
          args: ['--port=8080', '--log-level=info'],
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            { name: 'MODE', value: 'production' },
          ],
          resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
          volumeMounts: [
            { name: 'config', readOnly: true, mountPath: '/etc/web' },
            { name: 'kube-api-access-abcde', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
          ],
          livenessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
          readinessProbe: { tcpSocket: { port: 8080 }, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 3 },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      nodeName: `node-${i % 50}`,
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-03-01T10:00:01Z' },
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-03-01T10:00:05Z' },
        { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-03-01T10:00:05Z' },
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-03-01T10:00:00Z' },
      ],
      hostIP: '10.0.0.12',
      hostIPs: [{ ip: '10.0.0.12' }],
      podIP: `10.244.${i % 250}.${i % 200}`,
      podIPs: [{ ip: `10.244.${i % 250}.${i % 200}` }],
      startTime: '2025-03-01T10:00:01Z',
      containerStatuses: [
        {
          name: 'web',
          state: { running: { startedAt: '2025-03-01T10:00:03Z' } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: 'registry.example.com/web:1.4.2',
          imageID: 'registry.example.com/web@sha256:4b1f0d4c3e2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c',
          containerID: 'containerd://9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b',
          started: true,
        },
      ],
      qosClass: 'Burstable',
    },
  };
}

function timeIt(fn: () => void, minMs = 500): { opsPerSec: number; usPerOp: number } {
  for (let i = 0; i < 3000; i++) fn(); // warm up: let the generated code reach its optimized tier
  let n = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  let batch = 1;
  while (elapsed < minMs) {
    for (let i = 0; i < batch; i++) fn();
    n += batch;
    batch = Math.min(batch * 2, 4096);
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  const us = (elapsed * 1000) / n;
  return { opsPerSec: Math.round(1e6 / us), usPerOp: +us.toFixed(3) };
}

function once(fn: () => void, runs = 5): number {
  fn();
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    fn();
    best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e6);
  }
  return +best.toFixed(2);
}

function main(): void {
  const pod = typicalPod(1);
  const podBody = encodeObject(pod);
  const podMsg = decodeEnvelope(podBody).raw;
  const podJson = JSON.stringify(pod);

  const single = {
    podProtoBytes: podBody.length,
    podJsonBytes: Buffer.byteLength(podJson),
    encodeObject: timeIt(() => encodeObject(pod)),
    encodeMessage: timeIt(() => encodeMessage(POD, pod)),
    jsonStringify: timeIt(() => JSON.stringify(pod)),
    decodeObject: timeIt(() => decodeObject(podBody)),
    decodeMessage: timeIt(() => decodeMessage(POD, podMsg)),
    jsonParse: timeIt(() => JSON.parse(podJson)),
  };

  const N = 10000;
  const pods = Array.from({ length: N }, (_, i) => typicalPod(i));
  const itemMsgs = pods.map((p) => encodeMessage(POD, p));
  const itemJson = pods.map((p) => JSON.stringify(p));
  const listMeta = { resourceVersion: '123456' };
  let listBody: Uint8Array = new Uint8Array(0);
  const list = {
    items: N,
    encodeItemsMs: once(() => {
      for (const p of pods) encodeMessage(POD, p);
    }, 2),
    listFromCachedItemsMs: once(() => {
      listBody = encodeListObjectFromItems('v1', 'PodList', listMeta, itemMsgs);
    }),
    listChunksFromCachedItemsMs: once(() => {
      let n = 0;
      for (const c of encodeListObjectChunks('v1', 'PodList', listMeta, itemMsgs)) n += c.length;
      if (n !== listBody.length) throw new Error('chunk sizes differ');
    }),
    jsonListFromCachedItemsMs: once(() => {
      `{"kind":"PodList","apiVersion":"v1","metadata":${JSON.stringify(listMeta)},"items":[${itemJson.join(',')}]}`;
    }),
    jsonStringifyListMs: once(() => {
      JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: listMeta, items: pods });
    }, 2),
    listProtoBytes: listBody.length,
    listJsonBytes: Buffer.byteLength(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: listMeta, items: pods })),
    decodeListMs: once(() => decodeObject(listBody), 2),
    jsonParseListMs: (() => {
      const s = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: listMeta, items: pods });
      return once(() => JSON.parse(s), 2);
    })(),
  };

  const watch = {
    watchFrameFromCachedBody: timeIt(() => encodeWatchEventFrame('MODIFIED', podBody)),
  };

  process.stdout.write(JSON.stringify({ benchmark: 'protobuf', node: process.version, single, list, watch }, null, 2) + '\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
