// The Protobuf form of metrics.k8s.io/v1beta1, as metrics-server answers
// `application/vnd.kubernetes.protobuf`: the "k8s\0" envelope (runtime.Unknown) around the
// message of k8s.io/metrics' v1beta1 types. Their declarations are here rather than in the
// generated schema (schema/gen holds kube-apiserver's groups only); the field numbers are those of
// k8s.io/metrics/pkg/apis/metrics/v1beta1/generated.proto:
//
//   ContainerMetrics {1 name string, 2 usage map<string, Quantity>}
//   NodeMetrics      {1 metadata ObjectMeta, 2 timestamp Time, 3 window Duration, 4 usage map<string, Quantity>}
//   PodMetrics       {1 metadata ObjectMeta, 2 timestamp Time, 3 window Duration, 4 containers repeated ContainerMetrics}
//   NodeMetricsList / PodMetricsList {1 metadata ListMeta, 2 items repeated}
//
// ObjectMeta, ListMeta, Time, Duration and Quantity are apimachinery's, from the schema. The Go
// fields are values, not pointers (metadata, timestamp and window are always written, as Go's
// generated marshallers write them); usage maps are written key by key in sorted order.
import type { FieldDecl, TypeDecl, TypeRef } from '../../schema/model.js';
import { getType, typeForKind } from '../../schema/types.js';
import { ProtobufCodec } from '../../codec/protobuf.js';

const GROUP = 'metrics.k8s.io';
const VERSION = 'v1beta1';
const PREFIX = 'io.k8s.metrics.pkg.apis.metrics.v1beta1.';
const PROTO_PREFIX = 'k8s.io.metrics.pkg.apis.metrics.v1beta1.';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

function field(name: string, proto: number, type: TypeRef, o: { omitEmpty?: boolean; nullable?: boolean } = {}): FieldDecl {
  return { name, proto, type, optional: o.omitEmpty ?? false, omitEmpty: o.omitEmpty ?? false, nullable: o.nullable ?? false };
}

const quantityMap: TypeRef = { kind: 'map', values: { kind: 'special', special: 'Quantity' } };
const objectMeta = (): FieldDecl => field('metadata', 1, { kind: 'object', name: `${META}ObjectMeta` }, { omitEmpty: true });
const listMeta = (): FieldDecl => field('metadata', 1, { kind: 'object', name: `${META}ListMeta` }, { omitEmpty: true });
const timestamp = (): FieldDecl => field('timestamp', 2, { kind: 'special', special: 'Time' });
const window = (): FieldDecl => field('window', 3, { kind: 'special', special: 'Duration' });

function decl(kind: string, fields: FieldDecl[], root: boolean): TypeDecl {
  const d: TypeDecl = { name: PREFIX + kind, protoName: PROTO_PREFIX + kind, fields };
  if (root) {
    d.typeMeta = true;
    d.gvk = [{ group: GROUP, version: VERSION, kind }];
  }
  return d;
}

const DECLS: TypeDecl[] = [
  decl('ContainerMetrics', [field('name', 1, { kind: 'scalar', scalar: 'string' }), field('usage', 2, quantityMap, { nullable: true })], false),
  decl('NodeMetrics', [objectMeta(), timestamp(), window(), field('usage', 4, quantityMap, { nullable: true })], true),
  decl('PodMetrics', [objectMeta(), timestamp(), window(), field('containers', 4, { kind: 'array', items: { kind: 'object', name: `${PREFIX}ContainerMetrics` } }, { nullable: true })], true),
  decl('NodeMetricsList', [listMeta(), field('items', 2, { kind: 'array', items: { kind: 'object', name: `${PREFIX}NodeMetrics` } }, { nullable: true })], true),
  decl('PodMetricsList', [listMeta(), field('items', 2, { kind: 'array', items: { kind: 'object', name: `${PREFIX}PodMetrics` } }, { nullable: true })], true),
];
const BY_NAME = new Map(DECLS.map((d) => [d.name, d]));
const BY_KIND = new Map(DECLS.filter((d) => d.gvk).map((d) => [d.gvk![0]!.kind, d]));

/** a codec over the schema's types and the metrics types */
const codec = new ProtobufCodec(
  (name) => BY_NAME.get(name) ?? getType(name),
  (group, version, kind) => (group === GROUP && version === VERSION ? BY_KIND.get(kind) : undefined) ?? typeForKind(group, version, kind),
);

/** the Protobuf body of a NodeMetrics, PodMetrics or their list (JSON form, with kind and apiVersion) */
export function encodeMetricsObject(obj: { kind: string; apiVersion: string }): Uint8Array {
  return codec.encodeObject(obj);
}
