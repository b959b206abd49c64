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
