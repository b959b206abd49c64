// Types declared at run time: the kinds served from CustomResourceDefinitions have no TypeDecl;
// their objects are schemaless JSON given form by the CRD's structural schema (apiserver/crd).
// The codec asks here how to normalize an object of such a type name, and how to prune one.

/** what normalizing an object of a dynamic type gives (the shape of codec/json NormalizeResult) */
export interface DynamicNormalized {
  obj: any;
  /** paths of fields the schema does not declare (pruned) */
  unknown: string[];
  /** a value that cannot be decoded at all (Go's decoder wording) */
  typeError?: string;
}

/** pruning, defaults and ObjectMeta's form: a decoded object */
export type DynamicNormalizer = (obj: Record<string, unknown>) => DynamicNormalized;
/** the fields the type does not declare removed, and nothing else: an apply configuration */
export type DynamicPruner = (obj: Record<string, unknown>) => { obj: any; unknown: string[] };

/** functions by type name, with an empty registry answering at no cost */
function registry<F>(): { set(name: string, f: F | undefined): void; get(name: string): F | undefined } {
  const m = new Map<string, F>();
  return {
    set: (name, f) => (f ? m.set(name, f) : m.delete(name)),
    get: (name) => (m.size === 0 ? undefined : m.get(name)),
  };
}

const normalizers = registry<DynamicNormalizer>();
const pruners = registry<DynamicPruner>();

/** Declare (or, with undefined, remove) the normalizer of a dynamic type name. */
export const setDynamicNormalizer = (typeName: string, n: DynamicNormalizer | undefined): void => normalizers.set(typeName, n);
/** The normalizer of a dynamic type name, if one is declared. */
export const dynamicNormalizer = (typeName: string): DynamicNormalizer | undefined => normalizers.get(typeName);
/** Declare (or remove) the pruner of a dynamic type name. */
export const setDynamicPruner = (typeName: string, p: DynamicPruner | undefined): void => pruners.set(typeName, p);
/** The pruner of a dynamic type name, if one is declared. */
export const dynamicPruner = (typeName: string): DynamicPruner | undefined => pruners.get(typeName);
