// The OpenAPI documents with those of the extension API servers (kube-aggregator's OpenAPI
// aggregation), so that `kubectl explain` and kubectl's client-side validation know the kinds of
// aggregated group versions too.
//   v3: the index (/openapi/v3) lists, beside the server's own documents, `apis/<group>/<version>`
//       of every available remote APIService whose server publishes that document, and
//       /openapi/v3/apis/<group>/<version> serves it (with its hash, ETag, and the immutable
//       ?hash= form, as the server's own).
//   v2: the single document gets the remote documents' paths under /apis/<group>/<version> and
//       their definitions. A definition the server already has is kept as the server has it (a
//       remote server's copy of, say, io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta is the same
//       type); kube-aggregator renames a conflicting one instead, which only matters for two
//       different types under one name.
// The remote documents are fetched by the aggregator (aggregator/index.ts) with the extension
// servers' discovery; everything here is synchronous and built again only when they change.
import { stringifyJSON } from '../../codec/int64.js';
import { encodeOpenAPIv2 } from './gnostic.js';
import type { OpenAPIDocs } from './index.js';
import { sortedObject, type JsonObject } from './json.js';

export interface RemoteDocument {
  /** the v3 document's name: 'apis/<group>/<version>' */
  name: string;
  v3?: { body: Uint8Array; hash: string };
  /** the extension server's v2 document, its paths already those of this group version */
  v2?: JsonObject;
}

export interface RemoteOpenAPI {
  /** the documents of the available remote group versions, and a text that changes whenever they do */
  documents(): { docs: RemoteDocument[]; sig: string };
}

/** the part of an extension server's v2 document that belongs to one group version */
export function v2ForGroupVersion(doc: unknown, group: string, version: string): JsonObject | undefined {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  const d = doc as JsonObject;
  const prefix = `/apis/${group}/${version}`;
  const paths: JsonObject = {};
  const src = d.paths && typeof d.paths === 'object' && !Array.isArray(d.paths) ? (d.paths as JsonObject) : {};
  for (const [p, v] of Object.entries(src)) if (p === prefix || p === `${prefix}/` || p.startsWith(`${prefix}/`)) paths[p] = v;
  const definitions = d.definitions && typeof d.definitions === 'object' && !Array.isArray(d.definitions) ? (d.definitions as JsonObject) : {};
  return { paths, definitions };
}

/** `local` with the remote documents added (see the top of this file) */
export function withRemote(local: OpenAPIDocs & { v2Object(): JsonObject }, remote: RemoteOpenAPI): OpenAPIDocs {
  let index: { base: Uint8Array; sig: string; body: Uint8Array } | undefined;
  let v2: { base: JsonObject; sig: string; json: Uint8Array; object: JsonObject; proto?: Uint8Array } | undefined;

  /** the merged v2 document, when some remote document has a v2 part (else the server's own serves) */
  const mergedV2 = () => {
    const { docs, sig } = remote.documents();
    if (!docs.some((d) => d.v2)) return undefined;
    const base = local.v2Object();
    if (v2 && v2.base === base && v2.sig === sig) return v2;
    const paths: JsonObject = { ...((base.paths as JsonObject) ?? {}) };
    const definitions: JsonObject = { ...((base.definitions as JsonObject) ?? {}) };
    for (const d of docs) {
      if (!d.v2) continue;
      for (const [p, v] of Object.entries((d.v2.paths as JsonObject) ?? {})) paths[p] = v;
      for (const [n, v] of Object.entries((d.v2.definitions as JsonObject) ?? {})) if (!(n in definitions)) definitions[n] = v;
    }
    const object: JsonObject = { ...base, paths: sortedObject(paths), definitions: sortedObject(definitions) };
    v2 = { base, sig, object, json: new Uint8Array(Buffer.from(stringifyJSON(object), 'utf8')) };
    return v2;
  };
  return {
    v3Index(): Uint8Array {
      const base = local.v3Index();
      const { docs, sig } = remote.documents();
      const own = docs.filter((d) => d.v3);
      if (!own.length) return base;
      if (index && index.base === base && index.sig === sig) return index.body;
      const parsed = JSON.parse(Buffer.from(base).toString('utf8')) as { paths?: Record<string, unknown> };
      const paths: Record<string, unknown> = { ...(parsed.paths ?? {}) };
      for (const d of own) paths[d.name] = { serverRelativeURL: `/openapi/v3/${d.name}?hash=${d.v3!.hash}` };
      const body = new Uint8Array(Buffer.from(JSON.stringify({ paths: sortedObject(paths) }), 'utf8'));
      index = { base, sig, body };
      return body;
    },
    v3Doc(path: string) {
      const name = path.replace(/^\/+|\/+$/g, '');
      const r = remote.documents().docs.find((d) => d.name === name && d.v3);
      return r ? r.v3 : local.v3Doc(path);
    },
    v2Json(): Uint8Array {
      return mergedV2()?.json ?? local.v2Json();
    },
    v2Proto(): Uint8Array {
      const m = mergedV2();
      if (!m) return local.v2Proto();
      m.proto ??= encodeOpenAPIv2(m.object);
      return m.proto;
    },
  };
}
