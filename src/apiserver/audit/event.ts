// The audit.k8s.io/v1 Event as the log writes it: the fields in the order of Kubernetes' type,
// timestamps as MicroTime (RFC 3339 in UTC with microseconds), maps with sorted keys.
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Level, Stage } from './policy.js';

export interface AuditUserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface AuditObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

export interface AuditResponseStatus {
  metadata: Record<string, never>;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

export interface AuditEvent {
  kind: 'Event';
  apiVersion: 'audit.k8s.io/v1';
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: AuditUserInfo | Record<string, never>;
  impersonatedUser?: AuditUserInfo;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: AuditObjectReference;
  responseStatus?: AuditResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** metav1.MicroTime's JSON form: `2006-01-02T15:04:05.000000Z` (UTC) */
export function microTime(ms: number): string {
  const d = new Date(Math.floor(ms));
  const micros = Math.floor(ms * 1000) % 1_000_000;
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(micros, 6)}Z`;
}

/** a map with its keys sorted, as Go's JSON encoder writes maps (undefined when empty) */
export function sortedMap<V>(m: Record<string, V> | undefined): Record<string, V> | undefined {
  if (!m) return undefined;
  const keys = Object.keys(m);
  if (!keys.length) return undefined;
  const out: Record<string, V> = {};
  for (const k of keys.sort()) out[k] = m[k]!;
  return out;
}

export function auditUser(u: { name: string; uid?: string; groups: string[]; extra?: Record<string, string[]> }): AuditUserInfo {
  const out: AuditUserInfo = { username: u.name };
  if (u.uid) out.uid = u.uid;
  if (u.groups.length) out.groups = [...u.groups];
  const extra = sortedMap(u.extra);
  if (extra) out.extra = extra;
  return out;
}

/** an address as Go prints it (IPv4-mapped IPv6 addresses as IPv4) */
function canonicalIP(s: string): string | undefined {
  let v = s.trim();
  if (v.startsWith('[') && v.endsWith(']')) v = v.slice(1, -1);
  const kind = isIP(v);
  if (!kind) return undefined;
  if (kind === 6) {
    const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(v);
    if (m) return m[1]!;
    return v.toLowerCase();
  }
  return v;
}

/** the client's addresses: X-Forwarded-For, then X-Real-Ip, then the connection's peer (as Kubernetes' SourceIPs) */
export function sourceIPs(req: IncomingMessage): string[] {
  const ips: string[] = [];
  const xff = req.headers['x-forwarded-for'];
  const fwd = Array.isArray(xff) ? xff[0] : xff;
  if (fwd) {
    for (const part of fwd.split(',')) {
      const ip = canonicalIP(part);
      if (ip) ips.push(ip);
    }
  }
  const xri = req.headers['x-real-ip'];
  const real = canonicalIP((Array.isArray(xri) ? xri[0] : xri) ?? '');
  if (real && !ips.includes(real)) ips.push(real);
  const remote = canonicalIP(req.socket?.remoteAddress ?? '');
  if (remote && ips[ips.length - 1] !== remote) ips.push(remote);
  return ips;
}

const MAX_USER_AGENT = 1024;

export function userAgentOf(req: IncomingMessage): string {
  const ua = req.headers['user-agent'] ?? '';
  return ua.length > MAX_USER_AGENT ? ua.slice(0, MAX_USER_AGENT) + '...TRUNCATED' : ua;
}

/** an object (or each item of a list, or each row object of a Table) without metadata.managedFields */
export function withoutManagedFields(obj: unknown): unknown {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return obj;
  const o = obj as Record<string, any>;
  let out = o;
  const strip = (x: any) => (x && typeof x === 'object' && x.metadata && typeof x.metadata === 'object' && 'managedFields' in x.metadata ? { ...x, metadata: { ...x.metadata, managedFields: undefined } } : x);
  out = strip(out);
  if (Array.isArray(o.items)) out = { ...out, items: o.items.map(strip) };
  if (o.kind === 'Table' && Array.isArray(o.rows)) out = { ...out, rows: o.rows.map((r: any) => (r && r.object ? { ...r, object: strip(r.object) } : r)) };
  return out;
}
