// Duplicate fields (the same key twice in one JSON or YAML object) for fieldValidation. JSON.parse
// keeps the last value silently, so JSON bodies are scanned separately: a tokenizer that only
// follows strings and brackets (no values are built), run once per write; it costs a few
// microseconds per kilobyte. YAML documents are walked through the `yaml` library's AST.
import YAML, { isMap, isPair, isScalar, isSeq, LineCounter, type Node } from 'yaml';

/**
 * The paths of duplicated keys in a JSON text, as Kubernetes' strict decoder names them
 * (`spec.replicas`, `spec.containers[0].name`). The text must be valid JSON (parse it first).
 */
export function jsonDuplicateFields(text: string): string[] {
  const out: string[] = [];
  // a frame per open container: an object's keys seen so far and its current key, or an array's
  // current index (the number of commas seen at its level)
  type Frame = { obj: true; keys: Set<string> | null; key: string } | { obj: false; index: number };
  const stack: Frame[] = [];
  let expectKey = false;
  const n = text.length;
  let i = 0;
  const path = (last: string): string => {
    let p = '';
    for (let k = 0; k < stack.length - 1; k++) {
      const f = stack[k]!;
      if (f.obj) p += (p ? '.' : '') + f.key;
      else p += `[${f.index}]`;
    }
    return p ? `${p}.${last}` : last;
  };
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      let escaped = false;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === 0x5c) {
          escaped = true;
          j += 2;
          continue;
        }
        if (d === 0x22) break;
        j++;
      }
      if (expectKey) {
        const top = stack[stack.length - 1] as { obj: true; keys: Set<string> | null; key: string };
        const key = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
        if (top.keys === null) top.keys = new Set();
        if (top.keys.has(key)) out.push(path(key));
        else top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
      i = j + 1;
      continue;
    }
    switch (c) {
      case 0x7b /* { */:
        stack.push({ obj: true, keys: null, key: '' });
        expectKey = true;
        break;
      case 0x5b /* [ */:
        stack.push({ obj: false, index: 0 });
        break;
      case 0x7d /* } */:
      case 0x5d /* ] */:
        stack.pop();
        expectKey = false;
        break;
      case 0x2c /* , */: {
        const top = stack[stack.length - 1];
        if (top) {
          if (top.obj) expectKey = true;
          else top.index++;
        }
        break;
      }
    }
    i++;
  }
  return out;
}

/** Kubernetes' messages for duplicated keys in a YAML document (`line 7: key "replicas" already set in map`). */
export function yamlDuplicateFields(text: string): string[] {
  const lc = new LineCounter();
  let doc;
  try {
    doc = YAML.parseDocument(text, { uniqueKeys: false, lineCounter: lc });
  } catch {
    return [];
  }
  const out: string[] = [];
  const walk = (node: Node | null | undefined): void => {
    if (!node) return;
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const item of node.items) {
        if (!isPair(item)) continue;
        const k = item.key;
        const name = isScalar(k) ? String(k.value) : undefined;
        if (name !== undefined) {
          if (seen.has(name)) {
            const line = k && (k as Node).range ? lc.linePos((k as Node).range![0]).line : 0;
            out.push(`line ${line}: key ${JSON.stringify(name)} already set in map`);
          } else seen.add(name);
        }
        walk(item.value as Node);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) walk(item as Node);
    }
  };
  walk(doc.contents as Node);
  return out;
}

import type { TypeRef } from '../schema/model.js';
import { getType, jsonFields } from '../schema/types.js';

/**
 * Strict decoding problems of a JSON text against a type, in document order, worded as
 * Kubernetes' strict decoder words them: `duplicate field "spec.replicas"` and
 * `unknown field "spec.foo"` (an unknown field's value is not looked into; free-form values
 * (maps of strings, RawExtension, ...) are only checked for duplicates). Keys starting with `$`
 * are patch directives when `directives` is set. The text must be valid JSON.
 */
export function jsonStrictProblems(text: string, typeName: string | undefined, directives = false): string[] {
  const out: string[] = [];
  let i = 0;
  const n = text.length;
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };
  const readString = (): string => {
    const start = i;
    i++;
    let escaped = false;
    while (i < n) {
      const d = text.charCodeAt(i);
      if (d === 0x5c) {
        escaped = true;
        i += 2;
        continue;
      }
      if (d === 0x22) break;
      i++;
    }
    i++;
    return escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1);
  };
  const skipScalar = () => {
    if (text.charCodeAt(i) === 0x22) {
      readString();
      return;
    }
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x2c || c === 0x5d || c === 0x7d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
      i++;
    }
  };
  // skip a whole value (an unknown field's): nothing inside is reported
  const skipValue = () => {
    ws();
    const c = text.charCodeAt(i);
    if (c !== 0x7b && c !== 0x5b) return skipScalar();
    let depth = 0;
    while (i < n) {
      const d = text.charCodeAt(i);
      if (d === 0x22) {
        readString();
        continue;
      }
      if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) {
          i++;
          return;
        }
      }
      i++;
    }
  };
  const value = (ref: TypeRef | undefined, path: string): void => {
    ws();
    const c = text.charCodeAt(i);
    if (c === 0x7b) object(ref, path);
    else if (c === 0x5b) array(ref, path);
    else skipScalar();
  };
  const object = (ref: TypeRef | undefined, path: string): void => {
    i++;
    const keys = new Set<string>();
    const decl = ref && ref.kind === 'object' ? getType(ref.name) : undefined;
    const fields: ReadonlyMap<string, { type: TypeRef }> | undefined = decl ? jsonFields(decl) : ref && ref.kind === 'object' && ref.name === JSON_PATCH_OP ? JSON_PATCH_OP_FIELDS : undefined;
    const mapValues = ref && ref.kind === 'map' ? ref.values : undefined;
    for (;;) {
      ws();
      if (i >= n) return;
      if (text.charCodeAt(i) === 0x7d) {
        i++;
        return;
      }
      if (text.charCodeAt(i) === 0x2c) {
        i++;
        continue;
      }
      const key = readString();
      const p = path ? `${path}.${key}` : key;
      if (keys.has(key)) out.push(`duplicate field "${p}"`);
      else keys.add(key);
      ws();
      i++; // ':'
      if (directives && key.startsWith('$')) {
        value(undefined, p);
      } else if (fields) {
        const f = fields.get(key);
        if (!f) {
          out.push(`unknown field "${p}"`);
          skipValue();
        } else value(f.type, p);
      } else value(mapValues, p);
    }
  };
  const array = (ref: TypeRef | undefined, path: string): void => {
    i++;
    const items = ref && ref.kind === 'array' ? ref.items : undefined;
    let idx = 0;
    for (;;) {
      ws();
      if (i >= n) return;
      const c = text.charCodeAt(i);
      if (c === 0x5d) {
        i++;
        return;
      }
      if (c === 0x2c) {
        i++;
        idx++;
        continue;
      }
      value(items, `${path}[${idx}]`);
    }
  };
  value(typeName === JSON_PATCH ? { kind: 'array', items: { kind: 'object', name: JSON_PATCH_OP } } : typeName ? { kind: 'object', name: typeName } : undefined, '');
  return out;
}

const JSON_PATCH = '#jsonpatch';
const JSON_PATCH_OP = '#jsonpatch-op';
const FREE: TypeRef = { kind: 'special', special: 'JSON' };
const JSON_PATCH_OP_FIELDS = new Map<string, { type: TypeRef }>([
  ['op', { type: FREE }],
  ['path', { type: FREE }],
  ['value', { type: FREE }],
  ['from', { type: FREE }],
]);

/** the strict problems of a JSON patch document: its operations' unknown and duplicate keys, in order */
export function jsonPatchStrictProblems(text: string): string[] {
  return jsonStrictProblems(text, JSON_PATCH).map((p) => `json patch ${p}`);
}
