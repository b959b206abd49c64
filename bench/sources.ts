// Where a V8 profile's call frame is in the TypeScript sources: compiled dist/*.js locations are
// mapped back through the build's source maps (bench/profile.ts, bench/allocations.ts).
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** a call frame of a V8 CPU or heap profile */
export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const maps = new Map<string, SourceMap | null>();
function sourceMapFor(url: string): SourceMap | null {
  if (maps.has(url)) return maps.get(url)!;
  let sm: SourceMap | null = null;
  try {
    const path = fileURLToPath(url);
    if (existsSync(path + '.map')) sm = new SourceMap(JSON.parse(readFileSync(path + '.map', 'utf8')));
  } catch {
    sm = null;
  }
  maps.set(url, sm);
  return sm;
}

/** "name (file:line)" with dist/*.js mapped to the .ts source when a map exists */
export function label(cf: CallFrame): { fn: string; where: string; file: string } {
  const fn = cf.functionName || '(anonymous)';
  if (!cf.url) return { fn, where: '', file: fn.startsWith('(') ? fn : '(native)' };
  let file = cf.url;
  let line = cf.lineNumber + 1;
  if (cf.url.startsWith('file://')) {
    const sm = sourceMapFor(cf.url);
    const e = sm?.findEntry(cf.lineNumber, cf.columnNumber) as { originalSource?: string; originalLine?: number } | undefined;
    if (e && e.originalSource) {
      const src = e.originalSource.startsWith('file://') ? fileURLToPath(e.originalSource) : join(dirname(fileURLToPath(cf.url)), e.originalSource);
      file = relative(ROOT, src);
      line = (e.originalLine ?? 0) + 1;
    } else file = relative(ROOT, fileURLToPath(cf.url));
  }
  return { fn, where: `${file}:${line}`, file };
}

