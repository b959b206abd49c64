// The controllers of apiextensions-apiserver in one loop over CustomResourceDefinitions: the
// naming controller (NamesAccepted, status.acceptedNames), the establishing controller
// (Established), the serving of each CRD's versions (a ResourceStore per served version over one
// storage prefix) and the finalizer that removes a deleted CRD's custom resources.
import { stringifyJSON } from '../../codec/int64.js';
import type { KindDecl } from '../../schema/model.js';
import type { Backend } from '../../storage/interface.js';
import { setDynamicNormalizer, setDynamicPruner } from '../../schema/dynamic.js';
import { setCustomRootShape } from '../../patch/ssa/shape.js';
import { shapeOf } from './ssashape.js';
import { CorruptObjectError, ResourceStore } from '../registry/store.js';
import type { CacheEvent } from '../../storage/cacher.js';
import { compareVersions, customKind, customNormalizer, customPruner, customStrategy, type CRDVersion } from './customkind.js';
import { CLEANUP_FINALIZER, setCondition } from './strategy.js';
import { API_APPROVED_ANNOTATION, apiApprovalState, isProtectedGroup } from './validation.js';
import { getType, typeForKind } from '../../schema/types.js';
import type { TypeSource } from '../openapi/source.js';
import { kindDefinition, listDefinition, type CustomTypeInfo } from './openapi.js';
import { AUTOMANAGED_LABEL, apiServiceName, type APIServiceStore } from '../apiservices.js';
import type { ServiceResolver } from '../admission/webhook.js';
import { ConversionFailedError, WebhookConverter } from './conversion.js';
import { errors } from '../../machinery/errors.js';
import { ConvertingBackend } from './convertingbackend.js';
import { applySchemaDefaults, prune, type JSONSchemaProps } from './schema.js';

export interface CRDManagerOptions {
  crds: ResourceStore;
  backend: Backend;
  historyWindowMs?: number;
  /** --enable-garbage-collector (default true) */
  garbageCollection?: boolean;
  /** group/resource pairs served by built-in kinds: a CRD may not take them */
  builtin: (group: string, resource: string) => boolean;
  /** the served kinds changed (discovery, OpenAPI) */
  onChange: () => void;
  log: { error(err: unknown, msg: string, kv?: Record<string, unknown>): void };
  /** the APIServices kube-aggregator's autoregistration keeps for the CRDs' group versions */
  apiServices?: APIServiceStore;
  /** where a conversion webhook's service reference connects (default: nowhere, every conversion fails) */
  resolveService?: ServiceResolver;
}

/** the priorities Kubernetes gives the APIService of a CRD's group version */
const CRD_GROUP_PRIORITY = 1000;
const CRD_VERSION_PRIORITY = 100;

interface Served {
  /** the spec the stores were built from */
  specKey: string;
  kinds: KindDecl[];
  stores: ResourceStore[];
  /** the storage version's store (where the cleanup lists and deletes) */
  storage: ResourceStore;
  /** the CRD is terminating: no new objects */
  terminating: boolean;
  /** the CRD object served */
  crd: any;
  /** the versions' converting storages (a CRD converted by a webhook) */
  converting: ConvertingBackend[];
}

export class CRDManager {
  private readonly served = new Map<string, Served>();
  private readonly byGVR = new Map<string, ResourceStore>();
  /** OpenAPI: the kinds' type names (and their lists') */
  private readonly types = new Map<string, { info: CustomTypeInfo; list: boolean }>();
  private watch?: { stop(): void };
  private queue: Promise<void> = Promise.resolve();
  private readonly pendingNames = new Set<string>();
  private retryTimers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly o: CRDManagerOptions) {}

  /** serve the stored CRDs, then follow their changes */
  async start(): Promise<void> {
    const list = this.o.crds.cacher.list({ prefix: this.o.crds.prefix });
    // accepted names first: a CRD established before keeps its names on restart
    const items = list.items.map((e) => e.obj).sort((a, b) => (a.metadata.creationTimestamp < b.metadata.creationTimestamp ? -1 : a.metadata.creationTimestamp > b.metadata.creationTimestamp ? 1 : 0));
    for (const crd of items) {
      try {
        await this.sync(crd.metadata.name);
      } catch (e) {
        this.o.log.error(e, 'CustomResourceDefinition sync failed', { name: crd.metadata.name });
        this.retry(crd.metadata.name, 1000);
      }
    }
    try {
      await this.syncAPIServices();
    } catch (e) {
      this.o.log.error(e, 'APIService registration of CustomResourceDefinitions failed');
    }
    this.follow(list.revision);
  }

  /** watch the CRDs from a revision; a watch the cache ends (a resync) starts again over a new list */
  private follow(revision: number): void {
    this.watch = this.o.crds.cacher.watch({
      prefix: this.o.crds.prefix,
      afterRevision: revision,
      onEvent: (ev: CacheEvent) => this.enqueue(ev.entry.name),
      onClose: () => this.refollow(100),
    });
  }

  /** list the CRDs again (every one, and every one served that is gone), then follow them */
  private refollow(ms: number): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.retryTimers.delete(t);
      if (this.stopped) return;
      try {
        const list = this.o.crds.cacher.list({ prefix: this.o.crds.prefix });
        for (const name of new Set([...list.items.map((e) => e.name), ...this.served.keys()])) this.enqueue(name);
        this.follow(list.revision);
      } catch (e) {
        this.o.log.error(e, 'Watching CustomResourceDefinitions failed');
        this.refollow(1000);
      }
    }, ms);
    t.unref();
    this.retryTimers.add(t);
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
    for (const t of this.retryTimers) clearTimeout(t);
    for (const s of this.served.values()) for (const st of s.stores) st.stop();
  }

  /** the store serving group/version/resource, if a CRD serves it */
  store(group: string, version: string, resource: string): ResourceStore | undefined {
    return this.byGVR.get(`${group}/${version}/${resource}`);
  }

  /** the CRD is being deleted: its resources take no new objects */
  terminating(store: ResourceStore): boolean {
    for (const s of this.served.values()) if (s.stores.includes(store)) return s.terminating;
    return false;
  }

  /** every served custom kind */
  kinds(): KindDecl[] {
    const out: KindDecl[] = [];
    for (const s of this.served.values()) out.push(...s.kinds);
    return out;
  }

  /** every served store */
  stores(): ResourceStore[] {
    const out: ResourceStore[] = [];
    for (const s of this.served.values()) out.push(...s.stores);
    return out;
  }

  /** the declared types, and the custom resources' schemas, for the OpenAPI documents */
  typeSource(): TypeSource {
    return {
      get: getType,
      forKind: typeForKind,
      raw: (name, dialect, ref) => {
        const t = this.types.get(name);
        if (!t) return undefined;
        if (t.list) return listDefinition(t.info, ref(name.slice(0, -'List'.length)), dialect, ref);
        return kindDefinition(t.info, dialect, ref);
      },
    };
  }

  private enqueue(name: string): void {
    if (this.stopped || this.pendingNames.has(name)) return;
    this.pendingNames.add(name);
    this.queue = this.queue.then(async () => {
      this.pendingNames.delete(name);
      if (this.stopped) return;
      try {
        await this.sync(name);
        await this.syncAPIServices();
      } catch (e) {
        this.o.log.error(e, 'CustomResourceDefinition sync failed', { name });
        this.retry(name, 1000);
      }
    });
  }

  private retry(name: string, ms: number): void {
    const t = setTimeout(() => {
      this.retryTimers.delete(t);
      this.enqueue(name);
    }, ms);
    t.unref();
    this.retryTimers.add(t);
  }

  /**
   * An APIService per group version the CRDs serve (`v1.stable.example.com`, automanaged, local),
   * as kube-aggregator's autoregistration controller keeps those it manages continuously (label
   * `true`): created when missing (deleted, say), its spec put back when it was changed, and one
   * no CRD serves any more deleted. The server runs it on every change of the CRDs and of such
   * APIServices.
   */
  async syncAPIServices(): Promise<void> {
    const store = this.o.apiServices;
    if (!store) return;
    const want = new Map<string, { group: string; version: string }>();
    for (const k of this.kinds()) want.set(apiServiceName(k), { group: k.group, version: k.version });
    const current = new Map(store.list().map((o) => [o.metadata.name as string, o]));
    for (const [name, gv] of want) {
      const cur = current.get(name);
      const spec = { group: gv.group, version: gv.version, groupPriorityMinimum: CRD_GROUP_PRIORITY, versionPriority: CRD_VERSION_PRIORITY };
      if (cur) {
        // (one the aggregator does not manage, a user's, is left alone)
        if (cur.metadata.labels?.[AUTOMANAGED_LABEL] === 'true' && !sameSpec(cur.spec, spec)) {
          await store.replaceSpec(name, cur.metadata.uid, spec).catch((e) => {
            if ((e as { code?: number }).code !== 404 && (e as { code?: number }).code !== 409) throw e;
          });
        }
        continue;
      }
      await store
        .create({
          apiVersion: 'apiregistration.k8s.io/v1',
          kind: 'APIService',
          metadata: { name, labels: { [AUTOMANAGED_LABEL]: 'true' } },
          spec: { group: gv.group, version: gv.version, groupPriorityMinimum: CRD_GROUP_PRIORITY, versionPriority: CRD_VERSION_PRIORITY },
        })
        .catch((e) => {
          if ((e as { code?: number }).code !== 409) throw e;
        });
    }
    for (const [name, o] of current) {
      if (want.has(name) || o.metadata.labels?.[AUTOMANAGED_LABEL] !== 'true') continue;
      await store.delete(name, o.metadata.uid).catch((e) => {
        if ((e as { code?: number }).code !== 404 && (e as { code?: number }).code !== 409) throw e;
      });
    }
  }

  /**
   * The naming controller: the names the CRD may have (each requested name that is already its
   * own, or that no other CRD of its group has accepted, is accepted; the others keep what was
   * accepted before) and the last conflict found, as Kubernetes' calculateNamesAndConditions.
   */
  private acceptedNames(crd: any): { names: any; conflict?: { reason: string; message: string } } {
    const group = crd.spec.group;
    const req = crd.spec.names ?? {};
    const kind = String(req.kind ?? '');
    const requested = {
      plural: req.plural,
      singular: req.singular || kind.toLowerCase(),
      shortNames: Array.isArray(req.shortNames) ? req.shortNames : [],
      kind,
      listKind: req.listKind || `${kind}List`,
    };
    const accepted = crd.status?.acceptedNames ?? {};
    const resources = new Set<string>();
    const kinds = new Set<string>();
    for (const e of this.o.crds.cacher.list({ prefix: this.o.crds.prefix }).items) {
      const other = e.obj;
      if (other.metadata.name === crd.metadata.name || other.spec?.group !== group) continue;
      const acc = other.status?.acceptedNames ?? {};
      for (const n of [acc.plural, acc.singular, ...(acc.shortNames ?? [])]) if (n) resources.add(n);
      for (const n of [acc.kind, acc.listKind]) if (n) kinds.add(n);
    }
    // a built-in resource's plural is taken too
    if (requested.plural && this.o.builtin(group, requested.plural)) resources.add(requested.plural);
    const inUse = (want: string, have: string | undefined, used: Set<string>) => (want === have || !used.has(want) ? undefined : `"${want}" is already in use`);
    const names: any = { ...accepted };
    let conflict: { reason: string; message: string } | undefined;
    const check = (key: 'plural' | 'singular' | 'kind' | 'listKind', reason: string, used: Set<string>) => {
      const e = inUse(requested[key], accepted[key], used);
      if (e) conflict = { reason, message: e };
      else names[key] = requested[key];
    };
    check('plural', 'PluralConflict', resources);
    check('singular', 'SingularConflict', resources);
    const had: string[] = accepted.shortNames ?? [];
    if (stringifyJSON(requested.shortNames) !== stringifyJSON(had)) {
      const errs = requested.shortNames.filter((n: string) => !had.includes(n)).map((n: string) => inUse(n, '', resources)).filter((x: string | undefined): x is string => !!x);
      if (errs.length) conflict = { reason: 'ShortNamesConflict', message: errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]` };
      else names.shortNames = requested.shortNames;
    }
    check('kind', 'KindConflict', kinds);
    check('listKind', 'ListKindConflict', kinds);
    names.categories = req.categories;
    // (in the field order of CustomResourceDefinitionNames, empty lists left out)
    const out: any = {};
    for (const k of ['plural', 'singular', 'shortNames', 'kind', 'listKind', 'categories']) {
      const v = names[k];
      if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) continue;
      out[k] = v;
    }
    return { names: out, conflict };
  }

  private async sync(name: string): Promise<void> {
    const entry = this.o.crds.get('', name);
    if (!entry) {
      this.unserve(name);
      return;
    }
    const crd = entry.obj;
    const { names: acceptedNames, conflict } = this.acceptedNames(crd);
    const terminating = !!crd.metadata.deletionTimestamp;
    // status: names, conditions
    const status = structuredClone(crd.status ?? {});
    status.acceptedNames = acceptedNames;
    if (!conflict) {
      setCondition(status, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' });
      setCondition(status, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' });
    } else {
      setCondition(status, { type: 'NamesAccepted', status: 'False', reason: conflict.reason, message: conflict.message });
      if (!status.conditions.some((c: any) => c.type === 'Established' && c.status === 'True')) {
        setCondition(status, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' });
      }
    }
    // the API approval of a community group (kube-apiserver's API approval controller)
    if (isProtectedGroup(crd.spec.group)) {
      const v = crd.metadata.annotations?.[API_APPROVED_ANNOTATION] ?? '';
      if (apiApprovalState(crd.metadata.annotations) === 'approved') {
        setCondition(status, { type: 'KubernetesAPIApprovalPolicyConformant', status: 'True', reason: 'ApprovedAnnotation', message: `approved in ${v}` });
      } else setCondition(status, { type: 'KubernetesAPIApprovalPolicyConformant', status: 'False', reason: 'UnapprovedAnnotation', message: `not approved: ${stringifyJSON(v)}` });
    }
    const established = status.conditions.some((c: any) => c.type === 'Established' && c.status === 'True');
    if (established && status.acceptedNames?.kind) await this.serve(crd, terminating);
    else this.unserve(name);
    if (stringifyJSON(status) !== stringifyJSON(crd.status ?? {})) {
      await this.writeStatus(name, status);
      return; // the write brings another event
    }
    if (terminating && (crd.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)) await this.cleanup(crd);
  }

  private async writeStatus(name: string, status: any): Promise<void> {
    await this.o.crds.guaranteedUpdate(
      '',
      name,
      (cur) => {
        cur.status = status;
        return cur;
      },
      { dryRun: false, main: false, subresource: 'status' },
    );
  }

  private async serve(crd: any, terminating: boolean): Promise<void> {
    const name = crd.metadata.name;
    const specKey = stringifyJSON(crd.spec) + stringifyJSON(crd.status?.acceptedNames ?? {});
    const cur = this.served.get(name);
    if (cur && cur.specKey === specKey) {
      cur.terminating = terminating;
      cur.crd = crd;
      return;
    }
    const versions: CRDVersion[] = crd.spec.versions ?? [];
    const storageVersion = versions.find((v) => v.storage)?.name ?? versions[0]?.name ?? 'v1';
    const served = versions.filter((v) => v.served).sort((a, b) => compareVersions(a.name, b.name));
    // a webhook-converted CRD: each version's store sees its objects through a converting storage
    const conversion = crd.spec.conversion?.strategy === 'Webhook' ? crd.spec.conversion.webhook : undefined;
    const group: string = crd.spec.group;
    const schemaOf = (apiVersion: unknown): JSONSchemaProps | undefined => versions.find((x) => `${group}/${x.name}` === apiVersion)?.schema?.openAPIV3Schema;
    const resolver: ServiceResolver =
      this.o.resolveService ??
      (() => {
        throw new Error('no service resolver');
      });
    const converter = conversion ? new WebhookConverter({ clientConfig: conversion.clientConfig, conversionReviewVersions: conversion.conversionReviewVersions }, resolver) : undefined;
    const converting: ConvertingBackend[] = [];
    // one object into another version, for admission's equivalent versions (matchPolicy Equivalent)
    const convertByWebhook = converter
      ? async (obj: any, apiVersion: string) => {
          const [r] = await converter.convert([obj], apiVersion);
          if (r instanceof ConversionFailedError) throw errors.internal(new Error(r.message));
          prune(r, schemaOf(apiVersion));
          return r;
        }
      : undefined;
    const built = served.map((v) => {
      const k = customKind(crd, v);
      let backend: Backend = this.o.backend;
      let st: ResourceStore | undefined;
      if (converter) {
        const conv = new ConvertingBackend(this.o.backend, {
          apiVersion: `${group}/${v.name}`,
          storageAPIVersion: `${group}/${storageVersion}`,
          converter,
          defaults: (obj) => applySchemaDefaults(obj, schemaOf(obj.apiVersion)),
          prune: (obj) => prune(obj, schemaOf(obj.apiVersion)),
          retry: () => {
            if (st && st.cacher.corruptIn(st.prefix).length > 0) st.cacher.resync(new Error(`the conversion webhook of ${name} failed; loading ${k.resource}.${group}/${v.name} again`));
          },
        });
        converting.push(conv);
        backend = conv;
      }
      st = new ResourceStore(k, customStrategy(crd, v, storageVersion, convertByWebhook), backend, {}, { historyWindowMs: this.o.historyWindowMs, garbageCollection: this.o.garbageCollection });
      return { v, k, st };
    });
    // the new stores are loaded before the old ones go: requests meet one or the other, never none
    await Promise.all(built.map((b) => b.st.start()));
    if (cur) this.unserve(name, false);
    for (const { v, k, st } of built) {
      const schema = v.schema?.openAPIV3Schema;
      setDynamicNormalizer(k.type, customNormalizer(schema));
      setDynamicPruner(k.type, customPruner(schema));
      setCustomRootShape(k.type, shapeOf(schema, true));
      const info: CustomTypeInfo = { group: k.group, version: k.version, kind: k.kind, listKind: k.listKind, plural: k.resource, schema };
      this.types.set(k.type, { info, list: false });
      this.types.set(`${k.type}List`, { info, list: true });
      this.byGVR.set(`${k.group}/${k.version}/${k.resource}`, st);
    }
    const stores = built.map((b) => b.st);
    const storage = stores.find((s) => s.kind.version === storageVersion) ?? stores[0]!;
    this.served.set(name, { specKey, kinds: built.map((b) => b.k), stores, storage, terminating, crd, converting });
    this.o.onChange();
  }

  private unserve(name: string, notify = true): void {
    const s = this.served.get(name);
    if (!s) return;
    this.served.delete(name);
    for (const st of s.stores) {
      const key = `${st.kind.group}/${st.kind.version}/${st.kind.resource}`;
      if (this.byGVR.get(key) === st) this.byGVR.delete(key);
      setDynamicNormalizer(st.kind.type, undefined);
      setDynamicPruner(st.kind.type, undefined);
      setCustomRootShape(st.kind.type, undefined);
      this.types.delete(st.kind.type);
      this.types.delete(`${st.kind.type}List`);
      st.stop();
    }
    for (const c of s.converting) c.stop();
    if (notify) this.o.onChange();
  }

  /** the finalizer: delete every custom resource, then release the CRD */
  private async cleanup(crd: any): Promise<void> {
    const name = crd.metadata.name;
    const s = this.served.get(name);
    if (s) {
      const status = structuredClone(crd.status ?? {});
      setCondition(status, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' });
      if (stringifyJSON(status) !== stringifyJSON(crd.status)) {
        await this.writeStatus(name, status);
        return;
      }
      const items = s.storage.cacher.list({ prefix: s.storage.prefix }).items;
      await Promise.all(
        items.map(async (e) => {
          if (e.obj.metadata.deletionTimestamp) return;
          try {
            await s.storage.delete(e.namespace, e.name, { dryRun: false });
          } catch (err) {
            if ((err as { code?: number }).code !== 404) throw err;
          }
        }),
      );
      await s.storage.cacher.waitUntilFresh(await this.o.backend.currentRevision(), 2000);
      // (objects of an older version that the conversion webhook could not convert are still there)
      const unconverted = s.storage.cacher.corruptIn(s.storage.prefix).some((c) => c.error instanceof CorruptObjectError && c.error.stage === 'convert');
      if (!s.storage.cacher.isEmpty() || unconverted) {
        // objects held by finalizers of their own: look again later
        this.retry(name, 1000);
        return;
      }
    }
    await this.o.crds.guaranteedUpdate(
      '',
      name,
      (cur) => {
        cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((f: string) => f !== CLEANUP_FINALIZER);
        if (cur.metadata.finalizers.length === 0) delete cur.metadata.finalizers;
        return cur;
      },
      { dryRun: false },
    );
  }
}

/** an APIService's spec is the one wanted: these four fields and nothing else (no service, caBundle, insecureSkipTLSVerify) */
function sameSpec(have: any, want: Record<string, unknown>): boolean {
  const keys = Object.keys(have ?? {}).filter((k) => have[k] !== undefined && have[k] !== null && !(k === 'insecureSkipTLSVerify' && have[k] === false));
  return keys.length === Object.keys(want).length && Object.entries(want).every(([k, v]) => have?.[k] === v);
}
