// The parts of an HTTP request authentication reads: its headers, each value of a repeated
// header on its own (as Go's http.Header keeps them: `X-Remote-Group: a` twice is two groups,
// `X-Remote-Group: a, b` once is one), and its TLS socket. An IncomingMessage is one; so is a
// plain `{ headers }` (TokenReview's request that carries nothing but a bearer token).

export interface AuthnRequest {
  /** Node's headers: lower-case names, repeated headers joined (or arrays for a few) */
  headers: Record<string, string | string[] | undefined>;
  /** Node 18.3+: every value of every header, lower-case names */
  headersDistinct?: Record<string, string[] | undefined>;
  /** the TLS socket, for client certificates */
  socket?: unknown;
  url?: string;
}

/** Every value of a header (case-insensitive name), in order. */
export function headerValues(req: AuthnRequest, name: string): string[] {
  const n = name.toLowerCase();
  // a header absent from `headers` is absent from `headersDistinct` too; most of the headers
  // authentication asks for are absent, and Node builds headersDistinct on first use
  if (req.headers[n] === undefined) return [];
  const d = req.headersDistinct?.[n];
  if (d) return d;
  const v = req.headers[n];
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/** Go's Header.Get: the first value, '' when absent. */
export function headerFirst(req: AuthnRequest, name: string): string {
  return headerValues(req, name)[0] ?? '';
}

/** The lower-case names of the request's headers. */
export function headerNames(req: AuthnRequest): string[] {
  const out: string[] = [];
  for (const k of Object.keys(req.headers)) {
    // HTTP/2 pseudo-headers (:path, ...) are not headers of the request
    if (k.charCodeAt(0) === 58 /* ':' */) continue;
    const v = req.headers[k];
    if (v === undefined) continue;
    if (typeof v === 'string' || v.length > 0 || headerValues(req, k).length > 0) out.push(k);
  }
  return out;
}

/**
 * Go's url.PathUnescape: `%XX` sequences decoded (to bytes, read as UTF-8); undefined when a `%`
 * is not followed by two hex digits.
 */
export function pathUnescape(s: string): string | undefined {
  if (!s.includes('%')) return s;
  const bytes: number[] = [];
  const src = Buffer.from(s, 'utf8');
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === 0x25) {
      const h = src.subarray(i + 1, i + 3).toString('latin1');
      if (!/^[0-9a-fA-F]{2}$/.test(h)) return undefined;
      bytes.push(parseInt(h, 16));
      i += 2;
    } else bytes.push(c);
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A key of user extra carried in a header name: lower-cased and %-unescaped (kept as is when malformed). */
export function unescapeExtraKey(encoded: string): string {
  return pathUnescape(encoded) ?? encoded;
}

/** A request with only the given headers (TokenReview's, tests'). */
export function syntheticRequest(headers: Record<string, string | string[]>): AuthnRequest {
  const h: Record<string, string | string[]> = {};
  const d: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    const n = k.toLowerCase();
    const vals = Array.isArray(v) ? v : [v];
    d[n] = [...(d[n] ?? []), ...vals];
    h[n] = d[n]!.length === 1 ? d[n]![0]! : d[n]!.join(', ');
  }
  return { headers: h, headersDistinct: d };
}
