// Request info: what a URL and method ask for, in Kubernetes' terms (API group, version,
// namespace, resource, name, subresource, verb). Authorization, routing and audit read it.

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** 'api' or 'apis' for resource requests */
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** get, list, watch, create, update, patch, delete, deletecollection; for non-resource requests the lower-cased method */
  verb: string;
  /** path segments after the subresource (for proxy and similar) */
  parts: string[];
  /** the legacy /watch/ path form was used */
  legacyWatch: boolean;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** Query booleans as Kubernetes reads them: present and not "false"/"0" means true. */
export function queryBool(v: string | null | undefined): boolean {
  if (v === null || v === undefined) return false;
  const l = v.toLowerCase();
  return l !== 'false' && l !== '0';
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/**
 * A path segment's escapes decoded as Go's url.PathUnescape decodes them: each %XX is one byte,
 * whatever bytes they make (a lone %E9 too: Go keeps the byte, and its JSON writes U+FFFD for
 * it, as the UTF-8 decoding here does). Undefined for a bad escape.
 */
export function unescapePathSegment(seg: string): string | undefined {
  const out: number[] = [];
  const raw = Buffer.from(seg, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c !== 0x25) {
      out.push(c);
      continue;
    }
    const h = raw.toString('latin1', i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(h)) return undefined;
    out.push(parseInt(h, 16));
    i += 2;
  }
  return utf8.decode(Uint8Array.from(out));
}

export function parseRequestInfo(method: string, path: string, query: URLSearchParams | undefined): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    verb: method.toLowerCase(),
    parts: [],
    legacyWatch: false,
  };
  // the segments without a leading empty one and without one trailing empty one
  let segs = path.split('/');
  const from = segs[0] === '' ? 1 : 0;
  const to = segs.length > from && segs[segs.length - 1] === '' ? segs.length - 1 : segs.length;
  if (from > 0 || to < segs.length) segs = segs.slice(from, to);
  if (segs.length < 2) return info;
  const prefix = segs[0]!;
  if (prefix !== 'api' && prefix !== 'apis') return info;
  let rest: string[];
  if (prefix === 'api') {
    info.apiVersion = segs[1]!;
    rest = segs.slice(2);
  } else {
    if (segs.length < 3) return info;
    info.apiGroup = segs[1]!;
    info.apiVersion = segs[2]!;
    rest = segs.slice(3);
  }
  info.apiPrefix = prefix;
  if (rest.length === 0) return info; // group-version discovery
  // only a segment with an escape needs decoding
  for (let i = 0; i < rest.length; i++) {
    const seg = rest[i]!;
    if (!seg.includes('%')) continue;
    const d = unescapePathSegment(seg);
    if (d === undefined) return info;
    rest[i] = d;
  }
  info.isResourceRequest = true;
  switch (method) {
    case 'POST':
      info.verb = 'create';
      break;
    case 'GET':
    case 'HEAD':
      info.verb = 'get';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = 'delete';
      break;
    default:
      info.verb = '';
  }
  if (rest[0] === 'watch') {
    info.legacyWatch = true;
    rest = rest.slice(1);
    info.verb = 'watch';
  }
  if (rest[0] === 'namespaces') {
    if (rest.length > 1) {
      info.namespace = rest[1]!;
      if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
    }
  }
  info.resource = rest[0] ?? '';
  if (rest.length >= 2) info.name = rest[1]!;
  if (rest.length >= 3) info.subresource = rest[2]!;
  if (rest.length > 3) info.parts = rest.slice(3);
  if (info.namespace && info.resource === 'namespaces' && rest[0] === 'namespaces') {
    // /namespaces/<name>[/status|/finalize]: the namespace is the object itself
    info.name = rest[1] ?? '';
  }
  if (info.name === '') {
    if (info.verb === 'get') info.verb = 'list';
    else if (info.verb === 'delete') info.verb = 'deletecollection';
  }
  if (info.verb === 'list' && query && query.has('watch') && queryBool(query.get('watch'))) info.verb = 'watch';
  if (info.legacyWatch && info.name) {
    // /watch/<resource>/<name>: a watch of one object
    info.verb = 'watch';
  }
  return info;
}
