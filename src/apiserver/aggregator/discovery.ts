// The group versions of remote APIServices in discovery, as kube-aggregator serves them:
// - the legacy APIGroupList (/apis) and APIGroup (/apis/<group>) are made from the APIServices,
//   groups ordered by groupPriorityMinimum (highest first, then by APIService name) and versions
//   by versionPriority (then Kubernetes' version order), as handler_apis.go does; the groups this
//   server serves keep their order and the remote ones are placed among them by that rule;
// - aggregated discovery (apidiscovery.k8s.io v2, v2beta1) carries, for each remote group
//   version, what its extension server says of it (its aggregated /apis, else its legacy
//   /apis/<group>/<version>) with freshness Current, or an empty Stale entry when the extension
//   server could not be asked (handler_discovery.go), which kubectl reports as "stale
//   GroupVersion discovery".
import { compareVersions } from '../crd/customkind.js';

/** one remote group version in discovery */
export interface RemoteVersion {
  /** the APIService's name, <version>.<group> */
  name: string;
  group: string;
  version: string;
  groupPriority: number;
  versionPriority: number;
  /** its APIVersionDiscovery (version, resources, freshness) */
  entry: any;
}

/** where a group stands: its highest groupPriorityMinimum, and the name of the APIService that gives it */
export interface GroupRank {
  priority: number;
  name: string;
}

/** kube-aggregator's order of APIServices: groupPriorityMinimum (highest first), then name */
function byGroupPriority(a: GroupRank, b: GroupRank): number {
  return a.priority !== b.priority ? b.priority - a.priority : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** the rank of each group among APIServices (the first of the group in kube-aggregator's order) */
export function groupRanks(apiServices: readonly any[]): Map<string, GroupRank> {
  const out = new Map<string, GroupRank>();
  for (const s of apiServices) {
    const group: string = s?.spec?.group ?? '';
    const r = { priority: Number(s?.spec?.groupPriorityMinimum ?? 0), name: String(s?.metadata?.name ?? '') };
    const cur = out.get(group);
    if (!cur || byGroupPriority(r, cur) < 0) out.set(group, r);
  }
  return out;
}

/** the remote versions by group, groups and versions in kube-aggregator's order */
function remoteGroups(remote: readonly RemoteVersion[]): { group: string; rank: GroupRank; versions: RemoteVersion[] }[] {
  const ranks = groupRanks(remote.map((r) => ({ metadata: { name: r.name }, spec: { group: r.group, groupPriorityMinimum: r.groupPriority } })));
  const byGroup = new Map<string, RemoteVersion[]>();
  for (const r of remote) byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), r]);
  return [...byGroup.entries()]
    .map(([group, versions]) => ({
      group,
      rank: ranks.get(group)!,
      versions: versions.sort((a, b) => (a.versionPriority !== b.versionPriority ? b.versionPriority - a.versionPriority : compareVersions(a.version, b.version))),
    }))
    .sort((a, b) => byGroupPriority(a.rank, b.rank));
}

/**
 * The local groups with the remote ones placed among them: a remote group goes before the first
 * local group that ranks after it (a local group without an APIService, apiregistration.k8s.io,
 * ranks first); a group both serve gets the remote versions after its own.
 */
function merge<T>(
  local: T[],
  remote: readonly RemoteVersion[],
  rankOf: (group: string) => GroupRank | undefined,
  nameOf: (item: T) => string,
  make: (group: string, versions: RemoteVersion[]) => T,
  extend: (item: T, versions: RemoteVersion[]) => T,
): T[] {
  const out = [...local];
  for (const g of remoteGroups(remote)) {
    const same = out.findIndex((x) => nameOf(x) === g.group);
    if (same >= 0) {
      out[same] = extend(out[same]!, g.versions);
      continue;
    }
    let at = out.findIndex((x) => {
      const r = rankOf(nameOf(x));
      return r !== undefined && byGroupPriority(g.rank, r) < 0;
    });
    if (at < 0) at = out.length;
    out.splice(at, 0, make(g.group, g.versions));
  }
  return out;
}

const gvOf = (r: RemoteVersion) => ({ groupVersion: `${r.group}/${r.version}`, version: r.version });

/** /apis in the legacy form: the APIGroups of the remote group versions among the local ones */
export function mergeLegacyGroups(local: any[], remote: readonly RemoteVersion[], rankOf: (group: string) => GroupRank | undefined): any[] {
  return merge(
    local,
    remote,
    rankOf,
    (g) => g.name,
    (group, versions) => apiGroupOf(group, versions),
    (g, versions) => ({ ...g, versions: [...g.versions, ...versions.filter((v) => !g.versions.some((x: any) => x.version === v.version)).map(gvOf)] }),
  );
}

/** convertToDiscoveryAPIGroup: the group of these versions (already in order), the first preferred */
export function apiGroupOf(group: string, versions: readonly RemoteVersion[]): any {
  return { name: group, versions: versions.map(gvOf), preferredVersion: gvOf(versions[0]!) };
}

/** /apis aggregated: the APIGroupDiscovery items with the remote group versions */
export function mergeAggregatedGroups(local: any[], remote: readonly RemoteVersion[], rankOf: (group: string) => GroupRank | undefined): any[] {
  return merge(
    local,
    remote,
    rankOf,
    (g) => g.metadata?.name,
    (group, versions) => ({ metadata: { name: group, creationTimestamp: null }, versions: versions.map((v) => v.entry) }),
    (g, versions) => ({ ...g, versions: [...g.versions, ...versions.filter((v) => !g.versions.some((x: any) => x.version === v.version)).map((v) => v.entry)] }),
  );
}

/** the Stale entry of a group version whose extension server did not answer */
export function staleEntry(version: string): any {
  return { version, freshness: 'Stale' };
}

/** the media types of aggregated discovery kube-aggregator asks an extension server for */
export const AGGREGATED_ACCEPT = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

/** is this Content-Type aggregated discovery (v2 or v2beta1)? */
export function isAggregatedType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const params = new Map(
    contentType
      .split(';')
      .slice(1)
      .map((p) => p.trim().split('=') as [string, string]),
  );
  return params.get('g') === 'apidiscovery.k8s.io' && (params.get('v') === 'v2' || params.get('v') === 'v2beta1') && params.get('as') === 'APIGroupDiscoveryList';
}

/** the entry of group/version in an aggregated APIGroupDiscoveryList, or undefined */
export function entryFromAggregated(list: any, group: string, version: string): any | undefined {
  for (const g of list?.items ?? []) {
    if ((g?.metadata?.name ?? '') !== group) continue;
    for (const v of g.versions ?? []) if (v?.version === version) return { ...v, freshness: 'Current' };
  }
  return undefined;
}

/**
 * endpoints.ConvertGroupVersionIntoToDiscovery: an APIResourceList as an APIVersionDiscovery
 * (subresources under their resource). A responseKind without group and version gets the group
 * version's (the legacy list leaves them out for the resources of its own group version).
 */
export function entryFromResourceList(list: any, group: string, version: string): any {
  const resources: any[] = [];
  const byName = new Map<string, any>();
  const kindOf = (r: any) => ({ group: r.group ?? group, version: r.version ?? version, kind: r.kind ?? '' });
  for (const r of list?.resources ?? []) {
    if (typeof r?.name !== 'string' || r.name.includes('/')) continue;
    const d: any = { resource: r.name, responseKind: kindOf(r), scope: r.namespaced ? 'Namespaced' : 'Cluster', singularResource: r.singularName ?? '', verbs: r.verbs ?? [] };
    if (r.shortNames?.length) d.shortNames = r.shortNames;
    if (r.categories?.length) d.categories = r.categories;
    resources.push(d);
    byName.set(r.name, d);
  }
  for (const r of list?.resources ?? []) {
    if (typeof r?.name !== 'string' || !r.name.includes('/')) continue;
    const [parent, sub] = r.name.split('/', 2) as [string, string];
    const p = byName.get(parent);
    if (!p) continue;
    (p.subresources ??= []).push({ subresource: sub, responseKind: kindOf(r), verbs: r.verbs ?? [] });
  }
  return { version, resources, freshness: 'Current' };
}
