// Where the OpenAPI builders read type declarations from. The server uses the schema loader
// (schema/types.ts); tests may hand in their own declarations.
import type { TypeDecl } from '../../schema/model.js';

export interface TypeSource {
  /** the declaration of a type by its canonical (OpenAPI definition) name */
  get(name: string): TypeDecl | undefined;
  /** the root type of a group/version/kind ('' for the core group) */
  forKind(group: string, version: string, kind: string): TypeDecl | undefined;
  /**
   * The schema of a type without a declaration, given as a schema (custom resources), in the
   * dialect asked for; `ref` gives a reference to a declared definition.
   */
  raw?(name: string, dialect: 'v2' | 'v3', ref: (name: string) => Record<string, unknown>): import('./json.js').JsonObject | undefined;
}

/** A TypeSource over a plain list of declarations. */
export function typeSourceOf(decls: Iterable<TypeDecl>): TypeSource {
  const byName = new Map<string, TypeDecl>();
  const byKind = new Map<string, TypeDecl>();
  for (const d of decls) {
    byName.set(d.name, d);
    for (const g of d.gvk ?? []) {
      const key = `${g.group}/${g.version}/${g.kind}`;
      if (!byKind.has(key)) byKind.set(key, d);
    }
  }
  return {
    get: (name) => byName.get(name),
    forKind: (group, version, kind) => byKind.get(`${group}/${version}/${kind}`),
  };
}
