// The simple JSONPath of additionalPrinterColumns (`.spec.replicas`, `.status.conditions[0].type`,
// `.status.conditions[?(@.type=="Ready")].status`, `.metadata.labels.app\.kubernetes\.io/name`).

type Step = { field: string } | { index: number } | { filter: { path: string[]; value: string } } | { all: true };

/** split a path into steps; undefined when it is not of the simple form */
export function parseJSONPath(p: string): Step[] | undefined {
  let s = p.trim();
  if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1);
  const steps: Step[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '.') {
      i++;
      let name = '';
      while (i < s.length && s[i] !== '.' && s[i] !== '[') {
        if (s[i] === '\\' && i + 1 < s.length) {
          name += s[i + 1];
          i += 2;
          continue;
        }
        name += s[i++];
      }
      if (name === '') continue;
      steps.push(name === '*' ? { all: true } : { field: name });
    } else if (c === '[') {
      const end = s.indexOf(']', i);
      if (end < 0) return undefined;
      const inner = s.slice(i + 1, end);
      i = end + 1;
      if (/^-?\d+$/.test(inner)) steps.push({ index: Number(inner) });
      else if (inner === '*') steps.push({ all: true });
      else {
        const m = /^\?\(@\.([\w.\-/]+)\s*==\s*["']([^"']*)["']\)$/.exec(inner);
        if (!m) {
          const q = /^['"](.*)['"]$/.exec(inner);
          if (q) {
            steps.push({ field: q[1]! });
            continue;
          }
          return undefined;
        }
        steps.push({ filter: { path: m[1]!.split('.'), value: m[2]! } });
      }
    } else return undefined;
  }
  return steps;
}

/** the values a path finds in an object (none when a step finds nothing) */
export function evalJSONPath(obj: unknown, p: string): unknown[] {
  const steps = parseJSONPath(p);
  if (!steps) return [];
  let cur: unknown[] = [obj];
  for (const st of steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      if (v === null || typeof v !== 'object') continue;
      if ('field' in st) {
        if (!Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, st.field)) next.push((v as Record<string, unknown>)[st.field]);
      } else if ('index' in st) {
        if (Array.isArray(v)) {
          const i = st.index < 0 ? v.length + st.index : st.index;
          if (i >= 0 && i < v.length) next.push(v[i]);
        }
      } else if ('all' in st) {
        next.push(...(Array.isArray(v) ? v : Object.values(v)));
      } else if (Array.isArray(v)) {
        for (const item of v) {
          let x: unknown = item;
          for (const f of st.filter.path) x = x !== null && typeof x === 'object' ? (x as Record<string, unknown>)[f] : undefined;
          if (x !== undefined && String(x) === st.filter.value) next.push(item);
        }
      }
    }
    cur = next;
  }
  return cur;
}
