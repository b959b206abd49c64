// kubectl's discovery stack: the disk cache in --cache-dir (client-go's CachedDiscoveryClient, with
// kubectl's layout, TTL and invalidate-on-miss), the in-memory cache under it, the category
// expander and the REST mapper that resolves `cm`, `configmap`, `ConfigMap`, `configmaps`,
// `deployments.apps`, `deployments.v1.apps` and `Deployment.v1.apps` as kubectl does.
//
// Disk layout: <cache-dir>/discovery/<host_port>/servergroups.json and
// <cache-dir>/discovery/<host_port>/<group>/<version>/serverresources.json, written atomically
// (0660, directories 0750) and trusted for 6 hours. A file read from disk makes the cache "not
// fresh"; a lookup that fails against a not-fresh cache invalidates it and asks the server again.

import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync, chmodSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { APIError } from '../client/rest.js';
import { DiscoveryClient, parseGroupVersion, type APIGroup, type APIResource, type APIResourceList } from '../client/resources.js';

export const DISCOVERY_TTL_MS = 6 * 60 * 60 * 1000;

/** kubectl's computeDiscoverCacheDir: `https://127.0.0.1:6443` → `<parent>/127.0.0.1_6443`. */
export function discoveryCacheDir(parent: string, host: string): string {
  const schemeless = host.replace('https://', '').replace('http://', '');
  const safe = schemeless.replace(/[^(\w/.)]/g, '_');
  return join(parent, safe);
}

export interface APIGroupList {
  kind: 'APIGroupList';
  apiVersion: 'v1';
  groups: APIGroup[];
}

/** An error of one discovery call, reported as client-go reports it. */
export class DiscoveryError extends Error {
  constructor(
    message: string,
    override readonly cause: unknown,
  ) {
    super(message);
    this.name = 'DiscoveryError';
  }
}

/** Some group versions could not be read (client-go's ErrGroupDiscoveryFailed). */
export class GroupDiscoveryFailed extends Error {
  constructor(readonly groups: Map<string, Error>) {
    const parts = [...groups.keys()].sort().map((gv) => `${gv}: ${groups.get(gv)!.message}`);
    super(`unable to retrieve the complete list of server APIs: ${parts.join(', ')}`);
    this.name = 'GroupDiscoveryFailed';
  }
}

export interface DiscoveryHooks {
  /** utilruntime.HandleError: kubectl logs these as `"Unhandled Error" err="..."`. */
  handleError?: (msg: string) => void;
  /** klog V-level messages */
  log?: (level: number, msg: string) => void;
  /** the Go text of an error (transport failures as *url.Error) */
  describe?: (e: unknown) => string;
}

/** Orders an APIGroupList's fields as Go encodes them. */
function groupListJSON(groups: APIGroup[]): APIGroupList {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups.map((g) => {
      const out: Record<string, unknown> = { name: g.name, versions: g.versions.map((v) => ({ groupVersion: v.groupVersion, version: v.version })) };
      if (g.preferredVersion) out.preferredVersion = { groupVersion: g.preferredVersion.groupVersion, version: g.preferredVersion.version };
      return out as unknown as APIGroup;
    }),
  };
}

function resourceListJSON(l: APIResourceList): APIResourceList {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: l.groupVersion,
    resources: l.resources.map((r) => {
      const out: Record<string, unknown> = { name: r.name, singularName: r.singularName ?? '', namespaced: r.namespaced };
      if (r.group) out.group = r.group;
      if (r.version) out.version = r.version;
      out.kind = r.kind;
      out.verbs = r.verbs ?? [];
      if (r.shortNames?.length) out.shortNames = r.shortNames;
      if (r.categories?.length) out.categories = r.categories;
      if (r.storageVersionHash) out.storageVersionHash = r.storageVersionHash;
      return out as unknown as APIResource;
    }),
  };
}

/** client-go's memory cache of discovery (memcache), over the live discovery client. */
class MemCache {
  private valid = false;
  private groupList: APIGroup[] | undefined;
  private byGV = new Map<string, { list?: APIResourceList; err?: Error }>();

  constructor(
    private readonly live: DiscoveryClient,
    private readonly hooks: DiscoveryHooks,
  ) {}

  invalidate(): void {
    this.valid = false;
    this.groupList = undefined;
    this.byGV.clear();
  }

  private async refresh(): Promise<void> {
    let groups: APIGroup[];
    try {
      groups = await this.live.serverGroups();
    } catch (e) {
      this.hooks.handleError?.(`couldn't get current server API group list: ${this.hooks.describe ? this.hooks.describe(e) : (e as Error).message}`);
      throw e;
    }
    if (groups.length === 0) {
      this.hooks.handleError?.(`couldn't get current server API group list: <nil>`);
      throw new DiscoveryError('no groups', undefined);
    }
    const entries = await Promise.all(
      groups.flatMap((g) =>
        g.versions.map(async (v) => {
          try {
            return [v.groupVersion, { list: await this.live.serverResourcesForGroupVersion(v.groupVersion) }] as [string, { list?: APIResourceList; err?: Error }];
          } catch (e) {
            this.hooks.handleError?.(`couldn't get resource list for ${v.groupVersion}: ${this.hooks.describe ? this.hooks.describe(e) : (e as Error).message}`);
            return [v.groupVersion, { err: e as Error }] as [string, { list?: APIResourceList; err?: Error }];
          }
        }),
      ),
    );
    this.byGV = new Map(entries);
    this.groupList = groups;
    this.valid = true;
  }

  async serverGroups(): Promise<APIGroup[]> {
    if (!this.valid) await this.refresh();
    return this.groupList!;
  }

  async serverResourcesForGroupVersion(gv: string): Promise<APIResourceList> {
    if (!this.valid) await this.refresh();
    const e = this.byGV.get(gv);
    if (!e) throw new DiscoveryError('not found in discovery cache', undefined);
    if (e.err) throw e.err;
    return e.list!;
  }
}

/**
 * client-go's disk-cached discovery client as kubectl builds it for --cache-dir.
 */
export class CachedDiscovery {
  private fresh = true;
  private invalidated = false;
  private ourFiles = new Set<string>();
  private readonly mem: MemCache;

  constructor(
    readonly live: DiscoveryClient,
    readonly cacheDirectory: string,
    private readonly hooks: DiscoveryHooks = {},
    readonly ttlMs = DISCOVERY_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.mem = new MemCache(live, hooks);
  }

  /** Whether everything read so far came from the server (or files this client wrote). */
  isFresh(): boolean {
    return this.fresh;
  }

  invalidate(): void {
    this.ourFiles = new Set();
    this.fresh = true;
    this.invalidated = true;
    this.mem.invalidate();
  }

  private readCached(file: string): string | undefined {
    const ours = this.ourFiles.has(file);
    if (this.invalidated && !ours) return undefined;
    let st;
    try {
      st = statSync(file);
    } catch {
      return undefined;
    }
    if (this.now() > st.mtimeMs + this.ttlMs) return undefined;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
    this.fresh = this.fresh && ours;
    return text;
  }

  private writeCached(file: string, obj: unknown): void {
    try {
      mkdirSync(dirname(file), { recursive: true, mode: 0o750 });
      const tmp = `${file}.${randomBytes(5).toString('hex')}`;
      writeFileSync(tmp, JSON.stringify(obj) + '\n');
      try {
        chmodSync(tmp, 0o660);
        renameSync(tmp, file);
        this.ourFiles.add(file);
      } catch (e) {
        try {
          unlinkSync(tmp);
        } catch {
          /* gone */
        }
        throw e;
      }
    } catch (e) {
      this.hooks.log?.(1, `failed to write cache to ${file} due to ${(e as Error).message}`);
    }
  }

  async serverGroups(): Promise<APIGroup[]> {
    const file = join(this.cacheDirectory, 'servergroups.json');
    const cached = this.readCached(file);
    if (cached !== undefined) {
      try {
        const l = JSON.parse(cached) as APIGroupList;
        if (l && Array.isArray(l.groups)) {
          this.hooks.log?.(10, `returning cached discovery info from ${file}`);
          return l.groups;
        }
      } catch {
        /* fall through to the server */
      }
    }
    let groups: APIGroup[];
    try {
      groups = await this.mem.serverGroups();
    } catch (e) {
      this.hooks.log?.(3, `skipped caching discovery info due to ${(e as Error).message}`);
      throw e;
    }
    if (groups.length === 0) {
      this.hooks.log?.(3, 'skipped caching discovery info, no groups found');
      return groups;
    }
    this.writeCached(file, groupListJSON(groups));
    return groups;
  }

  async serverResourcesForGroupVersion(groupVersion: string): Promise<APIResourceList> {
    const file = join(this.cacheDirectory, groupVersion, 'serverresources.json');
    const cached = this.readCached(file);
    if (cached !== undefined) {
      try {
        const l = JSON.parse(cached) as APIResourceList;
        if (l && Array.isArray(l.resources)) {
          this.hooks.log?.(10, `returning cached discovery info from ${file}`);
          l.groupVersion ||= groupVersion;
          return l;
        }
      } catch {
        /* fall through */
      }
    }
    let list: APIResourceList;
    try {
      list = await this.mem.serverResourcesForGroupVersion(groupVersion);
    } catch (e) {
      this.hooks.log?.(3, `skipped caching discovery info due to ${(e as Error).message}`);
      throw e;
    }
    if (!list || list.resources.length === 0) {
      this.hooks.log?.(3, 'skipped caching discovery info, no resources found');
      return list;
    }
    this.writeCached(file, resourceListJSON(list));
    return list;
  }

  /** discovery.ServerGroupsAndResources: groups, then every group version's resources in discovery order. */
  async serverGroupsAndResources(): Promise<{ groups: APIGroup[]; lists: APIResourceList[]; error?: Error }> {
    const groups = await this.serverGroups();
    const failed = new Map<string, Error>();
    const results = await Promise.all(
      groups.flatMap((g) =>
        g.versions.map((v) =>
          this.serverResourcesForGroupVersion(v.groupVersion).catch((e: Error) => {
            if (!(e instanceof APIError && e.code === 404)) failed.set(v.groupVersion, e);
            return undefined;
          }),
        ),
      ),
    );
    const lists = results.filter((l): l is APIResourceList => l !== undefined);
    return { groups, lists, error: failed.size ? new GroupDiscoveryFailed(failed) : undefined };
  }
}

// ─────────────────────────────────────────────────────────────────────────────
// REST mapping
// ─────────────────────────────────────────────────────────────────────────────

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

export interface GVR {
  group: string;
  version: string;
  resource: string;
}

export interface RESTMapping {
  resource: GVR;
  gvk: GVK;
  namespaced: boolean;
}

export function gvkString(g: GVK): string {
  // schema.GroupVersionKind.String(): "group/version, Kind=kind"
  return (g.group ? `${g.group}/${g.version}` : `/${g.version}`) + `, Kind=${g.kind}`;
}

/** meta.NoResourceMatchError */
export class NoResourceMatchError extends Error {
  constructor(readonly partial: GVR) {
    super(`no matches for ${gvrDisplay(partial)}`);
    this.name = 'NoResourceMatchError';
  }
}

/** meta.NoKindMatchError */
export class NoKindMatchError extends Error {
  constructor(
    readonly groupKind: { group: string; kind: string },
    readonly searchedVersions: string[],
  ) {
    const gk = groupKind.group ? `${groupKind.kind}.${groupKind.group}` : groupKind.kind;
    let msg: string;
    if (searchedVersions.length === 0) msg = `no matches for kind "${groupKind.kind}" in group "${groupKind.group}"`;
    else if (searchedVersions.length === 1) msg = `no matches for kind "${groupKind.kind}" in version "${groupKind.group ? groupKind.group + '/' : ''}${searchedVersions[0]}"`;
    else msg = `no matches for kind "${groupKind.kind}" in versions ${JSON.stringify(searchedVersions.map((v) => (groupKind.group ? groupKind.group + '/' : '') + v))}`;
    void gk;
    super(msg);
    this.name = 'NoKindMatchError';
  }
}

export function isNoMatchError(e: unknown): boolean {
  return e instanceof NoResourceMatchError || e instanceof NoKindMatchError;
}

function gvrDisplay(r: GVR): string {
  // schema.GroupVersionResource.String()-like, as meta's error prints the partial resource
  return `${r.group}/${r.version}, Resource=${r.resource}`;
}

interface Entry {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
}

/** meta.UnsafeGuessKindToResource's singular: the lowercased kind. */
function guessSingular(kind: string): string {
  return kind.toLowerCase();
}

/** The discovery-built priority REST mapper (restmapper.NewDiscoveryRESTMapper). */
class DiscoveryMapper {
  readonly entries: Entry[] = [];
  /** (group, version|'*') patterns in priority order; core v1 first */
  readonly priority: { group: string | '*'; version: string | '*' }[] = [{ group: '', version: 'v1' }];
  readonly groupVersions = new Map<string, string[]>();

  constructor(groups: APIGroup[], lists: APIResourceList[]) {
    const byGV = new Map(lists.map((l) => [l.groupVersion, l]));
    const groupNames: string[] = [];
    for (const g of groups) {
      groupNames.push(g.name);
      const preferred = g.preferredVersion?.version ?? '';
      const versions: string[] = [];
      if (preferred && byGV.has(g.preferredVersion!.groupVersion)) this.priority.push({ group: g.name, version: preferred });
      for (const v of g.versions) {
        const list = byGV.get(v.groupVersion);
        if (!list) continue;
        if (v.version !== preferred) this.priority.push({ group: g.name, version: v.version });
        versions.push(v.version);
        for (const r of list.resources) {
          if (r.name.includes('/')) continue;
          this.entries.push({
            group: g.name,
            version: v.version,
            plural: r.name,
            singular: r.singularName || guessSingular(r.kind),
            kind: r.kind,
            namespaced: r.namespaced,
          });
        }
      }
      this.groupVersions.set(g.name, versions);
    }
    for (const g of groupNames) this.priority.push({ group: g, version: '*' });
  }

  /** MultiRESTMapper.KindsFor over DefaultRESTMappers (resource names compared in lower case). */
  kindsFor(input: GVR): GVK[] {
    const resource = input.resource.toLowerCase();
    if (!resource) throw new Error(`a resource must be present, got: ${gvrDisplay(input)}`);
    const out: GVK[] = [];
    const seen = new Set<string>();
    for (const e of this.entries) {
      if (input.group && e.group !== input.group) continue;
      if (input.version && input.version !== '*' && e.version !== input.version) continue;
      if (e.plural !== resource && e.singular !== resource) continue;
      const k = `${e.group}/${e.version}/${e.kind}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({ group: e.group, version: e.version, kind: e.kind });
    }
    if (out.length === 0) throw new NoResourceMatchError(input);
    return out;
  }

  /** PriorityRESTMapper.KindFor */
  kindFor(input: GVR): GVK {
    const gvks = this.kindsFor(input);
    let remaining = gvks;
    for (const p of this.priority) {
      const matched = remaining.filter((g) => (p.group === '*' || p.group === g.group) && (p.version === '*' || p.version === g.version));
      if (matched.length === 0) continue;
      if (matched.length === 1) return matched[0]!;
      remaining = matched;
    }
    throw new Error(`${input.resource} matches multiple kinds [${gvks.map((g) => `${g.group}/${g.version}, Kind=${g.kind}`).join(' ')}]`);
  }

  /** PriorityRESTMapper.RESTMapping */
  restMapping(gk: { group: string; kind: string }, version?: string): RESTMapping {
    const versions = version ? [version] : (this.groupVersions.get(gk.group) ?? []);
    const mappings: RESTMapping[] = [];
    for (const v of versions) {
      for (const e of this.entries) {
        if (e.group !== gk.group || e.version !== v) continue;
        if (e.kind !== gk.kind && e.kind.toLowerCase() !== gk.kind) continue;
        mappings.push({ resource: { group: e.group, version: e.version, resource: e.plural }, gvk: { group: e.group, version: e.version, kind: e.kind }, namespaced: e.namespaced });
        break;
      }
    }
    if (mappings.length === 0) throw new NoKindMatchError(gk, version ? [version] : []);
    const priorities = version ? [{ group: gk.group, version }, ...this.priority] : this.priority;
    let remaining = mappings;
    for (const p of priorities) {
      const matched = remaining.filter((m) => (p.group === '*' || p.group === m.gvk.group) && (p.version === '*' || p.version === m.gvk.version));
      if (matched.length === 0) continue;
      if (matched.length === 1) return matched[0]!;
      remaining = matched;
    }
    return remaining[0]!;
  }
}

/**
 * kubectl's REST mapper: a deferred discovery mapper (built on first use; reset and retried once
 * when a lookup fails on cached data) behind the short-name expander.
 */
export class KubectlRESTMapper {
  private delegate: DiscoveryMapper | undefined;

  constructor(
    readonly discovery: CachedDiscovery,
    private readonly warn: (msg: string) => void = () => {},
  ) {}

  private async getDelegate(): Promise<DiscoveryMapper> {
    if (this.delegate) return this.delegate;
    const { groups, lists } = await this.discovery.serverGroupsAndResources();
    this.delegate = new DiscoveryMapper(groups, lists);
    return this.delegate;
  }

  reset(): void {
    this.discovery.invalidate();
    this.delegate = undefined;
  }

  private async deferred<T>(fn: (m: DiscoveryMapper) => T): Promise<T> {
    const m = await this.getDelegate();
    try {
      return fn(m);
    } catch (e) {
      if (!this.discovery.isFresh()) {
        this.reset();
        return this.deferred(fn);
      }
      throw e;
    }
  }

  /** shortcutExpander.expandResourceShortcut */
  async expandResourceShortcut(resource: GVR): Promise<GVR> {
    let lists: APIResourceList[];
    try {
      lists = (await this.discovery.serverGroupsAndResources()).lists;
    } catch {
      return resource;
    }
    const shortcuts: { shortGroup: string; short: string; longGroup: string; long: string }[] = [];
    for (const l of lists) {
      let gv;
      try {
        gv = parseGroupVersion(l.groupVersion);
      } catch {
        continue;
      }
      for (const r of l.resources) for (const s of r.shortNames ?? []) shortcuts.push({ shortGroup: gv.group, short: s, longGroup: gv.group, long: r.name });
    }
    for (const l of lists) {
      let gv;
      try {
        gv = parseGroupVersion(l.groupVersion);
      } catch {
        continue;
      }
      if (resource.group && resource.group !== gv.group) continue;
      for (const r of l.resources) if (resource.resource === r.name || resource.resource === r.singularName) return resource;
    }
    let found: GVR | undefined;
    const warned = new Set<string>();
    for (const s of shortcuts) {
      if (resource.group && resource.group !== s.shortGroup) continue;
      if (resource.resource !== s.short) continue;
      if (found) {
        if (s.longGroup === found.group && s.long === found.resource) continue;
        const key = `${s.long}.${s.longGroup}`;
        if (!warned.has(key)) {
          this.warn(`short name "${resource.resource}" could also match lower priority resource ${s.longGroup ? `${s.long}.${s.longGroup}` : s.long}`);
          warned.add(key);
        }
        continue;
      }
      found = { group: s.longGroup, version: resource.version, resource: s.long };
    }
    if (found) return found;
    if (!resource.group) return resource;
    for (const s of shortcuts) {
      if (!s.shortGroup.startsWith(resource.group)) continue;
      if (resource.resource === s.short) return { group: s.longGroup, version: resource.version, resource: s.long };
    }
    return resource;
  }

  /** shortcutExpander.KindFor over the deferred mapper. */
  async kindFor(resource: GVR): Promise<GVK> {
    try {
      const r = await this.expandResourceShortcut(resource);
      return await this.deferred((m) => m.kindFor(r));
    } catch (e) {
      if (isNoMatchError(e)) {
        const r = await this.expandResourceShortcut(resource);
        return this.deferred((m) => m.kindFor(r));
      }
      throw e;
    }
  }

  async restMapping(gk: { group: string; kind: string }, version?: string): Promise<RESTMapping> {
    return this.deferred((m) => m.restMapping(gk, version));
  }

  /** The resources in a category (`all`, ...) from discovery, as the category expander lists them. */
  async expandCategory(category: string): Promise<{ group: string; resource: string }[] | undefined> {
    let lists: APIResourceList[];
    try {
      lists = (await this.discovery.serverGroupsAndResources()).lists;
    } catch {
      return undefined;
    }
    const out: { group: string; resource: string }[] = [];
    const seen = new Set<string>();
    for (const l of lists) {
      const gv = parseGroupVersion(l.groupVersion);
      for (const r of l.resources) {
        if (!r.categories?.includes(category)) continue;
        const k = `${gv.group}/${r.name}`;
        if (seen.has(k)) continue;
        seen.add(k);
        out.push({ group: gv.group, resource: r.name });
      }
    }
    return out.length ? out : undefined;
  }

  /**
   * The builder's mappingFor: a resource (plural, singular, short name, `resource.group`,
   * `resource.version.group`) or a kind (`Kind`, `Kind.group`, `Kind.version.group`).
   */
  async mappingFor(arg: string): Promise<RESTMapping> {
    const { fully, groupResource } = parseResourceArg(arg);
    let gvk: GVK | undefined;
    if (fully) {
      try {
        gvk = await this.kindFor(fully);
      } catch {
        gvk = undefined;
      }
    }
    if (!gvk) {
      try {
        gvk = await this.kindFor({ ...groupResource, version: '' });
      } catch {
        gvk = undefined;
      }
    }
    if (gvk) return this.restMapping({ group: gvk.group, kind: gvk.kind }, gvk.version);
    const { fully: fullyGVK, groupKind } = parseKindArg(arg);
    const candidate = fullyGVK ?? { ...groupKind, version: '' };
    if (candidate.group || candidate.version || candidate.kind) {
      try {
        return await this.restMapping({ group: candidate.group, kind: candidate.kind }, candidate.version || undefined);
      } catch {
        /* fall through */
      }
    }
    try {
      return await this.restMapping(groupKind);
    } catch (e) {
      if (isNoMatchError(e)) throw new Error(`the server doesn't have a resource type ${JSON.stringify(groupResource.resource)}`);
      throw e;
    }
  }
}

/** schema.ParseResourceArg */
export function parseResourceArg(arg: string): { fully?: GVR; groupResource: { group: string; resource: string } } {
  let fully: GVR | undefined;
  const parts = arg.split('.');
  if (parts.length >= 3) fully = { resource: parts[0]!, version: parts[1]!, group: parts.slice(2).join('.') };
  const i = arg.indexOf('.');
  const groupResource = i < 0 ? { group: '', resource: arg } : { group: arg.slice(i + 1), resource: arg.slice(0, i) };
  return { fully, groupResource };
}

/** schema.ParseKindArg */
export function parseKindArg(arg: string): { fully?: GVK; groupKind: { group: string; kind: string } } {
  let fully: GVK | undefined;
  const parts = arg.split('.');
  if (parts.length >= 3) fully = { kind: parts[0]!, version: parts[1]!, group: parts.slice(2).join('.') };
  const i = arg.indexOf('.');
  const groupKind = i < 0 ? { group: '', kind: arg } : { group: arg.slice(i + 1), kind: arg.slice(0, i) };
  return { fully, groupKind };
}
