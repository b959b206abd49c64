// An independent check of the codec's bytes: protobufjs reads them with our own minimal .proto
// declarations (test/codec/fixtures/*.proto, names/numbers/types only), field by field, and
// writes messages the codec must read. Also the watch stream framing, read without the codec.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  PROTOBUF_PREFIX,
  WatchFrameDecoder,
  decodeMessage,
  decodeObject,
  decodeWatchEvent,
  decodeWatchEventFrames,
  encodeListObjectFromItems,
  encodeMessage,
  encodeObject,
  encodeWatchEventFrame,
  encodeWatchEventFrameForObject,
} from '../../src/codec/protobuf.js';
import { KUBECTL_CONFIGMAP_B64, deployment, has, lease, pbDecode, pbType, richPod, secret, service, statusError } from './fixtures/protobuf-objects.js';

const secondsOf = (rfc3339: string) => Date.parse(rfc3339) / 1000;
const POD = 'io.k8s.api.core.v1.Pod';

describe('protobufjs reads what we write', () => {
  test('the envelope: prefix, then runtime.Unknown', () => {
    const body = encodeObject(richPod());
    assert.deepEqual([...body.subarray(0, 4)], [...PROTOBUF_PREFIX]);
    const unk = pbType('k8s.io.apimachinery.pkg.runtime.Unknown').decode(body.subarray(4)) as any;
    assert.equal(unk.typeMeta.apiVersion, 'v1');
    assert.equal(unk.typeMeta.kind, 'Pod');
    assert.ok(has(unk, 'contentEncoding') && unk.contentEncoding === '', 'contentEncoding written, empty');
    assert.ok(has(unk, 'contentType') && unk.contentType === '', 'contentType written, empty');
    assert.equal(Buffer.from(unk.raw).toString('hex'), Buffer.from(encodeMessage(POD, richPod())).toString('hex'));
  });

  test('a Pod, field by field', () => {
    const pod = richPod();
    const m = pbDecode('k8s.io.api.core.v1.Pod', encodeMessage(POD, pod));
    const md = m.metadata;
    assert.equal(md.name, 'web-0');
    assert.equal(md.generation, 1);
    assert.deepEqual(md.labels, { app: 'web', tier: 'frontend' });
    assert.equal(md.annotations.note, 'ünïcödé ✓ 😀');
    assert.deepEqual(md.creationTimestamp, { seconds: secondsOf('2025-03-01T10:00:00Z'), nanos: 0 });
    assert.deepEqual(md.ownerReferences, [{ kind: 'StatefulSet', name: 'web', uid: 'u-0', apiVersion: 'apps/v1', controller: true, blockOwnerDeletion: true }]);
    assert.deepEqual(md.finalizers, ['example.com/cleanup']);
    const mf = md.managedFields[0];
    assert.equal(mf.manager, 'kubectl-create');
    assert.deepEqual(mf.time, { seconds: secondsOf('2025-03-01T10:00:00Z'), nanos: 0 });
    assert.deepEqual(JSON.parse(Buffer.from(mf.fieldsV1.Raw).toString()), pod.metadata.managedFields[0].fieldsV1);
    // Go writes every non-pointer field, zero or not; pointers only when set
    assert.ok(has(md, 'generateName') && md.generateName === '');
    assert.ok(has(md, 'selfLink') && md.selfLink === '');
    assert.ok(!has(md, 'deletionTimestamp') && !has(md, 'deletionGracePeriodSeconds'));

    const spec = m.spec;
    assert.equal(spec.volumes[0].name, 'cfg');
    assert.deepEqual(spec.volumes[0].volumeSource.configMap, { localObjectReference: { name: 'web-config' }, defaultMode: 420, optional: false });
    assert.deepEqual(spec.volumes[1].volumeSource.emptyDir, { medium: 'Memory', sizeLimit: { string: '64Mi' } });
    assert.deepEqual(spec.volumes[2].volumeSource.secret, { secretName: 'web-tls', defaultMode: 256 });
    assert.ok(!has(spec.volumes[0].volumeSource, 'emptyDir'));

    const c = spec.containers[0];
    assert.equal(c.name, 'web');
    assert.deepEqual(c.args, ['-g', 'daemon off;']);
    assert.ok(has(c, 'workingDir') && c.workingDir === '');
    assert.deepEqual(c.ports[0], { name: 'http', hostPort: 0, containerPort: 8080, protocol: 'TCP', hostIP: '' });
    assert.deepEqual(c.ports[1], { name: '', hostPort: 19090, containerPort: 9090, protocol: 'UDP', hostIP: '0.0.0.0' });
    assert.deepEqual(c.env[0], { name: 'A', value: 'x' });
    assert.deepEqual(c.resources.limits, { cpu: { string: '500m' }, memory: { string: '256Mi' } });
    assert.deepEqual(c.resources.requests['nvidia.com/gpu'], { string: '1' });
    assert.deepEqual(c.livenessProbe.handler.httpGet.port, { type: 1, intVal: 0, strVal: 'http' });
    assert.equal(c.livenessProbe.handler.httpGet.path, '/healthz');
    assert.deepEqual(c.readinessProbe.handler.tcpSocket.port, { type: 0, intVal: 8080, strVal: '' });
    assert.equal(c.readinessProbe.terminationGracePeriodSeconds, 0);
    assert.equal(c.imagePullPolicy, 'IfNotPresent');

    assert.equal(spec.restartPolicy, 'Always');
    assert.equal(spec.terminationGracePeriodSeconds, 30);
    assert.deepEqual(spec.nodeSelector, { 'kubernetes.io/os': 'linux' });
    assert.equal(spec.hostNetwork, true);
    assert.equal(spec.priority, -10);
    assert.deepEqual(spec.tolerations[0], { key: 'node.kubernetes.io/not-ready', operator: 'Exists', value: '', effect: 'NoExecute', tolerationSeconds: 300 });
    assert.deepEqual(spec.tolerations[1], { key: '', operator: 'Exists', value: '', effect: '' });
    assert.equal(m.status.phase, 'Running');
    assert.deepEqual(m.status.startTime, { seconds: secondsOf('2025-03-01T10:00:01Z'), nanos: 0 });
  });

  test('a negative int32 is a ten-byte varint, as Go writes it', () => {
    const msg = encodeMessage('io.k8s.api.core.v1.PodSpec', { priority: -10 });
    const tag = (25 << 3) | 0;
    const at = Buffer.from(msg).indexOf(Buffer.from([tag & 0x7f | 0x80, tag >> 7]));
    assert.ok(at >= 0);
    assert.equal(Buffer.from(msg.subarray(at + 2, at + 12)).toString('hex'), 'f6ffffffffffffffff01');
  });

  test('Deployment, Service, Secret, Status, Lease', () => {
    const d = pbDecode('k8s.io.api.apps.v1.Deployment', encodeMessage('io.k8s.api.apps.v1.Deployment', deployment()));
    assert.equal(d.spec.replicas, 3);
    assert.deepEqual(d.spec.selector, { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] });
    assert.equal(d.spec.template.spec.containers[0].image, 'nginx');
    assert.equal(d.spec.revisionHistoryLimit, 10);
    assert.equal(d.spec.paused, false);

    const s = pbDecode('k8s.io.api.core.v1.Service', encodeMessage('io.k8s.api.core.v1.Service', service()));
    assert.deepEqual(s.spec.ports[0].targetPort, { type: 1, intVal: 0, strVal: 'http' });
    assert.deepEqual(s.spec.ports[1].targetPort, { type: 0, intVal: 9090, strVal: '' });
    assert.equal(s.spec.ports[1].nodePort, 30090);
    assert.equal(s.spec.type, 'NodePort');

    const sec = pbDecode('k8s.io.api.core.v1.Secret', encodeMessage('io.k8s.api.core.v1.Secret', secret()));
    assert.deepEqual([...sec.data['tls.key']], [0, 1, 2, 254, 255]);
    assert.equal(sec.data.empty.length, 0);
    assert.equal(sec.type, 'kubernetes.io/tls');
    assert.ok(!has(sec, 'immutable'));

    const st = pbDecode('k8s.io.apimachinery.pkg.apis.meta.v1.Status', encodeMessage('io.k8s.apimachinery.pkg.apis.meta.v1.Status', statusError()));
    assert.equal(st.code, 422);
    assert.equal(st.reason, 'Invalid');
    assert.equal(st.details.retryAfterSeconds, 2);
    assert.deepEqual(st.details.causes[1], { reason: 'FieldValueInvalid', message: 'Invalid value: "x"', field: 'metadata.name' });
    assert.deepEqual(st.metadata, { selfLink: '', resourceVersion: '', continue: '' });

    const l = pbDecode('k8s.io.api.coordination.v1.Lease', encodeMessage('io.k8s.api.coordination.v1.Lease', lease()));
    assert.deepEqual(l.spec.acquireTime, { seconds: secondsOf('2025-03-01T10:00:00Z'), nanos: 123456000 });
    assert.deepEqual(l.spec.renewTime, { seconds: -1, nanos: 1000 });
    assert.equal(l.spec.leaseTransitions, 0);
  });

  test('maps are written sorted by key bytes, as Go sorts them', () => {
    // UTF-16 order puts U+1F600 (a surrogate pair) before U+FFFD; UTF-8 byte order puts it after
    const labels = { b: '2', '\uFFFD': 'r', '😀': 'e', a: '1', A: '0' };
    const msg = encodeMessage('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', { labels });
    const t = pbType('k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    assert.deepEqual(Object.keys((t.decode(msg) as any).labels), ['A', 'a', 'b', '\uFFFD', '😀']);
  });

  test('the wrapper slice of APIResource.verbs', () => {
    const list = { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'v1', resources: [{ name: 'pods', kind: 'Pod', verbs: ['get', 'list'] }, { name: 'b', kind: 'B', verbs: [] }, { name: 'c', kind: 'C' }] };
    const m = pbDecode('k8s.io.apimachinery.pkg.apis.meta.v1.APIResourceList', encodeMessage('io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList', list));
    assert.deepEqual(m.resources[0].verbs, { items: ['get', 'list'] });
    assert.ok(has(m.resources[1], 'verbs'), 'an empty slice is written as an empty wrapper');
    assert.ok(!has(m.resources[2], 'verbs'), 'a nil slice is not written');
  });

  test('a list built from cached items', () => {
    const pods = [richPod(), richPod()];
    const body = encodeListObjectFromItems('v1', 'PodList', { resourceVersion: '9', remainingItemCount: 0 }, pods.map((p) => encodeMessage(POD, p)));
    const unk = pbType('k8s.io.apimachinery.pkg.runtime.Unknown').decode(body.subarray(4)) as any;
    assert.equal(unk.typeMeta.kind, 'PodList');
    const list = pbDecode('k8s.io.api.core.v1.PodList', unk.raw);
    assert.deepEqual(list.metadata, { selfLink: '', resourceVersion: '9', continue: '', remainingItemCount: 0 });
    assert.equal(list.items.length, 2);
    assert.equal(list.items[1].spec.containers[0].ports[0].containerPort, 8080);
  });
});

describe('we read what protobufjs writes', () => {
  test('a Pod written by protobufjs', () => {
    const t = pbType('k8s.io.api.core.v1.Pod');
    const bytes = t
      .encode(
        t.fromObject({
          metadata: { name: 'p', namespace: 'ns', labels: { z: '1', a: '2' }, creationTimestamp: { seconds: 1700000000, nanos: 999 } },
          spec: {
            containers: [
              {
                name: 'c',
                image: 'img',
                ports: [{ containerPort: 80 }],
                resources: { limits: { cpu: { string: '2' } } },
                livenessProbe: { handler: { httpGet: { port: { type: 1, strVal: 'web' } } }, periodSeconds: 7 },
              },
            ],
            volumes: [{ name: 'v', volumeSource: { emptyDir: {} } }],
            tolerations: [{ key: 'k', tolerationSeconds: -5 }],
            priority: -1,
          },
        }),
      )
      .finish();
    const pod = decodeMessage(POD, bytes);
    assert.deepStrictEqual(pod, {
      metadata: { name: 'p', namespace: 'ns', creationTimestamp: '2023-11-14T22:13:20Z', labels: { z: '1', a: '2' } },
      spec: {
        volumes: [{ name: 'v', emptyDir: {} }],
        containers: [
          {
            name: 'c',
            image: 'img',
            ports: [{ containerPort: 80 }],
            resources: { limits: { cpu: '2' } },
            livenessProbe: { httpGet: { port: 'web' }, periodSeconds: 7 },
          },
        ],
        tolerations: [{ key: 'k', tolerationSeconds: -5 }],
        priority: -1,
      },
      status: {},
    });
  });

  test('a Lease written by protobufjs (MicroTime keeps microseconds)', () => {
    const t = pbType('k8s.io.api.coordination.v1.Lease');
    const bytes = t.encode(t.fromObject({ metadata: { name: 'l' }, spec: { holderIdentity: 'h', renewTime: { seconds: 1700000000, nanos: 123456789 } } })).finish();
    assert.deepStrictEqual(decodeMessage('io.k8s.api.coordination.v1.Lease', bytes), {
      metadata: { name: 'l' },
      spec: { holderIdentity: 'h', renewTime: '2023-11-14T22:13:20.123456Z' },
    });
  });

  test('a body written by protobufjs', () => {
    const unknown = pbType('k8s.io.apimachinery.pkg.runtime.Unknown');
    const cm = pbType('k8s.io.api.core.v1.ConfigMap');
    const raw = cm.encode(cm.fromObject({ metadata: { name: 'x' }, data: { a: 'b' }, binaryData: { bin: Buffer.from([1, 2, 3]) }, immutable: true })).finish();
    const body = Buffer.concat([PROTOBUF_PREFIX, unknown.encode(unknown.fromObject({ typeMeta: { apiVersion: 'v1', kind: 'ConfigMap' }, raw })).finish()]);
    assert.deepStrictEqual(decodeObject(body), { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x' }, immutable: true, data: { a: 'b' }, binaryData: { bin: 'AQID' } });
  });

  test('kubectl 1.33 ConfigMap, read by protobufjs too', () => {
    const body = Buffer.from(KUBECTL_CONFIGMAP_B64, 'base64');
    const unk = pbType('k8s.io.apimachinery.pkg.runtime.Unknown').decode(body.subarray(4)) as any;
    const cm = pbDecode('k8s.io.api.core.v1.ConfigMap', unk.raw);
    assert.deepEqual(cm.data, { a: 'b' });
    assert.equal(cm.metadata.name, 'x');
    assert.deepEqual(cm.metadata.creationTimestamp, {}); // Go's zero time: an empty message
  });
});

describe('watch stream framing', () => {
  const cm = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x', resourceVersion: '7' }, data: { a: 'b' } };

  test('a frame is a big-endian length and a WatchEvent whose object.raw is the full object body', () => {
    const objectBody = encodeObject(cm);
    const frame = encodeWatchEventFrame('ADDED', objectBody);
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    assert.equal(view.getUint32(0, false), frame.length - 4);
    // the event itself is not enveloped: client-go's stream serializer is the raw protobuf serializer
    assert.equal(frame[4], 0x0a);
    const ev = pbType('k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent').decode(frame.subarray(4)) as any;
    assert.equal(ev.type, 'ADDED');
    const raw: Uint8Array = ev.object.raw;
    assert.equal(Buffer.from(raw).toString('hex'), Buffer.from(objectBody).toString('hex'));
    const unk = pbType('k8s.io.apimachinery.pkg.runtime.Unknown').decode(raw.subarray(4)) as any;
    assert.deepEqual([...raw.subarray(0, 4)], [...PROTOBUF_PREFIX]);
    assert.equal(unk.typeMeta.kind, 'ConfigMap');
    assert.deepEqual(pbDecode('k8s.io.api.core.v1.ConfigMap', unk.raw).data, { a: 'b' });
  });

  test('frames written by protobufjs decode with our reader', () => {
    const we = pbType('k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent');
    const msg = we.encode(we.fromObject({ type: 'DELETED', object: { raw: encodeObject(cm) } })).finish();
    const frame = Buffer.alloc(4 + msg.length);
    frame.writeUInt32BE(msg.length, 0);
    Buffer.from(msg).copy(frame, 4);
    const [ev] = decodeWatchEventFrames(frame);
    assert.equal(ev.type, 'DELETED');
    assert.deepStrictEqual(decodeObject(ev.object), cm);
  });

  test('a stream read chunk by chunk, byte by byte', () => {
    const status = statusError();
    const frames = [
      encodeWatchEventFrameForObject('ADDED', cm),
      encodeWatchEventFrameForObject('BOOKMARK', { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '12', annotations: { 'k8s.io/initial-events-end': 'true' } } }),
      encodeWatchEventFrameForObject('ERROR', status),
    ];
    const stream = Buffer.concat(frames);
    const d = new WatchFrameDecoder();
    const got = [];
    for (let i = 0; i < stream.length; i++) got.push(...d.push(stream.subarray(i, i + 1)));
    assert.equal(d.buffered, 0);
    assert.deepEqual(got.map((e) => e.type), ['ADDED', 'BOOKMARK', 'ERROR']);
    assert.deepStrictEqual(decodeObject(got[0].object), cm);
    assert.equal((decodeObject(got[1].object) as any).metadata.resourceVersion, '12');
    assert.deepStrictEqual(decodeObject(got[2].object), status);
    assert.deepEqual(decodeWatchEventFrames(stream).map((e) => e.type), ['ADDED', 'BOOKMARK', 'ERROR']);
  });

  test('the RawExtension of a decoded WatchEvent holds the decoded object', () => {
    const frame = encodeWatchEventFrameForObject('MODIFIED', cm);
    assert.deepStrictEqual(decodeMessage('io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent', frame.subarray(4)), { type: 'MODIFIED', object: cm });
    assert.equal(decodeWatchEvent(frame.subarray(4)).type, 'MODIFIED');
  });
});
