// kubectl's resource builder (k8s.io/cli-runtime/pkg/resource) for commands that act on named
// objects: `TYPE NAME...`, `TYPE/NAME...`, `-f FILE|DIR|URL|-` (with -R), `-k DIR`; the objects
// files name, decoded as unstructured objects (lists flattened); the namespace defaulting and
// enforcement; the lazy GET of objects named on the command line; and the builder's messages.
// Visiting continues after errors and collects them, as `ContinueOnError()` does.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { quote } from './gofmt.js';
import { normalize } from '../codec/json.js';
import { jsonMarshal } from './gofmt.js';
import { yamlToJSONDocuments } from './goyaml.js';
import { isNoMatchError, NoKindMatchError, type KubectlRESTMapper, type RESTMapping } from './discovery.js';
import { kustomizeBuild } from './kustomize.js';

export type KubeObject = Record<string, any>;

export interface Info {
  /** the file, URL, `STDIN` or kustomization the object came from ('' for command-line names) */
  source: string;
  namespace: string;
  name: string;
  mapping?: RESTMapping;
  /** the object from the file, or from the server once fetched */
  object?: KubeObject;
  subresource: string;
}

/** utilerrors.Aggregate: several errors reported together. */
export class AggregateError extends Error {
  constructor(readonly errors: Error[]) {
    super(errors.length === 1 ? errors[0]!.message : `[${errors.map((e) => e.message).join(', ')}]`);
    this.name = 'AggregateError';
  }
}

export const FILE_EXTENSIONS = ['.json', '.yaml', '.yml'];

export const MISSING_RESOURCE_MESSAGE = `You must provide one or more resources by argument or filename.
Example resource specifications include:
   '-f rsrc.yaml'
   '--filename=rsrc.json'
   '<resource> <name>'
   '<resource>'`;

export interface BuilderOptions {
  local: boolean;
  namespace: string;
  enforceNamespace: boolean;
  filenames: string[];
  recursive: boolean;
  kustomize: string;
  subresource: string;
  args: string[];
  /** the program name used in usage hints (`kubectl get resource/<resource_name>`) */
  programName: string;
  mapper: () => Promise<KubectlRESTMapper>;
  /** GET of an object (or its subresource) from the server */
  get: (mapping: RESTMapping, namespace: string, name: string, subresource: string) => Promise<KubeObject>;
  /** GET of a namespace (kubectl checks it after a NotFound) */
  getNamespace: (name: string) => Promise<unknown>;
  /** whether an error is a NotFound Status */
  isNotFound: (e: unknown) => boolean;
  /** a URL's body (kubectl retries 5xx three times) */
  fetchURL: (url: string) => Promise<string>;
  readStdin: () => Promise<string>;
  /** notes for the user (kustomize's deprecation warnings) */
  warn?: (line: string) => void;
  /** an error's text as Go prints it (a request that did not reach the server: its *url.Error) */
  describeError?: (e: unknown) => string;
}

type Source = { kind: 'file'; path: string } | { kind: 'url'; url: string } | { kind: 'stdin' } | { kind: 'kustomize'; dir: string };

function pathNotExist(p: string): Error {
  return new Error(`the path ${quote(p)} does not exist`);
}

/** Go's filepath.Match-style glob, for `-f 'dir/*.yaml'`. */
function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const j = pattern.indexOf(']', i + 1);
      if (j < 0) throw new Error('syntax error in pattern');
      let cls = pattern.slice(i + 1, j);
      if (cls.startsWith('^')) cls = '^' + cls.slice(1);
      re += `[${cls.replace(/\\/g, '\\\\')}]`;
      i = j;
    } else if (c === '\\' && i + 1 < pattern.length) {
      re += '\\' + pattern[++i];
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

/** filepath.Glob */
function glob(pattern: string): string[] {
  const abs = pattern.startsWith('/');
  const parts = pattern.split('/').filter((p, i) => !(i === 0 && p === ''));
  let cur = [abs ? '/' : ''];
  for (const part of parts) {
    const next: string[] = [];
    for (const base of cur) {
      if (!/[*?[\\]/.test(part)) {
        next.push(base ? join(base, part) : part);
        continue;
      }
      const re = globToRegExp(part);
      let entries: string[] = [];
      try {
        entries = readdirSync(base || '.').sort();
      } catch {
        entries = [];
      }
      for (const n of entries) if (re.test(n)) next.push(base ? join(base, n) : n);
    }
    cur = next;
  }
  return cur.filter(exists);
}

function expandIfFilePattern(pattern: string): string[] {
  if (exists(pattern)) return [pattern];
  let matches: string[];
  try {
    matches = glob(pattern);
  } catch {
    throw new Error(`pattern ${quote(pattern)} is not valid: syntax error in pattern`);
  }
  if (matches.length === 0) throw pathNotExist(pattern);
  return matches;
}

/** filepath.Walk of a path: the files it names (directories recursed with -R). */
function expandPath(root: string, recursive: boolean): string[] {
  const out: string[] = [];
  const walk = (p: string): void => {
    const st = statSync(p);
    if (st.isDirectory()) {
      if (p !== root && !recursive) return;
      for (const n of readdirSync(p).sort()) walk(join(p, n));
      return;
    }
    if (p !== root && !FILE_EXTENSIONS.includes(extname(p))) return;
    out.push(p);
  };
  walk(root);
  return out;
}

function isListType(o: KubeObject): boolean {
  return Array.isArray(o.items) && typeof o.kind === 'string';
}

/** `Object 'Kind' is missing in '<json>'` */
function decodeObject(raw: unknown, rawText: string): KubeObject {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    const t = raw === null ? 'null' : Array.isArray(raw) ? 'array' : typeof raw === 'string' ? 'string' : typeof raw === 'number' ? 'number' : typeof raw;
    throw new Error(`json: cannot unmarshal ${t} into Go value of type map[string]interface {}`);
  }
  const o = raw as KubeObject;
  if (typeof o.kind !== 'string' || o.kind === '') throw new Error(`Object 'Kind' is missing in '${rawText}'`);
  metadataError(o.metadata);
  return o;
}

/**
 * cli-runtime's metadataValidatingDecoder: the object's metadata must decode as an ObjectMeta
 * (labels and annotations strings, generation a number, timestamps RFC 3339, ...), whatever its
 * kind; Go's error otherwise. The server's decoder words the same errors, through any kind with
 * ObjectMeta (a ConfigMap here, given only the metadata).
 */
function metadataError(md: unknown): void {
  if (md === undefined || md === null) return;
  if (typeof md !== 'object' || Array.isArray(md)) {
    const t = Array.isArray(md) ? 'array' : typeof md === 'string' ? 'string' : typeof md === 'number' ? 'number' : typeof md === 'boolean' ? 'bool' : typeof md;
    throw new Error(`json: cannot unmarshal ${t} into Go struct field metadataOnlyObject.metadata of type v1.ObjectMeta`);
  }
  const r = normalize('io.k8s.api.core.v1.ConfigMap', { metadata: md });
  if (r.typeError) throw new Error(r.typeError);
}

function metaString(o: KubeObject, field: string): string {
  const md = o.metadata;
  return md && typeof md === 'object' && typeof md[field] === 'string' ? md[field] : '';
}

function setObjectNamespace(o: KubeObject, ns: string): void {
  if (ns === '') {
    if (o.metadata && typeof o.metadata === 'object') delete o.metadata.namespace;
    return;
  }
  if (!o.metadata || typeof o.metadata !== 'object') o.metadata = {};
  o.metadata.namespace = ns;
}

function splitResourceArgument(arg: string): string[] {
  const out: string[] = [];
  for (const s of arg.split(',')) if (!out.includes(s)) out.push(s);
  return out;
}

function splitResourceTypeName(s: string): { resource: string; name: string } | undefined {
  if (!s.includes('/')) return undefined;
  const seg = s.split('/');
  if (seg.length !== 2) throw new Error('arguments in resource/name form may not have more than one slash');
  const [resource, name] = seg as [string, string];
  if (!resource || !name || splitResourceArgument(resource).length !== 1) throw new Error('arguments in resource/name form must have a single resource and name');
  return { resource, name };
}

function normalizeMultipleResourcesArgs(args: string[]): string[] {
  if (args.length >= 2) {
    const resources = splitResourceArgument(args[0]!);
    if (resources.length > 1) return resources.flatMap((r) => args.slice(1).map((n) => `${r}/${n}`));
  }
  return args;
}

/** The result of building: either an error for the whole request, or the visit. */
export class ResourceResult {
  constructor(
    readonly err: Error | undefined,
    private readonly items: () => AsyncGenerator<{ info?: Info; error?: Error }>,
  ) {}

  /**
   * Visits each object (ContinueOnError): `fn` runs for each; errors from reading, mapping,
   * fetching and from `fn` are collected. Returns the collected error (one, or an aggregate).
   */
  async visit(fn: (info: Info) => Promise<void>): Promise<Error | undefined> {
    const errs: Error[] = [];
    for await (const it of this.items()) {
      if (it.error) {
        errs.push(it.error);
        continue;
      }
      try {
        await fn(it.info!);
      } catch (e) {
        errs.push(e as Error);
      }
    }
    if (errs.length === 0) return undefined;
    if (errs.length === 1) return errs[0];
    return new AggregateError(errs);
  }
}

/** Builder.Do() for `Unstructured().ContinueOnError().LocalParam().NamespaceParam().DefaultNamespace().FilenameParam().Subresource().ResourceTypeOrNameArgs(false, ...).Flatten()`. */
export async function buildResources(o: BuilderOptions): Promise<ResourceResult> {
  const errs: Error[] = [];
  const sources: Source[] = [];
  // FilenameParam
  if (o.filenames.length > 0 && o.kustomize) errs.push(new Error('only one of -f or -k can be specified'));
  if (o.kustomize && o.recursive) errs.push(new Error("the -k flag can't be used with -f or -R"));
  if (errs.length === 0) {
    for (const s of o.filenames) {
      if (s === '-') {
        sources.push({ kind: 'stdin' });
      } else if (s.startsWith('http://') || s.startsWith('https://')) {
        try {
          new URL(s);
        } catch (e) {
          errs.push(new Error(`the URL passed to filename ${quote(s)} is not valid: parse ${quote(s)}: ${(e as Error).message}`));
          continue;
        }
        sources.push({ kind: 'url', url: s });
      } else {
        let matches: string[];
        try {
          matches = expandIfFilePattern(s);
        } catch (e) {
          errs.push(e as Error);
          continue;
        }
        for (const p of matches) {
          let files: string[];
          try {
            files = expandPath(p, o.recursive);
          } catch (e) {
            const err = e as NodeJS.ErrnoException;
            if (err.code === 'ENOENT') errs.push(pathNotExist(p));
            else errs.push(new Error(`the path ${quote(p)} cannot be accessed: ${err.message}`));
            continue;
          }
          for (const f of files) sources.push({ kind: 'file', path: f });
        }
      }
    }
    if (o.filenames.length > 0 && sources.length === 0 && errs.length === 0) {
      errs.push(new Error(`error reading [${o.filenames.join(' ')}]: recognized file extensions are [${FILE_EXTENSIONS.join(' ')}]`));
    }
    if (o.kustomize) sources.push({ kind: 'kustomize', dir: o.kustomize });
  }

  // ResourceTypeOrNameArgs(false, args...)
  const tuples: { resource: string; name: string }[] = [];
  const names: string[] = [];
  const resources: string[] = [];
  let args = normalizeMultipleResourcesArgs(o.args);
  const slashed = args.filter((a) => a.includes('/')).length;
  if (slashed > 0) {
    if (slashed !== args.length) {
      errs.push(
        new Error(
          `there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. '${o.programName} get resource/<resource_name>' instead of '${o.programName} get resource resource/<resource_name>'`,
        ),
      );
    } else {
      for (const s of args) {
        try {
          const t = splitResourceTypeName(s);
          if (t) tuples.push(t);
        } catch (e) {
          errs.push(e as Error);
          break;
        }
      }
    }
  } else if (args.length > 0) {
    args = [...args];
    // ReplaceAliases: categories (`all`, ...) expand to their resources
    if (!o.local) {
      const mapper = await o.mapper().catch(() => undefined);
      if (mapper) {
        const replaced: string[] = [];
        for (const a of args[0]!.split(',')) {
          const exp = await mapper.expandCategory(a);
          replaced.push(exp ? exp.map((r) => (r.group ? `${r.resource}.${r.group}` : r.resource)).join(',') : a);
        }
        args[0] = replaced.join(',');
      }
    }
    if (args.length >= 2) names.push(...args.slice(1));
    resources.push(...splitResourceArgument(args[0]!));
  }

  const fail = (e: Error) => new ResourceResult(e, async function* () {});
  if (errs.length) return fail(errs.length === 1 ? errs[0]! : new AggregateError(errs));

  const mappingFor = async (r: string): Promise<RESTMapping> => {
    if (o.local) throw new Error('local operation only');
    return (await o.mapper()).mappingFor(r);
  };

  // visitorResult
  if (sources.length > 0) {
    if (resources.length) return fail(new Error('when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well'));
    if (names.length) return fail(new Error('name cannot be provided when a path is specified'));
    if (tuples.length) return fail(new Error('resource/name arguments cannot be provided when a path is specified'));
    return new ResourceResult(undefined, () => visitSources(o, sources));
  }
  if (tuples.length > 0) {
    if (resources.length) return fail(new Error('you may not specify individual resources and bulk resources in the same call'));
    const mappings = new Map<string, RESTMapping>();
    for (const t of tuples) {
      if (mappings.has(t.resource)) continue;
      try {
        mappings.set(t.resource, await mappingFor(t.resource));
      } catch (e) {
        return fail(e as Error);
      }
    }
    const infos: Info[] = [];
    for (const t of tuples) {
      const m = mappings.get(t.resource)!;
      let ns = o.namespace;
      if (!m.namespaced) ns = '';
      else if (!ns) return fail(new Error('namespace may not be empty when retrieving a resource by name'));
      infos.push({ source: '', namespace: ns, name: t.name, mapping: m, subresource: o.subresource });
    }
    return new ResourceResult(undefined, () => visitInfos(o, infos));
  }
  if (names.length > 0) {
    if (resources.length === 0) return fail(new Error('you must provide a resource and a resource name together'));
    if (resources.length > 1) return fail(new Error('you must specify only one resource'));
    let m: RESTMapping;
    try {
      m = await mappingFor(resources[0]!);
    } catch (e) {
      return fail(e as Error);
    }
    let ns = o.namespace;
    if (!m.namespaced) ns = '';
    else if (!ns) return fail(new Error('namespace may not be empty when retrieving a resource by name'));
    const infos = names.map((n) => ({ source: '', namespace: ns, name: n, mapping: m, subresource: o.subresource }));
    return new ResourceResult(undefined, () => visitInfos(o, infos));
  }
  if (resources.length > 0) {
    for (const r of resources) {
      try {
        await mappingFor(r);
      } catch (e) {
        return fail(e as Error);
      }
    }
    return fail(new Error('resource(s) were provided, but no name was specified'));
  }
  return fail(new Error(MISSING_RESOURCE_MESSAGE));
}

/** The helpers Do() applies to each info: SetNamespace, RequireNamespace, FilterNamespace, RetrieveLazy. */
async function decorate(o: BuilderOptions, info: Info): Promise<void> {
  const namespaced = info.mapping ? info.mapping.namespaced : info.namespace.length > 0;
  if (namespaced && info.namespace === '') {
    info.namespace = o.namespace;
    if (info.object) setObjectNamespace(info.object, o.namespace);
  }
  if (o.enforceNamespace && namespaced) {
    if (info.namespace === '') {
      info.namespace = o.namespace;
      if (info.object) setObjectNamespace(info.object, o.namespace);
    } else if (info.namespace !== o.namespace) {
      throw new Error(
        `the namespace from the provided object ${quote(info.namespace)} does not match the namespace ${quote(o.namespace)}. You must pass '--namespace=${info.namespace}' to perform this operation.`,
      );
    }
  }
  const stillNamespaced = info.mapping ? info.mapping.namespaced : info.namespace.length > 0;
  if (!stillNamespaced) {
    info.namespace = '';
    if (info.object) setObjectNamespace(info.object, '');
  }
  if (!info.object && info.mapping) {
    try {
      info.object = await o.get(info.mapping, info.namespace, info.name, info.subresource);
    } catch (e) {
      if (o.isNotFound(e) && info.namespace && info.namespace !== 'default') {
        try {
          await o.getNamespace(info.namespace);
        } catch (e2) {
          if (o.isNotFound(e2)) throw e2;
        }
      }
      throw e;
    }
  }
}

async function* visitInfos(o: BuilderOptions, infos: Info[]): AsyncGenerator<{ info?: Info; error?: Error }> {
  for (const info of infos) {
    try {
      await decorate(o, info);
      yield { info };
    } catch (e) {
      yield { error: e as Error };
    }
  }
}

/** The documents of a source: [JSON value, its raw JSON text]. */
async function readSource(o: BuilderOptions, s: Source): Promise<{ source: string; docs: [unknown, string][] }> {
  let text: string;
  let source: string;
  switch (s.kind) {
    case 'file':
      source = s.path;
      text = readFileSync(s.path, 'utf8');
      break;
    case 'stdin':
      source = 'STDIN';
      text = await o.readStdin();
      break;
    case 'url':
      source = s.url;
      text = await o.fetchURL(s.url);
      break;
    case 'kustomize': {
      source = s.dir;
      const objs = await kustomizeBuild(s.dir, o.warn);
      return { source, docs: objs.map((x) => [x, jsonMarshal(x)]) };
    }
  }
  text = text.replace(/^\uFEFF/, '');
  let docs: unknown[];
  try {
    docs = yamlToJSONDocuments(text);
  } catch (e) {
    const msg = (e as Error).message;
    const trimmed = text.replace(/^\s+/, '');
    throw new Error(`error parsing ${source}: ${trimmed.startsWith('{') ? msg : `error converting YAML to JSON: ${msg}`}`);
  }
  return { source, docs: docs.map((d) => [d, jsonMarshal(d)]) };
}

async function* visitSources(o: BuilderOptions, sources: Source[]): AsyncGenerator<{ info?: Info; error?: Error }> {
  for (const s of sources) {
    let read: { source: string; docs: [unknown, string][] };
    try {
      read = await readSource(o, s);
    } catch (e) {
      yield { error: e as Error };
      continue;
    }
    for (const [doc, raw] of read.docs) {
      let obj: KubeObject;
      try {
        obj = decodeObject(doc, raw);
      } catch (e) {
        yield { error: new Error(`unable to decode ${quote(read.source)}: ${(e as Error).message}`) };
        continue;
      }
      // Flatten: a list's items are visited in its place
      const items: KubeObject[] = [];
      const pending: KubeObject[] = [obj];
      const itemErrs: Error[] = [];
      while (pending.length) {
        const cur = pending.shift()!;
        if (!isListType(cur)) {
          items.push(cur);
          continue;
        }
        for (const it of cur.items as unknown[]) {
          try {
            pending.push(decodeObject(it, jsonMarshal(it)));
          } catch (e) {
            itemErrs.push(e as Error);
          }
        }
      }
      if (itemErrs.length) {
        yield { error: itemErrs.length === 1 ? itemErrs[0]! : new AggregateError(itemErrs) };
        continue;
      }
      for (const item of items) {
        const info: Info = { source: read.source, namespace: metaString(item, 'namespace'), name: metaString(item, 'name'), object: item, subresource: o.subresource };
        try {
          if (!o.local) {
            const apiVersion = typeof item.apiVersion === 'string' ? item.apiVersion : '';
            const i = apiVersion.lastIndexOf('/');
            const group = i < 0 ? '' : apiVersion.slice(0, i);
            const version = i < 0 ? apiVersion : apiVersion.slice(i + 1);
            try {
              info.mapping = await (await o.mapper()).restMapping({ group, kind: item.kind }, version || undefined);
            } catch (e) {
              if (e instanceof NoKindMatchError || isNoMatchError(e)) {
                throw new Error(`resource mapping not found for name: ${quote(info.name)} namespace: ${quote(info.namespace)} from ${quote(read.source)}: ${(e as Error).message}\nensure CRDs are installed first`);
              }
              throw new Error(`unable to recognize ${quote(read.source)}: ${o.describeError ? o.describeError(e) : (e as Error).message}`);
            }
          }
          await decorate(o, info);
          yield { info };
        } catch (e) {
          yield { error: e as Error };
        }
      }
    }
  }
}
