// apiequality.Semantic.DeepEqual over JSON values, driven by the type declarations: a nil and an
// empty slice or map are equal, an absent non-pointer field equals its zero value, quantities
// compare by value and times by instant, while a nil pointer differs from a pointer to zero.
import { stringifyJSON } from '../../codec/int64.js';
import type { TypeRef } from '../model.js';
import { getType, jsonFields } from '../types.js';
import { parseQuantity, cmpQuantity } from './quantity.js';

const nil = (v: unknown) => v === undefined || v === null;

function zeroScalar(s: string): unknown {
  return s === 'string' || s === 'bytes' ? '' : s === 'bool' ? false : 0;
}

export function semEqualRef(ref: TypeRef, a: unknown, b: unknown, nullable: boolean): boolean {
  switch (ref.kind) {
    case 'scalar':
      if (nullable) {
        if (nil(a) || nil(b)) return nil(a) && nil(b);
        return a === b;
      }
      return (nil(a) ? zeroScalar(ref.scalar) : a) === (nil(b) ? zeroScalar(ref.scalar) : b);
    case 'special': {
      if (nullable && (nil(a) || nil(b))) return nil(a) && nil(b);
      switch (ref.special) {
        case 'Quantity': {
          const x = parseQuantity(nil(a) ? '0' : a);
          const y = parseQuantity(nil(b) ? '0' : b);
          if (!x || !y) return a === b;
          return cmpQuantity(x, y) === 0;
        }
        case 'Time':
        case 'MicroTime': {
          if (nil(a) || nil(b)) return nil(a) && nil(b);
          return Date.parse(String(a)) === Date.parse(String(b));
        }
        case 'IntOrString':
          return (nil(a) ? 0 : a) === (nil(b) ? 0 : b);
        default:
          return jsonDeepEqual(a, b);
      }
    }
    case 'array': {
      const x = Array.isArray(a) ? a : [];
      const y = Array.isArray(b) ? b : [];
      if (x.length !== y.length) return false;
      return x.every((v, i) => semEqualRef(ref.items, v, y[i], ref.items.kind === 'object' ? false : false));
    }
    case 'map': {
      const x = a && typeof a === 'object' ? (a as Record<string, unknown>) : {};
      const y = b && typeof b === 'object' ? (b as Record<string, unknown>) : {};
      const kx = Object.keys(x);
      if (kx.length !== Object.keys(y).length) return false;
      return kx.every((k) => Object.prototype.hasOwnProperty.call(y, k) && semEqualRef(ref.values, x[k], y[k], false));
    }
    case 'object': {
      if (nullable && (nil(a) || nil(b))) return nil(a) && nil(b);
      return semEqual(ref.name, a ?? {}, b ?? {});
    }
  }
}

/** Semantic equality of two values of the named type. */
export function semEqual(typeName: string, a: unknown, b: unknown): boolean {
  const t = getType(typeName);
  if (!t) return jsonDeepEqual(a, b);
  const x = (a ?? {}) as Record<string, unknown>;
  const y = (b ?? {}) as Record<string, unknown>;
  for (const [name, f] of jsonFields(t)) {
    if (name === 'kind' || name === 'apiVersion') continue;
    if (!semEqualRef(f.type, x[name], y[name], f.nullable)) return false;
  }
  return true;
}

function jsonDeepEqual(a: unknown, b: unknown): boolean {
  return stringifyJSON(a ?? null) === stringifyJSON(b ?? null);
}

/** The names of the fields of a type (JSON order) whose values differ. */
export function differingFields(typeName: string, a: unknown, b: unknown): string[] {
  const t = getType(typeName);
  if (!t) return [];
  const x = (a ?? {}) as Record<string, unknown>;
  const y = (b ?? {}) as Record<string, unknown>;
  const out: string[] = [];
  for (const [name, f] of jsonFields(t)) if (!semEqualRef(f.type, x[name], y[name], f.nullable)) out.push(name);
  return out;
}

export const T = {
  podSpec: 'io.k8s.api.core.v1.PodSpec',
  podTemplateSpec: 'io.k8s.api.core.v1.PodTemplateSpec',
  container: 'io.k8s.api.core.v1.Container',
  ephemeralContainer: 'io.k8s.api.core.v1.EphemeralContainer',
  toleration: 'io.k8s.api.core.v1.Toleration',
  labelSelector: 'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector',
  pvcSpec: 'io.k8s.api.core.v1.PersistentVolumeClaimSpec',
  pvSpec: 'io.k8s.api.core.v1.PersistentVolumeSpec',
  statefulSetSpec: 'io.k8s.api.apps.v1.StatefulSetSpec',
  objectReference: 'io.k8s.api.core.v1.ObjectReference',
  eventSource: 'io.k8s.api.core.v1.EventSource',
  nodeAffinity: 'io.k8s.api.core.v1.NodeAffinity',
  volumeNodeAffinity: 'io.k8s.api.core.v1.VolumeNodeAffinity',
  podFailurePolicy: 'io.k8s.api.batch.v1.PodFailurePolicy',
  successPolicy: 'io.k8s.api.batch.v1.SuccessPolicy',
} as const;
