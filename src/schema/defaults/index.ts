// Defaulting: every default Kubernetes 1.33 gives an object of a built-in kind when it decodes it
// (on create and on update), applied to the object's JSON form in place.
//
//   applyDefaults(group, version, kind, obj)   the scheme defaults (SetDefaults_X functions and
//                                              `+default=` markers, nested types included), plus the
//                                              pure normalizations of the v1 <-> internal conversion
//   defaultsFor(group, kind[, version])        where defaults can apply in a kind, for docs/OpenAPI
//
// What needs server state is not here but in ./strategy.ts and ./admission.ts, for the registry
// and the admission chain to call: the Job selector (needs the uid), Service IP families (needs
// the cluster's service CIDRs; cluster IPs and node ports come from the allocators), the
// DaemonSet template generation, and the admission plugins' pod defaults (priority from
// PriorityClasses, default tolerations).
//
// The plan of a kind is compiled on its first use and kept (see engine.ts): a write walks only the
// fields that can receive a default.
import { allKinds, typeForKind } from '../types.js';
import { batched, describePlan, planFor, runPlan, type DefaultDescription, type Plan } from './engine.js';
import './core.js';
import './groups.js';

export type { DefaultDescription } from './engine.js';
export { defaultPullPolicy, parseImage } from './image.js';
export { roundUpToMilli } from './quantity.js';
export { FEATURES_133 } from './core.js';
export * from './strategy.js';
export * from './admission.js';

// by group, version and kind, each its own level: the callers pass the strings of a kind's
// declaration, the same string objects every time, whose hashes V8 keeps (a key joined from them
// was a new string to flatten and hash on every write)
const byKind = new Map<string, Map<string, Map<string, Plan | null>>>();

function planForKind(group: string, version: string, kind: string): Plan | null {
  let byVersion = byKind.get(group);
  if (byVersion === undefined) byKind.set(group, (byVersion = new Map()));
  let byName = byVersion.get(version);
  if (byName === undefined) byVersion.set(version, (byName = new Map()));
  let plan = byName.get(kind);
  if (plan === undefined) {
    const t = typeForKind(group, version, kind);
    plan = t ? planFor(t.name) : null;
    byName.set(kind, plan);
  }
  return plan;
}

/**
 * Applies, in place, the defaults Kubernetes applies to an object of this group/version/kind
 * when it decodes it (create and update alike). The object is the normalized JSON form (Go field
 * order); keys added by a default are put in their Go position, map keys in Go's sorted order.
 * List kinds ('PodList') default each item. Kinds without defaults are left untouched.
 */
export function applyDefaults(group: string, version: string, kind: string, obj: any): void {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return;
  const plan = planForKind(group, version, kind);
  if (plan) batched(() => runPlan(plan, obj));
}

/** True when objects of this kind can receive any default. */
export function hasDefaults(group: string, version: string, kind: string): boolean {
  return planForKind(group, version, kind) !== null;
}

/** Kubernetes version order: GA before beta before alpha, higher numbers first. */
function versionRank(v: string): [number, number, number] {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return [0, 0, 0];
  const stage = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
  return [stage, Number(m[1]), Number(m[3] ?? 0)];
}

/**
 * Where defaults can apply in a kind: one entry per JSON path ('[]' stands for every element of
 * a list or map) with where it comes from. Without a version, the preferred version of the kind
 * is described (autoscaling/v2 for HorizontalPodAutoscaler).
 */
export function defaultsFor(group: string, kind: string, version?: string): DefaultDescription[] {
  let v = version;
  if (v === undefined) {
    const versions = allKinds()
      .filter(([g, , k]) => g === group && k === kind)
      .map(([, ver]) => ver)
      .sort((a, b) => {
        const ra = versionRank(a);
        const rb = versionRank(b);
        return rb[0] - ra[0] || rb[1] - ra[1] || rb[2] - ra[2];
      });
    v = versions[0];
  }
  if (v === undefined) return [];
  const plan = planForKind(group, v, kind);
  return plan ? describePlan(plan) : [];
}
