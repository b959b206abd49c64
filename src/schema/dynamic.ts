// Types declared at run time: the kinds served from CustomResourceDefinitions have no TypeDecl;
// their objects are schemaless JSON given form by the CRD's structural schema (apiserver/crd).
// The codec asks here how to normalize an object of such a type name.

/** what normalizing an object of a dynamic type gives (the shape of codec/json NormalizeResult) */
export interface DynamicNormalized {
  obj: any;
  /** paths of fields the schema does not declare (pruned) */
  unknown: string[];
  /** a value that cannot be decoded at all (Go's decoder wording) */
  typeError?: string;
}

export type DynamicNormalizer = (obj: Record<string, unknown>) => DynamicNormalized;

const normalizers = new Map<string, DynamicNormalizer>();

/** Declare (or, with undefined, remove) the normalizer of a dynamic type name. */
export function setDynamicNormalizer(typeName: string, n: DynamicNormalizer | undefined): void {
  if (n) normalizers.set(typeName, n);
  else normalizers.delete(typeName);
}

/** The normalizer of a dynamic type name, if one is declared. */
export function dynamicNormalizer(typeName: string): DynamicNormalizer | undefined {
  return normalizers.size === 0 ? undefined : normalizers.get(typeName);
}

export type DynamicPruner = (obj: Record<string, unknown>) => { obj: any; unknown: string[] };

const pruners = new Map<string, DynamicPruner>();

/** Declare (or remove) how the fields a dynamic type does not declare are removed, and nothing else (an apply configuration). */
export function setDynamicPruner(typeName: string, p: DynamicPruner | undefined): void {
  if (p) pruners.set(typeName, p);
  else pruners.delete(typeName);
}

/** The pruner of a dynamic type name, if one is declared. */
export function dynamicPruner(typeName: string): DynamicPruner | undefined {
  return pruners.size === 0 ? undefined : pruners.get(typeName);
}
