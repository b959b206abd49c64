// Resource-level helpers over the REST client, by group/version/resource (client-go's dynamic
// client and pager), watch streams, and discovery (client-go's discovery client over the
// legacy /api, /apis and APIResourceList documents).

import { parseJSON } from '../codec/int64.js';
import { APIError, isResourceExpired, TransportError, type RESTClient } from './rest.js';
import type { Status } from '../machinery/errors.js';

// ── object shapes ────────────────────────────────────────────────────────────

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
}

/** Any API object: TypeMeta, ObjectMeta and the kind's own fields. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: any;
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface GroupVersion {
  group: string;
  version: string;
}

/** `apps/v1` → {apps, v1}; `v1` → {'', v1}; more than one slash is an error (schema.ParseGroupVersion). */
export function parseGroupVersion(gv: string): GroupVersion {
  if (gv === '' || gv === '/') return { group: '', version: '' };
  const parts = gv.split('/');
  if (parts.length === 1) return { group: '', version: parts[0]! };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  throw new Error(`unexpected GroupVersion string: ${gv}`);
}

export function groupVersionString(gv: GroupVersion): string {
  return gv.group ? `${gv.group}/${gv.version}` : gv.version;
}

/** A GVR from an apiVersion and a resource: `gvr('apps/v1', 'deployments')`. */
export function gvr(apiVersion: string, resource: string): GroupVersionResource {
  return { ...parseGroupVersion(apiVersion), resource };
}

/** `deployments.v1.apps` (schema.GroupVersionResource.String()-like, for logs). */
export function gvrString(r: GroupVersionResource): string {
  return r.group ? `${r.group}/${r.version}, Resource=${r.resource}` : `/${r.version}, Resource=${r.resource}`;
}

/** The REST path of a resource, a namespace's collection, an object or a subresource. */
export function resourcePath(r: GroupVersionResource, namespace = '', name = '', subresource = ''): string {
  let p = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  if (namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${r.resource}`;
  if (name) p += `/${encodeURIComponent(name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}

/** `namespace/name`, or `name` for cluster-scoped objects (cache.MetaNamespaceKeyFunc). */
export function objectKey(obj: { metadata?: ObjectMeta }): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

/** Splits a key made by objectKey. */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

// ── options ─────────────────────────────────────────────────────────────────

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  limit?: number;
  continue?: string;
  timeoutSeconds?: number;
}

export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  sendInitialEvents?: boolean;
  resourceVersionMatch?: 'NotOlderThan';
  /** events carry PartialObjectMetadata (the objects' metadata only), as client-go's metadata informers ask */
  metadataOnly?: boolean;
}

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  dryRun?: string[];
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

function writeQuery(o: WriteOptions = {}): Record<string, string | undefined> {
  return { dryRun: o.dryRun ? 'All' : undefined, fieldManager: o.fieldManager, fieldValidation: o.fieldValidation };
}

function listQuery(o: Omit<ListOptions, "resourceVersionMatch"> & Omit<WatchOptions, "resourceVersionMatch"> & { resourceVersionMatch?: string } = {}): Record<string, string | number | boolean | undefined> {
  return {
    labelSelector: o.labelSelector,
    fieldSelector: o.fieldSelector,
    resourceVersion: o.resourceVersion,
    resourceVersionMatch: o.resourceVersionMatch,
    limit: o.limit && o.limit > 0 ? o.limit : undefined,
    continue: o.continue,
    timeoutSeconds: o.timeoutSeconds,
    allowWatchBookmarks: o.allowWatchBookmarks ? true : undefined,
    sendInitialEvents: o.sendInitialEvents === undefined ? undefined : o.sendInitialEvents,
  };
}

/** Accept header for metadata-only lists (client-go's metadata client). */
export const PARTIAL_METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json';
export const PARTIAL_METADATA_ACCEPT = 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json';

// ── watch ───────────────────────────────────────────────────────────────────

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T;
}

/**
 * An open watch: an async stream of events. ADDED, MODIFIED, DELETED and BOOKMARK events are
 * yielded; an ERROR event ends the stream by throwing an APIError made from its Status (410
 * Expired/Gone is `isResourceExpired`). When the server ends the watch (timeoutSeconds) or the
 * connection drops, the stream just ends: `endedBy` says why, and the caller resumes from the
 * last resourceVersion it saw (as client-go's StreamWatcher does).
 */
export class Watch<T extends KubeObject = KubeObject> implements AsyncIterable<WatchEvent<T>> {
  private stopped = false;
  /** why the stream ended: 'server' (clean end), 'stopped', or the transport error */
  endedBy?: 'server' | 'stopped' | Error;

  constructor(
    private readonly body: AsyncIterable<Buffer>,
    private readonly closeFn: () => void,
    readonly path: string,
  ) {}

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.closeFn();
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    let pending = '';
    try {
      for await (const chunk of this.body) {
        if (this.stopped) break;
        pending += chunk.toString('utf8');
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, nl).trim();
          pending = pending.slice(nl + 1);
          if (!line) continue;
          const ev = this.decode(line);
          if (ev) yield ev;
          if (this.stopped) break;
        }
      }
      const rest = pending.trim();
      if (rest && !this.stopped) {
        const ev = this.decode(rest);
        if (ev) yield ev;
      }
      this.endedBy ??= this.stopped ? 'stopped' : 'server';
    } catch (e) {
      if (e instanceof APIError) {
        this.endedBy = e;
        throw e;
      }
      // a dropped connection ends the watch without an error, as client-go's StreamWatcher
      this.endedBy = this.stopped ? 'stopped' : (e as Error);
    } finally {
      this.stop();
    }
  }

  private decode(line: string): WatchEvent<T> | undefined {
    let ev: any;
    try {
      ev = parseJSON(line);
    } catch (e) {
      throw new TransportError(`watch ${this.path}: unable to decode an event from the watch stream: ${(e as Error).message}`, 'EBADRESPONSE', 'GET', this.path, e);
    }
    if (!ev || typeof ev !== 'object' || typeof ev.type !== 'string') return undefined;
    if (ev.type === 'ERROR') {
      const st = ev.object as Status;
      const status: Status =
        st && st.kind === 'Status'
          ? st
          : { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 500, reason: 'InternalError', message: `unexpected watch ERROR event: ${line.slice(0, 256)}` };
      throw new APIError(status, 'WATCH', this.path, status.details?.retryAfterSeconds);
    }
    return ev as WatchEvent<T>;
  }
}

// ── the resource client ─────────────────────────────────────────────────────

/** Operations on one resource (and one namespace, or all of them / cluster scope with ''). */
export class ResourceClient<T extends KubeObject = KubeObject> {
  constructor(
    readonly rest: RESTClient,
    readonly gvr: GroupVersionResource,
    readonly ns = '',
  ) {}

  /** The same resource in another namespace ('' for all namespaces / cluster scope). */
  namespace(ns: string): ResourceClient<T> {
    return new ResourceClient<T>(this.rest, this.gvr, ns);
  }

  path(name = '', subresource = '', namespace = this.ns): string {
    return resourcePath(this.gvr, namespace, name, subresource);
  }

  get(name: string, opts: { resourceVersion?: string } & CallOptions = {}): Promise<T> {
    return this.rest.json<T>({ method: 'GET', path: this.path(name), query: { resourceVersion: opts.resourceVersion }, signal: opts.signal, timeoutMs: opts.timeoutMs });
  }

  /** One list request (one page when `limit` is set). */
  list(opts: ListOptions & CallOptions = {}): Promise<KubeList<T>> {
    return this.rest.json<KubeList<T>>({ method: 'GET', path: this.path(), query: listQuery(opts), signal: opts.signal, timeoutMs: opts.timeoutMs });
  }

  /** A metadata-only list (PartialObjectMetadataList). */
  listMetadata(opts: ListOptions & CallOptions = {}): Promise<KubeList<KubeObject>> {
    return this.rest.json<KubeList<KubeObject>>({ method: 'GET', path: this.path(), query: listQuery(opts), accept: PARTIAL_METADATA_LIST_ACCEPT, signal: opts.signal, timeoutMs: opts.timeoutMs });
  }

  /**
   * Every item, page by page (client-go's pager): `pageSize` items per request (500 by default;
   * 0 for one request). If a continue token expires mid-way the whole list is read again in
   * one request, as the pager's full-list fallback does.
   */
  async listAll(opts: ListOptions & CallOptions & { pageSize?: number; metadataOnly?: boolean } = {}): Promise<KubeList<T>> {
    const pageSize = opts.pageSize ?? 500;
    const fetch = (o: ListOptions & CallOptions) => (opts.metadataOnly ? (this.listMetadata(o) as Promise<KubeList<any>>) : this.list(o));
    // the pager does not page lists served from the watch cache (resourceVersion=0)
    if (pageSize <= 0 || opts.resourceVersion === '0') return fetch({ ...opts, limit: undefined, continue: undefined });
    const items: T[] = [];
    let first: KubeList<T> | undefined;
    let cont = '';
    for (;;) {
      let page: KubeList<T>;
      try {
        page = await fetch({ ...opts, limit: pageSize, continue: cont || undefined, resourceVersion: cont ? undefined : opts.resourceVersion, resourceVersionMatch: cont ? undefined : opts.resourceVersionMatch });
      } catch (e) {
        if (cont && isResourceExpired(e)) return fetch({ ...opts, limit: undefined, continue: undefined });
        throw e;
      }
      first ??= page;
      items.push(...(page.items ?? []));
      cont = page.metadata?.continue ?? '';
      if (!cont) {
        return { apiVersion: first.apiVersion, kind: first.kind, metadata: { resourceVersion: page.metadata?.resourceVersion ?? first.metadata?.resourceVersion }, items };
      }
    }
  }

  create(obj: T, opts: WriteOptions & CallOptions = {}): Promise<T> {
    const ns = obj.metadata?.namespace || this.ns;
    return this.rest.json<T>({ method: 'POST', path: this.path('', '', ns), query: writeQuery(opts), body: obj, signal: opts.signal, timeoutMs: opts.timeoutMs });
  }

  /** PUT of the whole object (metadata.resourceVersion, when set, must match). */
  update(obj: T, opts: WriteOptions & CallOptions = {}): Promise<T> {
    return this.updateSubresource(obj, '', opts);
  }

  /** PUT of the status subresource. */
  updateStatus(obj: T, opts: WriteOptions & CallOptions = {}): Promise<T> {
    return this.updateSubresource(obj, 'status', opts);
  }

  /** PUT of a subresource (`status`, `finalize`, `scale`). */
  updateSubresource(obj: T, subresource: string, opts: WriteOptions & CallOptions = {}): Promise<T> {
    const name = obj.metadata?.name;
    if (!name) throw new Error('resource name may not be empty');
    const ns = obj.metadata?.namespace || this.ns;
    return this.rest.json<T>({ method: 'PUT', path: this.path(name, subresource, ns), query: writeQuery(opts), body: obj, signal: opts.signal, timeoutMs: opts.timeoutMs });
  }

  /** DELETE: the deleted (or now terminating) object, or a Status, as the server answers. */
  delete(name: string, opts: DeleteOptions & CallOptions = {}): Promise<T | Status> {
    const { signal, timeoutMs, ...del } = opts;
    return this.rest.json<T | Status>({ method: 'DELETE', path: this.path(name), body: { kind: 'DeleteOptions', apiVersion: 'v1', ...del }, signal, timeoutMs });
  }

  /** DELETE of the collection (deletecollection) matching the list options. */
  deleteCollection(opts: DeleteOptions & CallOptions = {}, list: ListOptions = {}): Promise<KubeList<T> | Status> {
    const { signal, timeoutMs, ...del } = opts;
    return this.rest.json<KubeList<T> | Status>({
      method: 'DELETE',
      path: this.path(),
      query: listQuery(list),
      body: { kind: 'DeleteOptions', apiVersion: 'v1', ...del },
      signal,
      timeoutMs,
    });
  }

  /** Opens a watch. Connect failures reject (APIError 410 when the resourceVersion is too old). */
  async watch(opts: WatchOptions & { signal?: AbortSignal } = {}): Promise<Watch<T>> {
    const path = this.path();
    const s = await this.rest.stream({ method: 'GET', path, query: { ...listQuery(opts), watch: true }, accept: opts.metadataOnly ? PARTIAL_METADATA_ACCEPT : undefined, signal: opts.signal });
    const w = new Watch<T>(s.body, s.close, path);
    if (opts.signal) {
      if (opts.signal.aborted) w.stop();
      else opts.signal.addEventListener('abort', () => w.stop(), { once: true });
    }
    return w;
  }
}

/** A resource client: `resource(rest, gvr('v1', 'configmaps'), 'default')`. */
export function resource<T extends KubeObject = KubeObject>(rest: RESTClient, r: GroupVersionResource, namespace = ''): ResourceClient<T> {
  return new ResourceClient<T>(rest, r, namespace);
}

// ── discovery ───────────────────────────────────────────────────────────────

export interface APIResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

export interface APIResourceList {
  kind?: string;
  apiVersion?: string;
  groupVersion: string;
  resources: APIResource[];
}

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

export interface APIGroup {
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion?: GroupVersionForDiscovery;
}

/** Some groups could not be discovered (client-go's ErrGroupDiscoveryFailed); the rest can be used. */
export class GroupDiscoveryFailedError extends Error {
  constructor(readonly groups: Map<string, Error>) {
    const parts = [...groups].map(([gv, e]) => `${gv}: ${e.message}`).sort();
    super(`unable to retrieve the complete list of server APIs: ${parts.join(', ')}`);
    this.name = 'GroupDiscoveryFailedError';
  }
}

export interface DiscoveryResult {
  lists: APIResourceList[];
  /** set when some group versions failed; `lists` holds the others */
  error?: GroupDiscoveryFailedError;
}

export class DiscoveryClient {
  constructor(readonly rest: RESTClient) {}

  serverVersion(opts: CallOptions = {}): Promise<Record<string, string>> {
    return this.rest.json({ method: 'GET', path: '/version', ...opts });
  }

  /** Every API group, the legacy core group ('') first, as client-go's ServerGroups. */
  async serverGroups(opts: CallOptions = {}): Promise<APIGroup[]> {
    const groups: APIGroup[] = [];
    try {
      const core = await this.rest.json<{ versions?: string[] }>({ method: 'GET', path: '/api', ...opts });
      const versions = (core.versions ?? []).map((v) => ({ groupVersion: v, version: v }));
      if (versions.length) groups.push({ name: '', versions, preferredVersion: versions[0] });
    } catch (e) {
      // a server without the legacy group answers 403/404 here; that's allowed
      if (!(e instanceof APIError && (e.code === 404 || e.code === 403))) throw e;
    }
    try {
      const list = await this.rest.json<{ groups?: APIGroup[] }>({ method: 'GET', path: '/apis', ...opts });
      groups.push(...(list.groups ?? []));
    } catch (e) {
      if (!(e instanceof APIError && (e.code === 404 || e.code === 403))) throw e;
    }
    return groups;
  }

  /** The APIResourceList of one group version (`v1`, `apps/v1`). */
  async serverResourcesForGroupVersion(groupVersion: string, opts: CallOptions = {}): Promise<APIResourceList> {
    const gv = parseGroupVersion(groupVersion);
    const path = gv.group ? `/apis/${gv.group}/${gv.version}` : `/api/${gv.version}`;
    const list = await this.rest.json<APIResourceList>({ method: 'GET', path, ...opts });
    list.groupVersion ||= groupVersion;
    list.resources ??= [];
    return list;
  }

  /** Every group version's resources, fetched in parallel; failures are collected per group version. */
  async serverGroupsAndResources(opts: CallOptions = {}): Promise<{ groups: APIGroup[] } & DiscoveryResult> {
    const groups = await this.serverGroups(opts);
    const gvs = groups.flatMap((g) => g.versions.map((v) => v.groupVersion));
    const failed = new Map<string, Error>();
    const results = await Promise.all(
      gvs.map((gv) =>
        this.serverResourcesForGroupVersion(gv, opts).catch((e: Error) => {
          // a group version that disappeared between the two calls is skipped, as client-go does
          if (!(e instanceof APIError && e.code === 404)) failed.set(gv, e);
          return undefined;
        }),
      ),
    );
    const lists = results.filter((l): l is APIResourceList => l !== undefined);
    return { groups, lists, error: failed.size ? new GroupDiscoveryFailedError(failed) : undefined };
  }

  /**
   * The resources of every group at its preferred version, plus resources that only other
   * versions of the group serve (client-go's ServerPreferredResources). Subresources excluded.
   */
  async serverPreferredResources(opts: CallOptions = {}): Promise<DiscoveryResult> {
    const { groups, lists, error } = await this.serverGroupsAndResources(opts);
    const byGV = new Map(lists.map((l) => [l.groupVersion, l]));
    const out: APIResourceList[] = [];
    for (const g of groups) {
      const preferred = g.preferredVersion?.groupVersion ?? g.versions[0]?.groupVersion;
      const order = [...g.versions.map((v) => v.groupVersion)].sort((a, b) => (a === preferred ? -1 : b === preferred ? 1 : 0));
      const seen = new Set<string>();
      for (const gv of order) {
        const l = byGV.get(gv);
        if (!l) continue;
        const resources = l.resources.filter((r) => !r.name.includes('/') && !seen.has(r.name));
        for (const r of resources) seen.add(r.name);
        if (resources.length) out.push({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources });
      }
    }
    return { lists: out, error };
  }

  /** serverPreferredResources restricted to namespaced resources. */
  async serverPreferredNamespacedResources(opts: CallOptions = {}): Promise<DiscoveryResult> {
    const r = await this.serverPreferredResources(opts);
    return { lists: filterResources(r.lists, (x) => x.namespaced), error: r.error };
  }
}

/** Keeps the resources a predicate accepts; drops lists left empty (discovery.FilteredBy). */
export function filterResources(lists: APIResourceList[], pred: (r: APIResource, groupVersion: string) => boolean): APIResourceList[] {
  const out: APIResourceList[] = [];
  for (const l of lists) {
    const resources = l.resources.filter((r) => pred(r, l.groupVersion));
    if (resources.length) out.push({ ...l, resources });
  }
  return out;
}

/** Accepts resources that have all the given verbs (discovery.SupportsAllVerbs). */
export function supportsAllVerbs(...verbs: string[]): (r: APIResource) => boolean {
  return (r) => verbs.every((v) => r.verbs?.includes(v));
}

/** The GVRs of discovered resources; group versions that do not parse are reported, not fatal. */
export function groupVersionResources(lists: APIResourceList[]): { gvrs: GroupVersionResource[]; verbs: Map<string, string[]>; error?: Error } {
  const gvrs: GroupVersionResource[] = [];
  const verbs = new Map<string, string[]>();
  const errs: string[] = [];
  for (const l of lists) {
    let gv: GroupVersion;
    try {
      gv = parseGroupVersion(l.groupVersion);
    } catch (e) {
      errs.push((e as Error).message);
      continue;
    }
    for (const r of l.resources) {
      const x = { ...gv, resource: r.name };
      gvrs.push(x);
      verbs.set(gvrKey(x), r.verbs ?? []);
    }
  }
  return { gvrs, verbs, error: errs.length ? new Error(errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`) : undefined };
}

export function gvrKey(r: GroupVersionResource): string {
  return `${r.group}/${r.version}/${r.resource}`;
}
