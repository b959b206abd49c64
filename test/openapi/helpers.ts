// Shared by the OpenAPI tests: one build over the built-in kinds, and walkers over documents.
import { buildOpenAPI, type OpenAPIBuild } from '../../src/apiserver/openapi/index.js';
import type { Json, JsonObject } from '../../src/apiserver/openapi/json.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';

export const GIT_VERSION = 'v1.33.0';

let shared: OpenAPIBuild | undefined;
/** one build shared by the tests of a file */
export function docs(): OpenAPIBuild {
  shared ??= buildOpenAPI(BUILTIN_KINDS, { gitVersion: GIT_VERSION });
  return shared;
}

export function fresh(): OpenAPIBuild {
  return buildOpenAPI(BUILTIN_KINDS, { gitVersion: GIT_VERSION });
}

/** resolves a local JSON pointer (#/a/b) in a document */
export function resolvePointer(doc: JsonObject, ref: string): Json | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let cur: Json | undefined = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as JsonObject)[key];
    if (cur === undefined) return undefined;
  }
  return cur;
}

/**
 * Every key of a document that is a keyword (or an ordinary key outside schemas), with the path
 * of the object that holds it and its value. The keys of a schema's `properties` are field
 * names, not keywords: JSONSchemaProps has fields named `$ref`, `$schema`, `allOf`, `oneOf`,
 * `anyOf`, `not`, whose values are schemas (walked in turn), not keywords.
 */
export function* keywords(v: Json, path = '#', names = false): Generator<[string, string, Json]> {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) yield* keywords(v[i], `${path}/${i}`);
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (!names) yield [k, path, x];
      yield* keywords(x, `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, !names && k === 'properties');
    }
  }
}

export function unresolvedRefs(doc: JsonObject): string[] {
  const bad: string[] = [];
  for (const [k, path, v] of keywords(doc)) {
    if (k === '$ref' && (typeof v !== 'string' || resolvePointer(doc, v) === undefined)) bad.push(`${path}: ${JSON.stringify(v)}`);
  }
  return bad;
}

export function obj(v: Json | undefined): JsonObject {
  if (v === null || v === undefined || typeof v !== 'object' || Array.isArray(v)) throw new Error(`not an object: ${JSON.stringify(v)?.slice(0, 200)}`);
  return v;
}
