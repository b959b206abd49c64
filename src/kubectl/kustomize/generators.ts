// configMapGenerator and secretGenerator, as kustomize's builtin generators make them: the
// key/value pairs of env files, then literals, then files; the ConfigMap's values that are not
// UTF-8 go to binaryData; a Secret's values are base64 (wrapped at 70 characters as kustomize
// wraps them, which its name hash sees); labels, annotations and immutable from the options.

import { readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, resolve, sep } from 'node:path';

type Obj = Record<string, any>;

export class GeneratorError extends Error {}

export interface GeneratorOptions {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  disableNameSuffixHash?: boolean;
  immutable?: boolean;
}

export interface GeneratorArgs {
  name?: string;
  namespace?: string;
  behavior?: string;
  literals?: string[];
  files?: string[];
  envs?: string[];
  env?: string;
  type?: string;
  options?: GeneratorOptions;
}

/** types.MergeGlobalOptionsIntoLocal */
export function mergeGlobalOptions(local: GeneratorOptions | undefined, global: GeneratorOptions | undefined): GeneratorOptions | undefined {
  if (!global) return local;
  const out: GeneratorOptions = { ...(local ?? {}) };
  const over = (l: Record<string, string> | undefined, g: Record<string, string> | undefined): Record<string, string> | undefined => {
    if (!l) return g ? { ...g } : undefined;
    const m = { ...l };
    for (const [k, v] of Object.entries(g ?? {})) if (!(k in m)) m[k] = v;
    return m;
  };
  const labels = over(out.labels, global.labels);
  const annotations = over(out.annotations, global.annotations);
  if (labels) out.labels = labels;
  if (annotations) out.annotations = annotations;
  if (global.disableNameSuffixHash) out.disableNameSuffixHash = true;
  if (global.immutable) out.immutable = true;
  return out;
}

/** The kustomization directory's file loader: paths must stay in or below its root. */
export function loadFile(root: string, path: string): Buffer {
  const abs = resolve(root, path);
  let real: string;
  try {
    real = realpathSync(abs);
  } catch {
    throw new GeneratorError(`evalsymlink failure on '${abs}' : lstat ${abs}: no such file or directory`);
  }
  const realRoot = realpathSync(root);
  if (real !== realRoot && !real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) {
    throw new GeneratorError(`security; file '${real}' is not in or below '${realRoot}'`);
  }
  if (statSync(real).isDirectory()) throw new GeneratorError(`read ${real}: is a directory`);
  return readFileSync(real);
}

function removeQuotes(s: string): string {
  if (s.length < 2 || s[0] !== s[s.length - 1]) return s;
  if (s[0] === '"' || s[0] === "'") return s.slice(1, -1);
  return s;
}

function literalPair(source: string): [string, string] {
  const i = source.indexOf('=');
  if (i <= 0) throw new GeneratorError(`invalid literal source ${source}, expected key=value`);
  return [source.slice(0, i), removeQuotes(source.slice(i + 1))];
}

function fileSource(source: string): [string, string] {
  const n = source.split('=').length - 1;
  if (n === 0) return [basename(source), source];
  if (n === 1 && source.startsWith('=')) throw new GeneratorError(`missing key name for file path ${JSON.stringify(source.slice(1))} in source ${JSON.stringify(source)}`);
  if (n === 1 && source.endsWith('=')) throw new GeneratorError(`missing file path for key name ${JSON.stringify(source.slice(0, -1))} in source ${JSON.stringify(source)}`);
  if (n > 1) throw new GeneratorError(`source ${JSON.stringify(source)} key name or file path contains '='`);
  const [k, p] = source.split('=') as [string, string];
  return [k, p];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function isUTF8(b: Buffer): boolean {
  try {
    utf8.decode(b);
    return true;
  } catch {
    return false;
  }
}

/** unicode.IsSpace */
const LEADING_SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

function envPairs(content: Buffer): [string, string][] {
  const out: [string, string][] = [];
  // bufio.ScanLines: lines end at \n, a \r before it is dropped, a last line without \n counts
  let lines: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < content.length; i++) {
    if (content[i] === 0x0a) {
      lines.push(content.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < content.length) lines.push(content.subarray(start));
  lines = lines.map((l) => (l.length > 0 && l[l.length - 1] === 0x0d ? l.subarray(0, l.length - 1) : l));
  lines.forEach((raw, n) => {
    let line = raw;
    if (!isUTF8(line)) throw new GeneratorError(`line ${n} has invalid utf8 bytes : ${line.toString('latin1')}`);
    if (n === 0 && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf) line = line.subarray(3);
    const text = line.toString('utf8').replace(LEADING_SPACE, '');
    if (text === '' || text.startsWith('#')) return;
    const i = text.indexOf('=');
    const key = i < 0 ? text : text.slice(0, i);
    if (key === '') return;
    out.push([key, i < 0 ? '' : text.slice(i + 1)]);
  });
  return out;
}

/** the pairs of a generator: env files, then literals, then files ([key, bytes-or-text]) */
function loadPairs(root: string, args: GeneratorArgs): [string, Buffer | string][] {
  const all: [string, Buffer | string][] = [];
  const envs = [...(args.envs ?? []), ...(args.env ? [args.env] : [])];
  try {
    for (const p of envs) all.push(...envPairs(loadFile(root, p)));
  } catch (e) {
    throw new GeneratorError(`env source files: [${envs.join(' ')}]: ${(e as Error).message}`);
  }
  try {
    for (const s of args.literals ?? []) all.push(literalPair(String(s)));
  } catch (e) {
    throw new GeneratorError(`literal sources [${(args.literals ?? []).join(' ')}]: ${(e as Error).message}`);
  }
  try {
    for (const s of args.files ?? []) {
      const [k, p] = fileSource(String(s));
      all.push([k, loadFile(root, p)]);
    }
  } catch (e) {
    throw new GeneratorError(`file sources: [${(args.files ?? []).join(' ')}]: ${(e as Error).message}`);
  }
  return all;
}

function validatedPairs(root: string, args: GeneratorArgs): Map<string, Buffer | string> {
  let pairs: [string, Buffer | string][];
  try {
    pairs = loadPairs(root, args);
  } catch (e) {
    throw new GeneratorError(`loading KV pairs: ${(e as Error).message}`);
  }
  const m = new Map<string, Buffer | string>();
  for (const [k, v] of pairs) {
    if (m.has(k)) throw new GeneratorError(`configmap ${args.name} illegally repeats the key \`${k}\``);
    m.set(k, v);
  }
  return m;
}

/** base64 as kustomize writes it: lines of 70 characters, each ended by \n, once there are 70 or more */
export function kustomizeBase64(b: Buffer): string {
  const enc = b.toString('base64');
  const lines = Math.floor(enc.length / 70) + 1;
  if (lines <= 1) return enc;
  let out = '';
  for (let i = 0; i < enc.length; i += 70) out += enc.slice(i, i + 70) + '\n';
  return out;
}

const goLess = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

function baseObject(kind: string, args: GeneratorArgs): Obj {
  if (!args.name) throw new GeneratorError('a configmap must have a name');
  const o: Obj = { apiVersion: 'v1', kind, metadata: { name: args.name } };
  if (args.namespace) o.metadata.namespace = args.namespace;
  return o;
}

function applyOptions(o: Obj, opts: GeneratorOptions | undefined): void {
  if (!opts) return;
  for (const k of Object.keys(opts.labels ?? {}).sort(goLess)) (o.metadata.labels ??= {})[k] = String(opts.labels![k]);
  for (const k of Object.keys(opts.annotations ?? {}).sort(goLess)) (o.metadata.annotations ??= {})[k] = String(opts.annotations![k]);
  if (opts.immutable) o.immutable = true;
}

export function makeConfigMap(root: string, args: GeneratorArgs): Obj {
  const o = baseObject('ConfigMap', args);
  const m = validatedPairs(root, args);
  for (const k of [...m.keys()].sort(goLess)) {
    const v = m.get(k)!;
    if (typeof v === 'string' || isUTF8(v)) (o.data ??= {})[k] = typeof v === 'string' ? v : v.toString('utf8');
    else (o.binaryData ??= {})[k] = kustomizeBase64(v);
  }
  applyOptions(o, args.options);
  return o;
}

export function makeSecret(root: string, args: GeneratorArgs): Obj {
  const o = baseObject('Secret', args);
  o.type = args.type || 'Opaque';
  const m = validatedPairs(root, args);
  o.data = {};
  for (const k of [...m.keys()].sort(goLess)) {
    const v = m.get(k)!;
    o.data[k] = kustomizeBase64(typeof v === 'string' ? Buffer.from(v, 'utf8') : v);
  }
  applyOptions(o, args.options);
  return o;
}
