import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import YAML from 'yaml';
import type { Json, JsonObject } from '../../src/apiserver/openapi/json.js';
import { gvPrefix } from '../../src/apiserver/openapi/routes.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { docs, GIT_VERSION, keywords, obj, unresolvedRefs } from './helpers.js';

// the fixture stays in the source tree (dist/test/openapi -> test/openapi)
const here = dirname(fileURLToPath(import.meta.url));
const PROTO = readFileSync(join(here, '..', '..', '..', 'test', 'openapi', 'openapi_v2.proto'), 'utf8');
const Document = protobuf.parse(PROTO, { keepCase: true }).root.lookupType('openapi.v2.Document');

type M = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// From the decoded protobuf back to Swagger JSON, to compare with the JSON document

function yamlValue(a: M): Json {
  return YAML.parse(a.yaml) as Json;
}

function extensions(list: M[] | undefined, out: JsonObject): void {
  for (const e of list ?? []) out[e.name] = yamlValue(e.value);
}

function schema(s: M): JsonObject {
  const out: JsonObject = {};
  if (s._ref) out.$ref = s._ref;
  if (s.format) out.format = s.format;
  if (s.description) out.description = s.description;
  if (s.default) out.default = yamlValue(s.default);
  if (s.required?.length) out.required = s.required;
  if (s.enum?.length) out.enum = s.enum.map(yamlValue);
  if (s.additional_properties) out.additionalProperties = 'schema' in s.additional_properties ? schema(s.additional_properties.schema) : s.additional_properties.boolean;
  if (s.type) {
    assert.equal(s.type.value.length, 1, 'one type per schema');
    out.type = s.type.value[0];
  }
  if (s.items) {
    assert.equal(s.items.schema.length, 1, 'one items schema');
    out.items = schema(s.items.schema[0]);
  }
  if (s.all_of?.length) out.allOf = s.all_of.map(schema);
  if (s.properties) {
    const p: JsonObject = {};
    for (const n of s.properties.additional_properties ?? []) p[n.name] = schema(n.value);
    out.properties = p;
  }
  extensions(s.vendor_extension, out);
  return out;
}

function parameter(p: M): JsonObject {
  if (p.body_parameter) {
    const b = p.body_parameter;
    const out: JsonObject = { name: b.name, in: b.in };
    if (b.description) out.description = b.description;
    if (b.required) out.required = true;
    if (b.schema) out.schema = schema(b.schema);
    return out;
  }
  const nb = p.non_body_parameter;
  const q = nb.query_parameter_sub_schema ?? nb.path_parameter_sub_schema;
  assert.ok(q, 'a query or path parameter');
  const out: JsonObject = {};
  if (q.unique_items) out.uniqueItems = true;
  if (q.type) out.type = q.type;
  if (q.description) out.description = q.description;
  out.name = q.name;
  out.in = q.in;
  if (q.required) out.required = true;
  return out;
}

function parametersItem(p: M): JsonObject {
  if (p.json_reference) return { $ref: p.json_reference._ref };
  return parameter(p.parameter);
}

function operation(o: M): JsonObject {
  const out: JsonObject = {};
  if (o.description) out.description = o.description;
  if (o.consumes) out.consumes = o.consumes;
  if (o.produces) out.produces = o.produces;
  if (o.schemes) out.schemes = o.schemes;
  if (o.tags) out.tags = o.tags;
  if (o.operation_id) out.operationId = o.operation_id;
  if (o.parameters?.length) out.parameters = o.parameters.map(parametersItem);
  const responses: JsonObject = {};
  for (const r of o.responses?.response_code ?? []) {
    const resp = r.value.response;
    const x: JsonObject = { description: resp.description };
    if (resp.schema) x.schema = schema(resp.schema.schema);
    responses[r.name] = x;
  }
  out.responses = responses;
  extensions(o.vendor_extension, out);
  return out;
}

function fromProto(d: M): JsonObject {
  const paths: JsonObject = {};
  for (const p of d.paths?.path ?? []) {
    const item: JsonObject = {};
    for (const m of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch']) if (p.value[m]) item[m] = operation(p.value[m]);
    if (p.value.parameters?.length) item.parameters = p.value.parameters.map(parametersItem);
    paths[p.name] = item;
  }
  const definitions: JsonObject = {};
  for (const n of d.definitions?.additional_properties ?? []) definitions[n.name] = schema(n.value);
  const parameters: JsonObject = {};
  for (const n of d.parameters?.additional_properties ?? []) parameters[n.name] = parameter(n.value);
  const securityDefinitions: JsonObject = {};
  for (const n of d.security_definitions?.additional_properties ?? []) {
    const k = n.value.api_key_security;
    securityDefinitions[n.name] = { type: k.type, description: k.description, name: k.name, in: k.in };
  }
  const security = (d.security ?? []).map((r: M) => {
    const o: JsonObject = {};
    for (const n of r.additional_properties ?? []) o[n.name] = n.value?.value ?? [];
    return o;
  });
  return { swagger: d.swagger, info: { title: d.info.title, version: d.info.version }, paths, definitions, parameters, securityDefinitions, security };
}

function decode(): M {
  const msg = Document.decode(docs().v2Proto());
  return Document.toObject(msg, { defaults: false, arrays: false, objects: false }) as M;
}

// ---------------------------------------------------------------------------------------------

test('the v2 protobuf decodes as openapi_v2.Document and says what the JSON document says', () => {
  const json = JSON.parse(Buffer.from(docs().v2Json()).toString('utf8')) as JsonObject;
  assert.deepEqual(json, docs().v2Object());
  const decoded = fromProto(decode());
  assert.equal(decoded.swagger, '2.0');
  assert.deepEqual(decoded.info, { title: 'Kubernetes', version: GIT_VERSION });
  // compare part by part first, for readable failures
  assert.deepEqual(Object.keys(obj(decoded.paths)), Object.keys(obj(json.paths)));
  for (const p of Object.keys(obj(json.paths))) assert.deepEqual(obj(decoded.paths)[p], obj(json.paths)[p], p);
  for (const d of Object.keys(obj(json.definitions))) assert.deepEqual(obj(decoded.definitions)[d], obj(json.definitions)[d], d);
  assert.deepEqual(decoded, json);
});

test('the v2 document has every path, its definitions resolve, and fieldValidation stays on PATCH for kubectl 1.27', () => {
  const d = docs().v2Object();
  assert.deepEqual(unresolvedRefs(d), []);
  const paths = obj(d.paths);
  for (const k of BUILTIN_KINDS) {
    const ns = k.namespaced ? '/namespaces/{namespace}' : '';
    const item = `${gvPrefix(k.group, k.version)}${ns}/${k.resource}/{name}`;
    if (!k.verbs.includes('patch')) continue;
    const patch = obj(obj(paths[item]).patch);
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: k.group, kind: k.kind, version: k.version });
    // kubectl's v2 verifier reads the parameter itself, not a reference to a shared one
    assert.ok((patch.parameters as JsonObject[]).some((p) => p.name === 'fieldValidation' && p.in === 'query'), item);
    assert.deepEqual(patch.consumes, ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml']);
    assert.deepEqual(obj((patch.parameters as JsonObject[])[0]), { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } });
  }
  for (const p of ['/api/', '/apis/', '/apis/apps/', '/version/']) assert.ok(paths[p], p);
  // v2 keeps a described reference beside its siblings (no allOf) and has no oneOf
  const defs = obj(d.definitions);
  assert.deepEqual(obj(obj(obj(defs['io.k8s.api.core.v1.Pod']).properties).metadata).$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  // (JSONSchemaProps has fields named allOf, oneOf and anyOf: those are property names, not keywords)
  const used = new Set([...keywords(d)].map(([k]) => k));
  for (const k of ['oneOf', 'allOf', 'anyOf', 'not']) assert.ok(!used.has(k), `v2 document uses ${k}`);
  assert.deepEqual(obj(defs['io.k8s.apimachinery.pkg.util.intstr.IntOrString']).type, 'string');
  assert.deepEqual(obj(defs['io.k8s.apimachinery.pkg.util.intstr.IntOrString']).format, 'int-or-string');
  assert.deepEqual(obj(defs['io.k8s.api.apps.v1.Deployment'])['x-kubernetes-group-version-kind'], [{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
  assert.deepEqual(d.security, [{ BearerToken: [] }]);
  // JSONSchemaProps: fields named $ref and $schema are strings; properties is a map of schemas
  const A = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1';
  const jsp = obj(obj(defs[`${A}.JSONSchemaProps`]).properties);
  assert.equal(obj(jsp.$ref).type, 'string');
  assert.equal(obj(jsp.$schema).type, 'string');
  assert.equal(obj(jsp.$ref).$ref, undefined);
  assert.deepEqual(obj(jsp.properties).additionalProperties, { $ref: `#/definitions/${A}.JSONSchemaProps`, default: {} });
  assert.deepEqual(Object.keys(obj(defs[`${A}.JSON`])), ['description']);
  // shared parameters are referenced, and each reference resolves (checked above)
  assert.ok(Object.keys(obj(d.parameters)).some((n) => n.startsWith('labelSelector-')));
});

test('vendor extensions and defaults travel as YAML in the protobuf', () => {
  const raw = decode();
  const pod = raw.definitions.additional_properties.find((n: M) => n.name === 'io.k8s.api.core.v1.PodSpec').value;
  const containers = pod.properties.additional_properties.find((n: M) => n.name === 'containers').value;
  const ext = Object.fromEntries(containers.vendor_extension.map((e: M) => [e.name, e.value.yaml]));
  assert.equal(YAML.parse(ext['x-kubernetes-patch-merge-key']), 'name');
  assert.deepEqual(YAML.parse(ext['x-kubernetes-list-map-keys']), ['name']);
  const deploy = raw.definitions.additional_properties.find((n: M) => n.name === 'io.k8s.api.apps.v1.Deployment').value;
  const gvk = deploy.vendor_extension.find((e: M) => e.name === 'x-kubernetes-group-version-kind');
  assert.deepEqual(YAML.parse(gvk.value.yaml), [{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
  const container = raw.definitions.additional_properties.find((n: M) => n.name === 'io.k8s.api.core.v1.Container').value;
  const name = container.properties.additional_properties.find((n: M) => n.name === 'name').value;
  assert.equal(YAML.parse(name.default.yaml), '');
});
