// The OpenAPI definitions of custom resources (v3 and v2), built from each served version's
// structural schema as apiextensions-apiserver publishes them: apiVersion, kind and metadata
// (ObjectMeta) added, x-kubernetes-group-version-kind set, a list type beside each kind. In v2
// the keywords Swagger 2.0 does not have (nullable, oneOf, anyOf, allOf, not) are left out.
import type { JsonObject } from '../openapi/json.js';
import type { JSONSchemaProps } from './schema.js';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';

const API_VERSION_DESC =
  'The version of the schema this object is written in, as group/version. Servers convert the versions they know to the one they store, and may reject versions they do not know.';
const KIND_DESC = 'The kind of object this is, in CamelCase. Servers may infer it from the URL of the request. Cannot be updated.';
const METADATA_DESC = "The object's metadata: its name, namespace, labels, annotations and the fields the server keeps.";

export interface CustomTypeInfo {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  schema: JSONSchemaProps | undefined;
}

const V2_DROPPED = new Set(['nullable', 'oneOf', 'anyOf', 'allOf', 'not']);

function forDialect(s: unknown, v2: boolean): any {
  if (Array.isArray(s)) return s.map((x) => forDialect(x, v2));
  if (s === null || typeof s !== 'object') return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (v2 && V2_DROPPED.has(k)) continue;
    if (k === 'default' || k === 'enum' || k === 'example') out[k] = v;
    else if (k === 'properties' && v && typeof v === 'object') out[k] = Object.fromEntries(Object.entries(v).map(([pk, pv]) => [pk, forDialect(pv, v2)]));
    else out[k] = forDialect(v, v2);
  }
  return out;
}

function withRef(ref: Record<string, unknown>, description: string, v2: boolean): JsonObject {
  return (v2 ? { ...ref, description } : { allOf: [ref], description }) as JsonObject;
}

/** the definition of a custom resource's kind */
export function kindDefinition(t: CustomTypeInfo, dialect: 'v2' | 'v3', ref: (name: string) => Record<string, unknown>): JsonObject {
  const v2 = dialect === 'v2';
  const base = forDialect(t.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, v2) as Record<string, any>;
  const props: Record<string, unknown> = {
    apiVersion: { description: API_VERSION_DESC, type: 'string' },
    kind: { description: KIND_DESC, type: 'string' },
    metadata: withRef(ref(OBJECT_META), METADATA_DESC, v2),
  };
  for (const [k, v] of Object.entries(base.properties ?? {})) if (!(k in props)) props[k] = v;
  const out: Record<string, unknown> = { ...base, type: 'object', properties: props };
  out['x-kubernetes-group-version-kind'] = [{ group: t.group, kind: t.kind, version: t.version }];
  return out as JsonObject;
}

/** the definition of a custom resource's list kind */
export function listDefinition(t: CustomTypeInfo, kindRef: Record<string, unknown>, dialect: 'v2' | 'v3', ref: (name: string) => Record<string, unknown>): JsonObject {
  const v2 = dialect === 'v2';
  return {
    description: `${t.listKind} is a list of ${t.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { description: API_VERSION_DESC, type: 'string' },
      items: { description: `List of ${t.plural}.`, type: 'array', items: kindRef as JsonObject },
      kind: { description: KIND_DESC, type: 'string' },
      metadata: withRef(ref(LIST_META), 'The list\'s metadata: its resourceVersion and the token to continue it.', v2),
    },
    'x-kubernetes-group-version-kind': [{ group: t.group, kind: t.listKind, version: t.version }],
  } as JsonObject;
}
