// OpenAPI for the API server: the v3 documents (/openapi/v3 and one document per group
// version, plus the discovery documents of /api, /apis, /apis/<group> and /version) and the
// single v2 document (/openapi/v2, as JSON and as gnostic protobuf), all generated from the
// kind list and the type declarations of schema/. Nothing is built until it is first asked
// for; then every document is kept, with its hash. Generation is deterministic: the same kinds
// and types give the same bytes, so hashes are stable across restarts.
import { stringifyJSON } from '../../codec/int64.js';
import { createHash } from 'node:crypto';
import type { KindDecl } from '../../schema/model.js';
import { getType, typeForKind } from '../../schema/types.js';
import { encodeOpenAPIv2 } from './gnostic.js';
import { byteOrder, openapiHash, sortedObject, type JsonObject } from './json.js';
import { SharedParams, V3_SECURITY_SCHEMES, v2Paths, v3Document } from './render.js';
import {
  DELETE_OPTIONS,
  RouteBuilder,
  WATCH_EVENT,
  coreDiscoveryRoute,
  groupDiscoveryRoute,
  groupsDiscoveryRoute,
  gvDocName,
  versionRoute,
  type Route,
} from './routes.js';
import { SchemaSet, type GVK } from './schemas.js';
import type { TypeSource } from './source.js';

export { handleOpenAPI } from './handler.js';
export { openapiHash } from './json.js';
export type { TypeSource } from './source.js';
export { typeSourceOf } from './source.js';

export interface OpenAPIDocs {
  /** GET /openapi/v3: {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=<HASH>"}, ...}} */
  v3Index(): Uint8Array;
  /** the document of one group version ('api/v1', 'apis/apps/v1', ...) or discovery path ('api', 'apis', 'apis/apps', 'version'), with its hash */
  v3Doc(path: string): { body: Uint8Array; hash: string } | undefined;
  /** the single v2 document, as JSON and as gnostic protobuf (openapi_v2.Document) */
  v2Json(): Uint8Array;
  v2Proto(): Uint8Array;
}

export interface BuildOptions {
  /** info.version of every document */
  gitVersion: string;
  /** where type declarations come from; the schema loader by default */
  types?: TypeSource;
  /** list CBOR among the response media types (when the server serves CBOR); default false */
  cbor?: boolean;
}

/** What a build produced, for tests and diagnostics. */
export interface OpenAPIBuild extends OpenAPIDocs {
  /** the v3 documents by name, parsed */
  v3Object(path: string): JsonObject | undefined;
  v2Object(): JsonObject;
  /** the names of the v3 documents */
  v3Names(): string[];
  /** type names referred to that have no declaration (each got a permissive placeholder) */
  missingTypes(): string[];
}

const schemaLoader: TypeSource = { get: getType, forKind: typeForKind };

function encode(o: JsonObject): Uint8Array {
  return new Uint8Array(Buffer.from(stringifyJSON(o), 'utf8'));
}

interface GroupVersion {
  group: string;
  version: string;
  kinds: KindDecl[];
}

/** Builds the OpenAPI documents of a set of kinds. Cheap: the documents are made on first use. */
export function buildOpenAPI(kinds: KindDecl[], opts: BuildOptions): OpenAPIBuild {
  const src = opts.types ?? schemaLoader;
  const routes = new RouteBuilder(src, { cbor: opts.cbor ?? false });

  const gvs = new Map<string, GroupVersion>();
  for (const k of kinds) {
    const name = gvDocName(k.group, k.version);
    let gv = gvs.get(name);
    if (!gv) gvs.set(name, (gv = { group: k.group, version: k.version, kinds: [] }));
    gv.kinds.push(k);
  }

  // x-kubernetes-group-version-kind entries that the declarations may not carry: every kind's
  // root and list types; DeleteOptions and WatchEvent are accepted in every group version.
  // Computed on first use: it reads the type declarations.
  let extra: Map<string, GVK[]> | undefined;
  function extraGVK(): Map<string, GVK[]> {
    if (extra) return extra;
    const m = new Map<string, GVK[]>();
    const addGVK = (type: string, gvk: GVK) => {
      let l = m.get(type);
      if (!l) m.set(type, (l = []));
      l.push(gvk);
    };
    for (const gv of gvs.values()) {
      addGVK(DELETE_OPTIONS, { group: gv.group, version: gv.version, kind: 'DeleteOptions' });
      addGVK(WATCH_EVENT, { group: gv.group, version: gv.version, kind: 'WatchEvent' });
      for (const k of gv.kinds) {
        addGVK(routes.typeOf(k.group, k.version, k.kind, k.type), { group: k.group, version: k.version, kind: k.kind });
        if (k.verbs.includes('list')) addGVK(routes.typeOf(k.group, k.version, k.listKind, `${k.type}List`), { group: k.group, version: k.version, kind: k.listKind });
      }
    }
    extra = m;
    return m;
  }

  let v3: { schemas: SchemaSet; routes: Map<string, Route[]> } | undefined;
  const v3Docs = new Map<string, { object: JsonObject; body: Uint8Array; hash: string }>();
  let v3IndexBody: Uint8Array | undefined;
  let v2: { object: JsonObject; json: Uint8Array; proto?: Uint8Array; schemas: SchemaSet } | undefined;

  /** the routes of every v3 document, by document name */
  function v3Routes(): { schemas: SchemaSet; routes: Map<string, Route[]> } {
    if (v3) return v3;
    const docs = new Map<string, Route[]>();
    docs.set('api', [coreDiscoveryRoute()]);
    docs.set('apis', [groupsDiscoveryRoute()]);
    docs.set('version', [versionRoute()]);
    for (const [name, gv] of gvs) {
      docs.set(name, routes.groupVersion(gv.group, gv.version, gv.kinds));
      if (gv.group !== '') docs.set(`apis/${gv.group}`, [groupDiscoveryRoute(gv.group)]);
    }
    v3 = { schemas: new SchemaSet(src, 'v3', extraGVK()), routes: docs };
    return v3;
  }

  function v3Built(name: string): { object: JsonObject; body: Uint8Array; hash: string } | undefined {
    let d = v3Docs.get(name);
    if (d) return d;
    const { schemas, routes: docs } = v3Routes();
    const r = docs.get(name);
    if (!r) return undefined;
    const object = v3Document(r, schemas, opts.gitVersion);
    const body = encode(object);
    d = { object, body, hash: openapiHash(body) };
    v3Docs.set(name, d);
    return d;
  }

  function v3Names(): string[] {
    return [...v3Routes().routes.keys()].sort(byteOrder);
  }

  function v2Built(): { object: JsonObject; json: Uint8Array; proto?: Uint8Array; schemas: SchemaSet } {
    if (v2) return v2;
    const schemas = new SchemaSet(src, 'v2', extraGVK());
    const all: Route[] = [coreDiscoveryRoute(), groupsDiscoveryRoute(), versionRoute()];
    const groups = new Set<string>();
    for (const gv of gvs.values()) {
      all.push(...routes.groupVersion(gv.group, gv.version, gv.kinds));
      if (gv.group !== '' && !groups.has(gv.group)) {
        groups.add(gv.group);
        all.push(groupDiscoveryRoute(gv.group));
      }
    }
    const shared = new SharedParams((text) => createHash('sha256').update(text).digest('base64url').slice(0, 8));
    const roots = new Set<string>();
    const paths = v2Paths(all, schemas, shared, roots);
    const object: JsonObject = {
      swagger: '2.0',
      info: { title: 'Kubernetes', version: opts.gitVersion },
      paths,
      definitions: schemas.definitions(roots),
      parameters: shared.definitions(),
      securityDefinitions: { BearerToken: V3_SECURITY_SCHEMES.BearerToken },
      security: [{ BearerToken: [] }],
    };
    v2 = { object, json: encode(object), schemas };
    return v2;
  }

  return {
    v3Index(): Uint8Array {
      if (v3IndexBody) return v3IndexBody;
      const paths: JsonObject = {};
      for (const name of v3Names()) paths[name] = { serverRelativeURL: `/openapi/v3/${name}?hash=${v3Built(name)!.hash}` };
      v3IndexBody = encode({ paths: sortedObject(paths) });
      return v3IndexBody;
    },
    v3Doc(path: string) {
      const d = v3Built(path.replace(/^\/+|\/+$/g, ''));
      return d ? { body: d.body, hash: d.hash } : undefined;
    },
    v3Object(path: string) {
      return v3Built(path)?.object;
    },
    v3Names,
    v2Json(): Uint8Array {
      return v2Built().json;
    },
    v2Proto(): Uint8Array {
      const b = v2Built();
      b.proto ??= encodeOpenAPIv2(b.object);
      return b.proto;
    },
    v2Object(): JsonObject {
      return v2Built().object;
    },
    missingTypes(): string[] {
      const out = new Set<string>();
      if (v3) for (const n of v3.schemas.missing) out.add(n);
      if (v2) for (const n of v2.schemas.missing) out.add(n);
      return [...out].sort(byteOrder);
    },
  };
}
