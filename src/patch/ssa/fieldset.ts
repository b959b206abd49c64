// Sets of field paths (structured-merge-diff's fieldpath.Set) and their fieldsV1 form.
//
// A set is a trie. `members` are the paths that end at this level; `children` hold the paths
// that go deeper. A path can be both (`".": {}` in fieldsV1: the item itself and some of its
// fields). Sets are treated as immutable once built: the operations return new sets and may
// share unchanged subtrees with their inputs. `insert` is for building a fresh set only.
import { comparePE, parsePE, PathElementError, type Path, type PathElement } from './pathelement.js';

interface Child {
  readonly pe: PathElement;
  readonly set: FieldSet;
}

/** fieldsV1 JSON as kept in metadata.managedFields (an object of objects). */
export type FieldsV1 = { [key: string]: FieldsV1 };

// A document handed out by toFieldsV1 carries its set under this key (not enumerable: JSON,
// YAML, Protobuf, CBOR and equality checks never see it), so that decoding it again is free.
// A WeakMap from documents to sets did the same, but its entries cost the garbage collector
// more than the rest of a create's managed-fields work together.
const SET_OF_DOC = Symbol('fieldset');

/** The set a document of toFieldsV1 was emitted from (undefined for any other object). */
export function emittedSetOf(doc: object): FieldSet | undefined {
  const s = (doc as { [SET_OF_DOC]?: unknown })[SET_OF_DOC];
  return s instanceof FieldSet ? s : undefined;
}

export class FieldSet {
  // Most sets in a write's work are small or empty: their maps are made on the first insert, and
  // an empty set reads as the shared empty maps (never written: only addMember/addChild write).
  private m: Map<string, PathElement> | undefined;
  private c: Map<string, Child> | undefined;

  /** the paths that end at this level, by their element's string */
  get members(): ReadonlyMap<string, PathElement> {
    return this.m ?? NO_MEMBERS;
  }

  /** the sets of the paths that go deeper, by the first element's string */
  get children(): ReadonlyMap<string, Child> {
    return this.c ?? NO_CHILDREN;
  }

  /** adds a member at this level (building only) */
  addMember(k: string, pe: PathElement): void {
    (this.m ??= new Map()).set(k, pe);
  }

  /** sets the child set under k (building only) */
  addChild(k: string, child: Child): void {
    (this.c ??= new Map()).set(k, child);
  }
  /** the fieldsV1 documents of this set, once emitted (as a child that is / is not also a member) */
  private docSelf?: FieldsV1;
  private doc?: FieldsV1;

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (its parents are not added). The empty path is ignored: the root is not tracked. */
  insert(p: Path): void {
    if (p.length === 0) return;
    let s: FieldSet = this;
    for (let i = 0; i < p.length - 1; i++) s = s.descend(p[i]!);
    const last = p[p.length - 1]!;
    s.addMember(last.s, last);
  }

  /** The child set for pe, created when absent (building only). */
  descend(pe: PathElement): FieldSet {
    let c = this.children.get(pe.s);
    if (!c) {
      c = { pe, set: new FieldSet() };
      this.addChild(pe.s, c);
    }
    return c.set;
  }

  has(p: Path): boolean {
    if (p.length === 0) return false;
    let s: FieldSet = this;
    for (let i = 0; i < p.length - 1; i++) {
      const c = s.children.get(p[i]!.s);
      if (!c) return false;
      s = c.set;
    }
    return s.members.has(p[p.length - 1]!.s);
  }

  empty(): boolean {
    if (this.members.size > 0) return false;
    for (const c of this.children.values()) if (!c.set.empty()) return false;
    return true;
  }

  size(): number {
    let n = this.members.size;
    for (const c of this.children.values()) n += c.set.size();
    return n;
  }

  /** The paths below pe, relative to it (empty when none). */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(pe.s)?.set ?? EMPTY;
  }

  union(o: FieldSet): FieldSet {
    if (o === this || o.members.size + o.children.size === 0) return this;
    if (this.members.size + this.children.size === 0) return o;
    const out = new FieldSet();
    for (const [k, pe] of this.members) out.addMember(k, pe);
    for (const [k, pe] of o.members) out.addMember(k, pe);
    for (const [k, c] of this.children) {
      const d = o.children.get(k);
      out.addChild(k, d ? { pe: c.pe, set: c.set.union(d.set) } : c);
    }
    for (const [k, d] of o.children) if (!this.children.has(k)) out.addChild(k, d);
    return out;
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (o.members.has(k)) out.addMember(k, pe);
    for (const [k, c] of this.children) {
      const d = o.children.get(k);
      if (!d) continue;
      const r = c.set.intersection(d.set);
      if (!r.empty()) out.addChild(k, { pe: c.pe, set: r });
    }
    return out;
  }

  /**
   * Paths of this set not in o. Only paths are compared: a member of o does not remove this
   * set's paths below it (fieldpath.Set.Difference).
   */
  difference(o: FieldSet): FieldSet {
    if (o.members.size + o.children.size === 0) return this;
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (!o.members.has(k)) out.addMember(k, pe);
    for (const [k, c] of this.children) {
      const d = o.children.get(k);
      if (!d) {
        out.addChild(k, c);
        continue;
      }
      const r = c.set.difference(d.set);
      if (!r.empty()) out.addChild(k, { pe: c.pe, set: r });
    }
    return out;
  }

  /** Like difference, but a member of o also removes every path below it (fieldpath.Set.RecursiveDifference). */
  recursiveDifference(o: FieldSet): FieldSet {
    if (o.members.size + o.children.size === 0) return this;
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (!o.members.has(k)) out.addMember(k, pe);
    for (const [k, c] of this.children) {
      if (o.members.has(k)) continue;
      const d = o.children.get(k);
      if (!d) {
        out.addChild(k, c);
        continue;
      }
      const r = c.set.recursiveDifference(d.set);
      if (!r.empty()) out.addChild(k, { pe: c.pe, set: r });
    }
    return out;
  }

  /** whether every path of this set is in o (a member of o does not stand for the paths below it) */
  isSubsetOf(o: FieldSet): boolean {
    if (o === this) return true;
    for (const k of this.members.keys()) if (!o.members.has(k)) return false;
    for (const [k, c] of this.children) {
      const d = o.children.get(k);
      if (d ? !c.set.isSubsetOf(d.set) : !c.set.empty()) return false;
    }
    return true;
  }

  equals(o: FieldSet): boolean {
    if (o === this) return true;
    if (this.members.size !== o.members.size) return false;
    for (const k of this.members.keys()) if (!o.members.has(k)) return false;
    // empty child sets never occur in sets built by these operations, but compare by content anyway
    const mine = [...this.children].filter(([, c]) => !c.set.empty());
    const theirs = [...o.children].filter(([, c]) => !c.set.empty());
    if (mine.length !== theirs.length) return false;
    for (const [k, c] of mine) {
      const d = o.children.get(k);
      if (!d || !c.set.equals(d.set)) return false;
    }
    return true;
  }

  /** Every path, members before children at each level, in element order (fieldpath.Set.Iterate). */
  iterate(fn: (p: Path) => void, prefix: PathElement[] = []): void {
    for (const pe of sortedPEs(this.members)) fn([...prefix, pe]);
    for (const c of sortedChildren(this.children)) {
      prefix.push(c.pe);
      c.set.iterate(fn, prefix);
      prefix.pop();
    }
  }

  paths(): Path[] {
    const out: Path[] = [];
    this.iterate((p) => out.push(p));
    return out;
  }

  /**
   * The fieldsV1 object of this set, keys in Kubernetes' order. The object is frozen and shared:
   * sets are immutable, and the documents of their unchanged subtrees are reused.
   */
  toFieldsV1(): FieldsV1 {
    return this.emit(false);
  }

  private emit(includeSelf: boolean): FieldsV1 {
    const hit = includeSelf ? this.docSelf : this.doc;
    if (hit) return hit;
    const out: FieldsV1 = {};
    if (includeSelf && !(this.members.size === 0 && this.children.size === 0)) out['.'] = {};
    const keys: PathElement[] = [];
    for (const pe of this.members.values()) keys.push(pe);
    for (const [k, c] of this.children) if (!this.members.has(k)) keys.push(c.pe);
    keys.sort(comparePE);
    for (const pe of keys) {
      const c = this.children.get(pe.s);
      if (!c) out[pe.s] = EMPTY_DOC;
      else out[pe.s] = c.set.emit(this.members.has(pe.s));
    }
    if (includeSelf) this.docSelf = out;
    else {
      Object.defineProperty(out, SET_OF_DOC, { value: this });
      this.doc = out;
    }
    Object.freeze(out);
    return out;
  }

  /**
   * Reads a fieldsV1 object (fieldpath.Set.FromJSON): `{}` below a key means the path is a
   * member, `"."` marks a key that is both a member and a parent; element types this version
   * does not know are dropped. Throws FieldsV1Error on a malformed document.
   */
  static fromFieldsV1(v: unknown): FieldSet {
    if (v === null || v === undefined) return new FieldSet();
    if (typeof v !== 'object' || Array.isArray(v)) throw new FieldsV1Error('ReadMapCB: expect { or n, but found ' + describe(v));
    const r = read(v as Record<string, unknown>);
    return r.children ?? new FieldSet();
  }
}

export class FieldsV1Error extends Error {}

function describe(v: unknown): string {
  if (Array.isArray(v)) return '[';
  if (typeof v === 'string') return '"';
  return String(v)[0] ?? '';
}

function read(obj: Record<string, unknown>): { children?: FieldSet; member: boolean } {
  let children: FieldSet | undefined;
  let member = false;
  for (const key of Object.keys(obj)) {
    const val = obj[key];
    if (key === '.') {
      member = true;
      continue;
    }
    let pe: PathElement | undefined;
    try {
      pe = parsePE(key);
    } catch (e) {
      if (e instanceof PathElementError) throw new FieldsV1Error(`parsing key as path element: ${e.message}`);
      throw e;
    }
    if (!pe) continue;
    if (val === null || typeof val !== 'object' || Array.isArray(val)) throw new FieldsV1Error('ReadMapCB: expect { or n, but found ' + describe(val));
    const sub = read(val as Record<string, unknown>);
    if (sub.member) {
      children ??= new FieldSet();
      children.addMember(pe.s, pe);
    }
    if (sub.children) {
      children ??= new FieldSet();
      const existing = children.children.get(pe.s);
      children.addChild(pe.s, { pe, set: existing ? existing.set.union(sub.children) : sub.children });
    }
  }
  if (!children) member = true;
  return { children, member };
}

function sortedPEs(m: ReadonlyMap<string, PathElement>): PathElement[] {
  const a = [...m.values()];
  if (a.length > 1) a.sort(comparePE);
  return a;
}

function sortedChildren(m: ReadonlyMap<string, Child>): Child[] {
  const a = [...m.values()];
  if (a.length > 1) a.sort((x, y) => comparePE(x.pe, y.pe));
  return a;
}

const NO_MEMBERS: ReadonlyMap<string, PathElement> = new Map();
const NO_CHILDREN: ReadonlyMap<string, Child> = new Map();
const EMPTY = new FieldSet();
const EMPTY_DOC: FieldsV1 = Object.freeze({}) as FieldsV1;
