// Discovery: /api, /apis, /api/v1, /apis/<group>/<version>, in the legacy form (APIVersions,
// APIGroupList, APIResourceList) and in aggregated discovery (apidiscovery.k8s.io v2 and v2beta1,
// chosen by Accept). kubectl tells the forms apart by the response Content-Type alone.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KindDecl } from '../schema/model.js';
import { GROUP_ORDER } from '../schema/kinds.js';
import { parseMediaRanges } from '../codec/negotiate.js';
import { encodeEnvelope, encodeMessage } from '../codec/protobuf.js';
import { compareVersions } from './crd/customkind.js';
import type { RemoteDiscovery } from './aggregator/index.js';

interface GroupVersion {
  group: string;
  version: string;
  kinds: KindDecl[];
}

/**
 * A group version served here without kinds of its own (the built-in Resource Metrics API,
 * metricsserver/): its APIResourceList's resources and its aggregated APIVersionDiscovery. Its
 * group follows the others (it has a group of its own).
 */
export interface ExtraGroupVersion {
  group: string;
  version: string;
  resources: any[];
  entry: any;
}

/**
 * Where kube-apiserver 1.33 stores a kind in another group/version than it serves it: events.k8s.io
 * Events as core Events, autoscaling/v1 HPAs as autoscaling/v2, and the networking kinds that
 * became v1 in 1.33 as v1beta1 (a storage version must be readable by a 1.32 server).
 */
const STORED_AS: Record<string, string> = {
  'events.k8s.io/v1/Event': '/v1/Event',
  'autoscaling/v1/HorizontalPodAutoscaler': 'autoscaling/v2/HorizontalPodAutoscaler',
  'networking.k8s.io/v1/IPAddress': 'networking.k8s.io/v1beta1/IPAddress',
  'networking.k8s.io/v1/ServiceCIDR': 'networking.k8s.io/v1beta1/ServiceCIDR',
};

/** the hash of the group/version/kind the resource is stored as (clients compare it to detect storage migrations) */
function storageVersionHash(k: KindDecl): string {
  const served = `${k.group}/${k.version}/${k.kind}`;
  const stored = k.custom?.storage ? `${k.group}/${k.custom.storage.version}/${k.custom.storage.kind}` : (STORED_AS[served] ?? served);
  return createHash('sha256').update(stored).digest().subarray(0, 8).toString('base64');
}

export class Discovery {
  private gvs: GroupVersion[] = [];
  private cache = new Map<string, { body: Buffer; etag: string; type: string }>();
  private readonly builtin: GroupVersion[];
  /** the group versions of remote APIServices (aggregator/), placed among these */
  private remote?: RemoteDiscovery;
  /** group versions served without kinds (setExtra) */
  private extra: ExtraGroupVersion[] = [];

  constructor(kinds: KindDecl[]) {
    this.builtin = Discovery.groupVersions(kinds);
    this.gvs = this.builtin;
  }

  /**
   * The kinds served from CustomResourceDefinitions changed: their groups follow the built-in
   * ones (by name), each group's versions in Kubernetes' version order (the first is preferred).
   */
  setCustomKinds(kinds: KindDecl[]): void {
    const byGV = new Map<string, GroupVersion>();
    for (const k of kinds) {
      const id = `${k.group}/${k.version}`;
      let gv = byGV.get(id);
      if (!gv) byGV.set(id, (gv = { group: k.group, version: k.version, kinds: [] }));
      gv.kinds.push(k);
    }
    const custom = [...byGV.values()].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : compareVersions(a.version, b.version)));
    for (const gv of custom) gv.kinds.sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
    this.gvs = [...this.builtin, ...custom];
    this.cache = new Map();
  }

  /** The group versions served without kinds changed (metricsserver/). */
  setExtra(extra: ExtraGroupVersion[]): void {
    this.extra = extra.filter((x) => !this.gvs.some((g) => g.group === x.group));
    this.cache = new Map();
  }

  private extraGroups(): string[] {
    const out: string[] = [];
    for (const x of this.extra) if (!out.includes(x.group)) out.push(x.group);
    return out;
  }

  /** The remote APIServices' group versions changed (the aggregator's hook). */
  setRemote(remote: RemoteDiscovery | undefined): void {
    this.remote = remote;
    this.cache = new Map();
  }

  private static groupVersions(kinds: KindDecl[]): GroupVersion[] {
    const byGV = new Map<string, GroupVersion>();
    for (const k of kinds) {
      const id = `${k.group}/${k.version}`;
      let gv = byGV.get(id);
      if (!gv) {
        gv = { group: k.group, version: k.version, kinds: [] };
        byGV.set(id, gv);
      }
      gv.kinds.push(k);
    }
    const rank = (g: string) => {
      const i = GROUP_ORDER.indexOf(g);
      return i < 0 ? GROUP_ORDER.length : i;
    };
    const gvs = [...byGV.values()].sort((a, b) => rank(a.group) - rank(b.group) || a.group.localeCompare(b.group));
    for (const gv of gvs) gv.kinds.sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
    return gvs;
  }

  groupVersions(): { group: string; version: string }[] {
    return [...this.gvs, ...this.extra].map((g) => ({ group: g.group, version: g.version }));
  }

  hasGroupVersion(group: string, version: string): boolean {
    return [...this.gvs, ...this.extra].some((g) => g.group === group && g.version === version);
  }

  hasGroup(group: string): boolean {
    return [...this.gvs, ...this.extra].some((g) => g.group === group);
  }

  // ---- legacy ----

  apiVersions(serverAddress: string): unknown {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
  }

  private apiGroup(group: string): unknown {
    const versions = [...this.gvs, ...this.extra].filter((g) => g.group === group).map((g) => ({ groupVersion: `${g.group}/${g.version}`, version: g.version }));
    return { name: group, versions, preferredVersion: versions[0] };
  }

  apiGroupList(): unknown {
    const groups: string[] = [];
    for (const g of this.gvs) if (g.group !== '' && !groups.includes(g.group)) groups.push(g.group);
    groups.push(...this.extraGroups());
    const local = groups.map((g) => this.apiGroup(g));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: this.remote ? this.remote.legacy(local) : local };
  }

  apiGroupDoc(group: string): unknown {
    return { kind: 'APIGroup', apiVersion: 'v1', ...(this.apiGroup(group) as object) };
  }

  apiResourceList(group: string, version: string): unknown | undefined {
    const gv = this.gvs.find((g) => g.group === group && g.version === version);
    if (!gv) {
      const x = this.extra.find((g) => g.group === group && g.version === version);
      return x ? { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources: x.resources } : undefined;
    }
    const resources: any[] = [];
    for (const k of gv.kinds) {
      const r: any = { name: k.resource, singularName: k.singular, namespaced: k.namespaced, kind: k.kind, verbs: k.verbs };
      if (k.shortNames.length) r.shortNames = k.shortNames;
      if (k.categories.length) r.categories = k.categories;
      if (!k.virtual) r.storageVersionHash = storageVersionHash(k);
      resources.push(r);
      for (const s of k.subresources) {
        const sr: any = { name: `${k.resource}/${s.name}`, singularName: '', namespaced: k.namespaced, kind: s.kind, verbs: s.verbs };
        if (s.group !== k.group || s.version !== k.version) {
          sr.group = s.group;
          sr.version = s.version;
        }
        resources.push(sr);
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
  }

  // ---- aggregated ----

  private aggregatedGroup(group: string, dv: 'v2' | 'v2beta1'): unknown {
    const versions = this.gvs
      .filter((g) => g.group === group)
      .map((g) => ({
        version: g.version,
        resources: g.kinds.map((k) => {
          const r: any = {
            resource: k.resource,
            // (ConvertGroupVersionIntoToDiscovery copies the APIResource's group and version, empty
            // for a built-in resource; a custom resource's are its own, as the CRD handler sets them)
            responseKind: k.custom ? { group: k.group, version: k.version, kind: k.kind } : { group: '', version: '', kind: k.kind },
            scope: k.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: k.singular,
            verbs: k.verbs,
          };
          if (k.shortNames.length) r.shortNames = k.shortNames;
          if (k.categories.length) r.categories = k.categories;
          if (k.subresources.length) {
            r.subresources = k.subresources.map((s) => ({
              subresource: s.name,
              // (a subresource of another group version, as scale, eviction and token are, names it)
              responseKind: s.group === k.group && s.version === k.version && !k.custom ? { group: '', version: '', kind: s.kind } : { group: s.group, version: s.version, kind: s.kind },
              verbs: s.verbs,
            }));
          }
          return r;
        }),
        freshness: 'Current',
      }));
    void dv;
    return { metadata: { name: group, creationTimestamp: null }, versions };
  }

  aggregated(core: boolean, dv: 'v2' | 'v2beta1'): unknown {
    const groups: string[] = [];
    for (const g of this.gvs) if ((g.group === '') === core && !groups.includes(g.group)) groups.push(g.group);
    const items = groups.map((g) => this.aggregatedGroup(g, dv));
    if (!core) for (const g of this.extraGroups()) items.push({ metadata: { name: g, creationTimestamp: null }, versions: this.extra.filter((x) => x.group === g).map((x) => x.entry) });
    return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${dv}`, metadata: {}, items: !core && this.remote ? this.remote.aggregated(items) : items };
  }

  /**
   * Serve /api or /apis: aggregated discovery when the Accept header asks for it (v2 preferred in
   * the client's order), else the legacy document.
   */
  serveRoot(req: IncomingMessage, res: ServerResponse, core: boolean, serverAddress: string): void {
    const ranges = parseMediaRanges(req.headers.accept);
    let agg: { dv: 'v2' | 'v2beta1'; proto: boolean } | undefined;
    let legacyProto = false;
    for (const r of ranges) {
      const t = `${r.type}/${r.subtype}`;
      if (r.params['as'] === 'APIGroupDiscoveryList' && r.params['g'] === 'apidiscovery.k8s.io' && (r.params['v'] === 'v2' || r.params['v'] === 'v2beta1')) {
        if (t === 'application/json' || t === 'application/vnd.kubernetes.protobuf') {
          agg = { dv: r.params['v'] as 'v2' | 'v2beta1', proto: t === 'application/vnd.kubernetes.protobuf' };
          break;
        }
        continue;
      }
      if (t === 'application/json' || t === '*/*' || t === 'application/*') break;
      if (t === 'application/vnd.kubernetes.protobuf') {
        legacyProto = true;
        break;
      }
    }
    void legacyProto;
    if (agg) {
      const key = `${core ? 'api' : 'apis'}:${agg.dv}:${agg.proto ? 'pb' : 'json'}`;
      let c = this.cache.get(key);
      if (!c) {
        const doc = this.aggregated(core, agg.dv) as any;
        const body = agg.proto
          ? Buffer.from(encodeEnvelope(doc.apiVersion, doc.kind, encodeMessage(`io.k8s.api.apidiscovery.${agg.dv}.APIGroupDiscoveryList`, doc)))
          : Buffer.from(JSON.stringify(doc));
        // one ETag per document, whatever version and encoding is asked for: kube-apiserver's is the
        // hash of the v2 list's JSON
        const v2 = agg.dv === 'v2' && !agg.proto ? body : Buffer.from(JSON.stringify(this.aggregated(core, 'v2')));
        const etag = `"${createHash('sha512').update(v2).digest('hex').toUpperCase()}"`;
        const type = `${agg.proto ? 'application/vnd.kubernetes.protobuf' : 'application/json'};g=apidiscovery.k8s.io;v=${agg.dv};as=APIGroupDiscoveryList`;
        c = { body, etag, type };
        this.cache.set(key, c);
      }
      res.setHeader('Vary', 'Accept');
      res.setHeader('ETag', c.etag);
      res.setHeader('Cache-Control', 'public');
      if (req.headers['if-none-match'] === c.etag) {
        res.statusCode = 304;
        res.end();
        return;
      }
      res.statusCode = 200;
      res.setHeader('Content-Type', c.type);
      res.setHeader('Content-Length', c.body.length);
      res.end(c.body);
      return;
    }
    const doc = core ? this.apiVersions(serverAddress) : this.apiGroupList();
    const body = Buffer.from(JSON.stringify(doc));
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', body.length);
    res.end(body);
  }
}
