// The protobuf codec against the generated schema: kubectl's real body, round trips of rich
// objects, Go's zero-value and presence rules, meta kinds, lists from cached items.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  PROTOBUF_PREFIX,
  ProtobufCodec,
  ProtobufError,
  ProtobufNotSupportedError,
  decodeEnvelope,
  decodeMessage,
  decodeObject,
  encodeEnvelope,
  encodeListFromItems,
  encodeListObjectChunks,
  encodeListObjectFromItems,
  encodeMessage,
  encodeObject,
  messageOfObject,
  supportsProtobuf,
  typeOfKind,
} from '../../src/codec/protobuf.js';
import { getType, typeForKind } from '../../src/schema/types.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, KUBECTL_CONFIGMAP_B64, crd, deployment, lease, richPod, secret, service, statusError } from './fixtures/protobuf-objects.js';

const kubectlBody = () => Buffer.from(KUBECTL_CONFIGMAP_B64, 'base64');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const roundTrip = (o: unknown): Record<string, any> => decodeObject(encodeObject(o));

describe('kubectl 1.33 protobuf ConfigMap', () => {
  test('decodes to exactly the JSON of the same ConfigMap', () => {
    const o = decodeObject(kubectlBody());
    // creationTimestamp arrives as an empty Time message (Go's zero time): Go before 1.34 printed
    // "creationTimestamp":null, Kubernetes 1.34 tags it omitzero and leaves it out; so do we
    assert.equal(JSON.stringify(o), '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"data":{"a":"b"}}');
  });

  test('re-encodes to the identical bytes', () => {
    const body = kubectlBody();
    assert.equal(hex(encodeObject(decodeObject(body))), hex(body));
    // and from the JSON as a JS client would write it
    assert.equal(hex(encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: 'b' } })), hex(body));
  });

  test('envelope fields', () => {
    const env = decodeEnvelope(kubectlBody());
    assert.equal(env.apiVersion, 'v1');
    assert.equal(env.kind, 'ConfigMap');
    assert.equal(env.contentEncoding, '');
    assert.equal(env.contentType, '');
    assert.equal(env.raw.length, 27);
    assert.equal(hex(encodeEnvelope('v1', 'ConfigMap', env.raw)), hex(kubectlBody()));
    assert.deepEqual([...PROTOBUF_PREFIX], [0x6b, 0x38, 0x73, 0x00]);
  });
});

describe('real kubectl 1.32 protobuf request bodies (Go-encoded)', () => {
  const { items } = JSON.parse(readFileSync(join(FIXTURES, 'kubectl-1.32-protobuf.json'), 'utf8')) as {
    items: { command: string; request: string; body: string; json: Record<string, any> }[];
  };
  /** Go before 1.34 prints a zero creationTimestamp as null; we leave it out (see protobuf.ts) */
  const withoutNullCreationTimestamps = (v: any): any => {
    if (Array.isArray(v)) return v.map(withoutNullCreationTimestamps);
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (!(k === 'creationTimestamp' && x === null)) out[k] = withoutNullCreationTimestamps(x);
    return out;
  };
  test('there are bodies of many kinds', () => assert.ok(items.length >= 20));
  for (const it of items) {
    test(it.command, () => {
      const body = Buffer.from(it.body, 'base64');
      const obj = decodeObject(body);
      // what kubectl (Go) printed as JSON for this object
      assert.deepStrictEqual(obj, withoutNullCreationTimestamps(it.json));
      // Go's bytes, reproduced exactly
      assert.equal(hex(encodeObject(obj)), hex(body));
    });
  }
});

describe('round trips of rich objects', () => {
  const cases: [string, () => Record<string, any>][] = [
    ['Pod with containers, ports, quantities, inline volume sources, probes, tolerations, managedFields', richPod],
    ['Deployment', deployment],
    ['Service', service],
    ['Secret with bytes', secret],
    ['Status with details and causes', statusError],
    ['Lease with MicroTime', lease],
    ['CustomResourceDefinition with JSONSchemaProps', crd],
  ];
  for (const [name, make] of cases) {
    test(name, () => {
      const obj = make();
      const body = encodeObject(obj);
      const back = roundTrip(obj);
      assert.deepStrictEqual(back, obj);
      // key order is Go's field order too
      assert.equal(JSON.stringify(back), JSON.stringify(obj));
      assert.equal(hex(encodeObject(back)), hex(body));
    });
  }

  test('a list of Pods', () => {
    const list = { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '77', continue: 'tok', remainingItemCount: 3 }, items: [richPod(), richPod()] };
    for (const p of list.items) {
      delete p.kind; // list items carry no kind/apiVersion in Go's JSON of a decoded list
      delete p.apiVersion;
    }
    assert.deepStrictEqual(roundTrip(list), list);
  });

  test('APIResourceList: a wrapper slice can be present and empty', () => {
    const l = {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'v1',
      resources: [
        { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['create', 'get', 'list'], shortNames: ['po'], categories: ['all'] },
        { name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: [] },
        { name: 'x', singularName: '', namespaced: false, kind: 'X', verbs: null },
      ],
    };
    assert.deepStrictEqual(roundTrip(l), l);
  });

  test('Table has no protobuf form: 406 NotAcceptable, as Kubernetes', () => {
    const table = { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: {}, columnDefinitions: [], rows: [] };
    assert.throws(
      () => encodeObject(table),
      (e: unknown) => e instanceof ProtobufNotSupportedError && e.code === 406 && e.reason === 'NotAcceptable' && /protobuf/.test(e.message),
    );
    assert.throws(() => encodeMessage('io.k8s.apimachinery.pkg.apis.meta.v1.Table', table), ProtobufNotSupportedError);
  });
});

describe('Go zero values and presence', () => {
  test('structs always print; omitempty leaves out zero scalars and nil pointers', () => {
    const d = roundTrip({ kind: 'Deployment', apiVersion: 'apps/v1', metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { spec: { containers: [{ name: 'nginx', image: 'nginx' }] } } } });
    // what kubectl create deployment --dry-run=client -o json prints (Go), without the null creationTimestamp
    assert.equal(
      JSON.stringify(d),
      '{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{},"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{}}]}},"strategy":{}},"status":{}}',
    );
    assert.equal(JSON.stringify(roundTrip({ kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'ns' } })), '{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"ns"},"spec":{},"status":{}}');
  });

  test('the SelfSubjectAccessReview of kubectl auth can-i decodes to its 1.27 JSON', () => {
    const ssar = { kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', metadata: { creationTimestamp: null }, spec: { resourceAttributes: { namespace: 'default', verb: 'create', resource: 'pods' } }, status: { allowed: false } };
    const expected = { ...ssar, metadata: {} };
    assert.deepStrictEqual(roundTrip(ssar), expected);
  });

  test('non-omitempty fields print their zero values; nil slices print null', () => {
    const ev = roundTrip({ kind: 'Event', apiVersion: 'v1', metadata: { name: 'e' }, involvedObject: { kind: 'Pod' }, reason: 'X' });
    assert.equal(ev.reportingComponent, '');
    assert.equal(ev.reportingInstance, '');
    assert.deepEqual(ev.source, {});
    const es = roundTrip({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', metadata: { name: 'e' }, addressType: 'IPv4', endpoints: [] });
    assert.equal(es.endpoints, null); // Go: nil slice without omitempty
    assert.equal(es.ports, null);
    const cp = decodeMessage('io.k8s.api.core.v1.ContainerPort', new Uint8Array(0)) as Record<string, unknown>;
    assert.deepStrictEqual(cp, { containerPort: 0 });
  });

  test('on request, absent non-omitempty slices and maps decode as [] and {} instead of null', () => {
    const codec = new ProtobufCodec(getType, typeForKind, { nilCollections: 'empty' });
    const list = codec.decodeObject(encodeObject({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1' } }));
    assert.deepStrictEqual(list, { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [] });
    const es = codec.decodeObject(encodeObject({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', metadata: { name: 'e' }, addressType: 'IPv4' }));
    assert.deepStrictEqual([es.endpoints, es.ports], [[], []]);
    assert.equal(decodeObject(encodeObject({ kind: 'PodList', apiVersion: 'v1', metadata: {} })).items, null);
  });

  test('pointers print when set, even to zero values', () => {
    const p = roundTrip({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x', generation: 0, deletionGracePeriodSeconds: 0 }, immutable: false });
    assert.deepStrictEqual(p, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x', deletionGracePeriodSeconds: 0 }, immutable: false });
  });

  test('IntOrString and Quantity structs always print', () => {
    const s = roundTrip({ kind: 'Service', apiVersion: 'v1', metadata: { name: 's' }, spec: { ports: [{ port: 80 }] } });
    assert.deepStrictEqual(s.spec.ports, [{ port: 80, targetPort: 0 }]);
    const msg = encodeMessage('io.k8s.api.core.v1.ResourceFieldSelector', { resource: 'limits.cpu' });
    assert.deepStrictEqual(decodeMessage('io.k8s.api.core.v1.ResourceFieldSelector', msg), { resource: 'limits.cpu', divisor: '0' });
  });

  test('a zero Time that Go prints as null is left out under omitempty (omitzero), kept as null without it', () => {
    const pod = roundTrip({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p', creationTimestamp: null }, status: { conditions: [{ type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-01-01T00:00:00Z' }] } });
    assert.deepStrictEqual(pod.metadata, { name: 'p' });
    assert.deepStrictEqual(pod.status.conditions[0], { type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' });
    // metav1.Condition.lastTransitionTime has no omitempty: Go prints null
    const c = decodeMessage('io.k8s.apimachinery.pkg.apis.meta.v1.Condition', encodeMessage('io.k8s.apimachinery.pkg.apis.meta.v1.Condition', { type: 'A' }));
    assert.deepStrictEqual(c, { type: 'A', status: '', lastTransitionTime: null, reason: '', message: '' });
  });

  test('unknown JSON fields are ignored on encode', () => {
    const a = encodeObject({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x', bogus: 1 }, data: { a: 'b' }, extra: { deep: true } });
    assert.equal(hex(a), hex(kubectlBody()));
  });
});

describe('kinds', () => {
  test('meta kinds resolve in any group version', () => {
    assert.equal(typeOfKind('v1', 'Status')?.name, 'io.k8s.apimachinery.pkg.apis.meta.v1.Status');
    assert.equal(typeOfKind('apps/v1', 'Status')?.name, 'io.k8s.apimachinery.pkg.apis.meta.v1.Status');
    assert.equal(typeOfKind('apps/v1', 'DeleteOptions')?.name, 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions');
    assert.equal(typeOfKind('meta.k8s.io/v1beta1', 'PartialObjectMetadataList')?.name, 'io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList');
    assert.equal(typeOfKind('apps/v1', 'Pod'), undefined);
    assert.equal(typeOfKind('v1', 'NoSuchKind'), undefined);
    assert.equal(supportsProtobuf('apps/v1', 'Deployment'), true);
    assert.equal(supportsProtobuf('meta.k8s.io/v1', 'PartialObjectMetadataList'), true);
    assert.equal(supportsProtobuf('meta.k8s.io/v1', 'Table'), false);
    assert.equal(supportsProtobuf('example.com/v1', 'Foo'), false);
  });

  test('Status, DeleteOptions, WatchEvent, PartialObjectMetadataList', () => {
    const st = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'pods "nope" not found', reason: 'NotFound', details: { name: 'nope', kind: 'pods' }, code: 404 };
    assert.deepStrictEqual(roundTrip(st), st);
    const del = { kind: 'DeleteOptions', apiVersion: 'apps/v1', gracePeriodSeconds: 0, preconditions: { uid: 'u', resourceVersion: '5' }, propagationPolicy: 'Foreground', dryRun: ['All'] };
    assert.deepStrictEqual(roundTrip(del), del);
    const pom = { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: '5' }, items: [{ metadata: { name: 'a', namespace: 'b', labels: { x: 'y' } } }] };
    assert.deepStrictEqual(roundTrip(pom), pom);
  });

  test('decodeObject needs a kind and a known type; defaults fill a missing one', () => {
    const raw = encodeMessage('io.k8s.api.core.v1.ConfigMap', { metadata: { name: 'x' } });
    assert.throws(() => decodeObject(encodeEnvelope('', '', raw)), /no kind/);
    assert.deepStrictEqual(decodeObject(encodeEnvelope('', '', raw), { apiVersion: 'v1', kind: 'ConfigMap' }), { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x' } });
    assert.throws(() => decodeObject(encodeEnvelope('v9', 'Nope', raw)), (e: unknown) => e instanceof ProtobufError && /no type is registered/.test((e as Error).message));
    assert.throws(() => encodeObject({ metadata: {} }), /no kind/);
    assert.equal(hex(encodeObject({ metadata: { name: 'x' }, data: { a: 'b' } }, { apiVersion: 'v1', kind: 'ConfigMap' })), hex(kubectlBody()));
    assert.throws(() => decodeObject(encodeEnvelope('v1', 'ConfigMap', raw, 'gzip')), /content encoding/);
  });
});

describe('lists from cached item encodings', () => {
  const pods = [richPod(), { ...richPod(), metadata: { ...richPod().metadata, name: 'web-1' } }, { metadata: { name: 'empty' } }];
  const items = pods.map((p) => encodeMessage('io.k8s.api.core.v1.Pod', p));
  const listMeta = { resourceVersion: '900', continue: 'next' };
  const full = { kind: 'PodList', apiVersion: 'v1', metadata: listMeta, items: pods };

  test('the list message equals the encoding of the whole list', () => {
    const fromItems = encodeListFromItems('io.k8s.api.core.v1.PodList', listMeta, items);
    assert.equal(hex(fromItems), hex(encodeMessage('io.k8s.api.core.v1.PodList', full)));
  });

  test('the list body equals encodeObject of the list, in one piece or in chunks', () => {
    const body = encodeObject(full);
    assert.equal(hex(encodeListObjectFromItems('v1', 'PodList', listMeta, items)), hex(body));
    for (const chunkSize of [65536, 512, 16, 1]) {
      const chunks = [...encodeListObjectChunks('v1', 'PodList', listMeta, items, chunkSize)];
      assert.equal(hex(Buffer.concat(chunks)), hex(body), `chunkSize ${chunkSize}`);
      if (chunkSize === 16) assert.ok(chunks.some((c) => items.includes(c)), 'a large item is passed through without a copy');
    }
    const empty = [...encodeListObjectChunks('v1', 'PodList', {}, [])];
    assert.equal(hex(Buffer.concat(empty)), hex(encodeObject({ kind: 'PodList', apiVersion: 'v1', metadata: {} })));
  });

  test('an object body gives its message as a view, for lists built from cached bodies', () => {
    const body = encodeObject(richPod());
    const msg = messageOfObject(body);
    assert.equal(msg.buffer, body.buffer);
    assert.equal(hex(msg), hex(items[0]));
  });

  test('only list types are accepted', () => {
    assert.throws(() => encodeListFromItems('io.k8s.api.core.v1.Pod', {}, items), /not a list type/);
  });
});
