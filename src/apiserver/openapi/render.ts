// Rendering of the neutral routes (routes.ts) as OpenAPI v3 path items and Swagger 2.0 path
// items, the way kube-openapi's builders lay them out: parameters shared by every operation of
// a path move to the path level, the rest stay on the operation, both sorted by name.
import { stringifyJSON } from '../../codec/int64.js';
import { byteOrder, jsonEqual, sortedObject, type Json, type JsonObject } from './json.js';
import { KEEP_ON_OPERATION, type Param } from './params.js';
import type { Operation, Route, Schema } from './routes.js';
import type { SchemaSet } from './schemas.js';

const RESPONSE_TEXT: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted' };

function paramKey(p: Param): string {
  return `${p.in}\0${p.name}`;
}

function byNameThenIn(a: Param, b: Param): number {
  return byteOrder(a.name, b.name) || byteOrder(a.in, b.in);
}

/** Splits the parameters of a path's operations into the shared (path-level) ones and each operation's own. */
export function splitParams(route: Route): { common: Param[]; own: Map<Operation, Param[]> } {
  const ops = route.ops;
  const hasPatch = ops.some((o) => o.method === 'patch');
  const common: Param[] = [];
  for (const p of ops[0].params) {
    if (hasPatch && KEEP_ON_OPERATION.has(p.name)) continue;
    const shared = ops.every((o) => o.params.some((q) => paramKey(q) === paramKey(p) && jsonEqual(q as unknown as Json, p as unknown as Json)));
    if (shared && !common.some((c) => paramKey(c) === paramKey(p))) common.push(p);
  }
  const commonKeys = new Set(common.map(paramKey));
  const own = new Map<Operation, Param[]>();
  for (const o of ops) own.set(o, o.params.filter((p) => !commonKeys.has(paramKey(p))).sort(byNameThenIn));
  return { common: common.sort(byNameThenIn), own };
}

function gvkObject(o: Operation): JsonObject | undefined {
  return o.gvk ? { group: o.gvk.group, kind: o.gvk.kind, version: o.gvk.version } : undefined;
}

// ---------------------------------------------------------------------------------------------
// OpenAPI v3

function v3Param(p: Param): JsonObject {
  const out: JsonObject = { name: p.name, in: p.in, description: p.description };
  if (p.required) out.required = true;
  out.schema = { type: p.type, uniqueItems: true };
  return out;
}

function v3Schema(s: Schema, schemas: SchemaSet, roots: Set<string>): JsonObject {
  if ('ref' in s) {
    roots.add(s.ref);
    return { $ref: schemas.ref(s.ref) };
  }
  return { type: s.type };
}

function v3Content(mediaTypes: string[], schema: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const mt of [...mediaTypes].sort(byteOrder)) out[mt] = { schema };
  return out;
}

/** The v3 path items of some routes; the names of the definitions they refer to are added to `roots`. */
export function v3Paths(routes: Route[], schemas: SchemaSet, roots: Set<string>): JsonObject {
  const paths: JsonObject = {};
  for (const route of routes) {
    const { common, own } = splitParams(route);
    const item: JsonObject = {};
    for (const o of route.ops) {
      const op: JsonObject = { tags: [o.tag], description: o.description, operationId: o.operationId };
      const params = own.get(o)!;
      if (params.length) op.parameters = params.map(v3Param);
      if (o.body) {
        const body: JsonObject = { content: v3Content(o.body.mediaTypes, v3Schema({ ref: o.body.ref }, schemas, roots)) };
        if (o.body.required) body.required = true;
        op.requestBody = body;
      }
      const responses: JsonObject = {};
      for (const r of o.responses) responses[r.code] = { description: RESPONSE_TEXT[r.code], content: v3Content(r.mediaTypes, v3Schema(r.schema, schemas, roots)) };
      responses['401'] = { description: 'Unauthorized' };
      op.responses = responses;
      if (o.action) op['x-kubernetes-action'] = o.action;
      const gvk = gvkObject(o);
      if (gvk) op['x-kubernetes-group-version-kind'] = gvk;
      item[o.method] = op;
    }
    if (common.length) item.parameters = common.map(v3Param);
    paths[route.path] = item;
  }
  return sortedObject(paths);
}

export const V3_SECURITY_SCHEMES: JsonObject = {
  BearerToken: { type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header' },
};

/** A complete v3 document over some routes. */
export function v3Document(routes: Route[], schemas: SchemaSet, version: string): JsonObject {
  const roots = new Set<string>();
  const paths = v3Paths(routes, schemas, roots);
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version },
    paths,
    components: { schemas: schemas.definitions(roots), securitySchemes: V3_SECURITY_SCHEMES },
  };
}

// ---------------------------------------------------------------------------------------------
// Swagger 2.0

function v2Param(p: Param): JsonObject {
  const out: JsonObject = { uniqueItems: true, type: p.type, description: p.description, name: p.name, in: p.in };
  if (p.required) out.required = true;
  return out;
}

/** Parameters shared through the document's `parameters` section, by their JSON text. */
export class SharedParams {
  private readonly byJson = new Map<string, { name: string; param: JsonObject }>();

  constructor(private readonly hash: (text: string) => string) {}

  /** the parameter itself, or a reference to its shared definition */
  use(p: Param): JsonObject {
    const param = v2Param(p);
    if (p.name === 'name' || KEEP_ON_OPERATION.has(p.name)) return param;
    const text = stringifyJSON(param);
    let e = this.byJson.get(text);
    if (!e) {
      e = { name: `${p.name}-${this.hash(text)}`, param };
      this.byJson.set(text, e);
    }
    return { $ref: `#/parameters/${e.name}` };
  }

  definitions(): JsonObject {
    const out: JsonObject = {};
    for (const e of [...this.byJson.values()].sort((a, b) => byteOrder(a.name, b.name))) out[e.name] = e.param;
    return out;
  }
}

function v2Schema(s: Schema, schemas: SchemaSet, roots: Set<string>): JsonObject {
  if ('ref' in s) {
    roots.add(s.ref);
    return { $ref: schemas.ref(s.ref) };
  }
  return { type: s.type };
}

/** The Swagger 2.0 path items of some routes. */
export function v2Paths(routes: Route[], schemas: SchemaSet, shared: SharedParams, roots: Set<string>): JsonObject {
  const paths: JsonObject = {};
  for (const route of routes) {
    const { common, own } = splitParams(route);
    const item: JsonObject = {};
    for (const o of route.ops) {
      const op: JsonObject = {
        description: o.description,
        consumes: [...o.consumes],
        produces: [...o.produces],
        schemes: ['https'],
        tags: [o.tag],
        operationId: o.operationId,
      };
      const params: JsonObject[] = [];
      if (o.body) {
        const body: JsonObject = { name: 'body', in: 'body' };
        if (o.body.required) body.required = true;
        body.schema = v2Schema({ ref: o.body.ref }, schemas, roots);
        params.push(body);
      }
      for (const p of own.get(o)!) params.push(shared.use(p));
      if (params.length) op.parameters = params;
      const responses: JsonObject = {};
      for (const r of o.responses) responses[r.code] = { description: RESPONSE_TEXT[r.code], schema: v2Schema(r.schema, schemas, roots) };
      responses['401'] = { description: 'Unauthorized' };
      op.responses = responses;
      if (o.action) op['x-kubernetes-action'] = o.action;
      const gvk = gvkObject(o);
      if (gvk) op['x-kubernetes-group-version-kind'] = gvk;
      item[o.method] = op;
    }
    if (common.length) item.parameters = common.map((p) => shared.use(p));
    paths[route.path] = item;
  }
  return sortedObject(paths);
}
