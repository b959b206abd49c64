// sorted-btree is a CommonJS module whose class is its `default` export; under NodeNext an ES
// module's default import of it is the whole module object, so the class is one level down.
import btreeModule from 'sorted-btree';

export type BTree<K, V> = import('sorted-btree').default<K, V>;
export const BTree = btreeModule.default as unknown as new <K, V>(
  entries?: [K, V][],
  compare?: (a: K, b: K) => number,
  maxNodeSize?: number,
) => BTree<K, V>;
