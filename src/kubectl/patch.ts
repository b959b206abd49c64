// `keelson patch`: kubectl patch (k8s.io/kubectl/pkg/cmd/patch) over Keelson's client.
//
// Update fields of objects named by TYPE NAME, TYPE/NAME, -f FILE|DIR|URL|- (-R) or -k DIR with
// a strategic merge patch (the default), a JSON merge patch or a JSON patch given as JSON or
// YAML (-p or --patch-file); on the object or one of its subresources (--subresource); for real,
// as a server dry run, or locally (--local, --dry-run=client) with the patch algorithms of
// src/patch. Each object is printed with the -o printer: by default `configmap/x patched`, or
// `patched (no change)` when the server's answer equals what was read before.

import { readFileSync } from 'node:fs';
import { get as httpGetPlain } from 'node:http';
import { get as httpsGet } from 'node:https';
import { FlagSet, StringSliceValue, StringValue, BoolValue, type Flag } from '../cli/flags.js';
import { log } from '../cli/klog.js';
import { APIError, isNotFound } from '../client/rest.js';
import { resourcePath } from '../client/resources.js';
import { PatchError, deepEqualJSON } from '../patch/errors.js';
import { goJSONSyntaxError, jsonMarshal, quote } from './gofmt.js';
import { yamlToJSON } from './goyaml.js';
import { ConnectionError, Factory, goURLErrorText } from './factory.js';
import { addGlobalFlags, asConnectionError, optionsText, runKubectlCommand, type KubectlCommandSpec, type KubectlIO, type RunContext } from './cmd.js';
import { buildResources, type Info, type KubeObject } from './resource.js';
import { toPrinter, PrintError, OUTPUT_FORMATS_HELP, type PrintFlagValues } from './printers.js';
import { gvkString } from './discovery.js';

const PATCH_TYPES: Record<string, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

export const PATCH_LONG = `Update fields of a resource using strategic merge patch, a JSON merge patch, or a JSON patch.

 JSON and YAML formats are accepted.

 Note: Strategic merge patch is not supported for custom resources.`;

export function patchExamples(program: string): string {
  return [
    '  # Partially update a node using a strategic merge patch, specifying the patch as JSON',
    `  ${program} patch node k8s-node-1 -p '{"spec":{"unschedulable":true}}'`,
    '  ',
    '  # Partially update a node using a strategic merge patch, specifying the patch as YAML',
    `  ${program} patch node k8s-node-1 -p $'spec:\\n unschedulable: true'`,
    '  ',
    '  # Partially update a node identified by the type and name specified in "node.json" using strategic merge patch',
    `  ${program} patch -f node.json -p '{"spec":{"unschedulable":true}}'`,
    '  ',
    "  # Update a container's image; spec.containers[*].name is required because it's a merge key",
    `  ${program} patch pod valid-pod -p '{"spec":{"containers":[{"name":"kubernetes-serve-hostname","image":"new image"}]}}'`,
    '  ',
    "  # Update a container's image using a JSON patch with positional arrays",
    `  ${program} patch pod valid-pod --type='json' -p='[{"op": "replace", "path": "/spec/containers/0/image", "value":"new image"}]'`,
    '  ',
    "  # Update a deployment's replicas through the 'scale' subresource using a merge patch",
    `  ${program} patch deployment nginx-deployment --subresource='scale' --type='merge' -p '{"spec":{"replicas":2}}'`,
  ].join('\n');
}

interface PatchOptions {
  patch: string;
  patchFile: string;
  type: string;
  dryRun: string;
  filenames: string[];
  kustomize: string;
  recursive: boolean;
  local: boolean;
  fieldManager: string;
  subresource: string;
  output: string;
  template: string;
  allowMissingTemplateKeys: boolean;
  showManagedFields: boolean;
  record: boolean;
}

type DryRun = 'none' | 'client' | 'server';

function declareFlags(fs: FlagSet, o: PatchOptions): void {
  const str = (key: keyof PatchOptions, name: string, usage: string, opts: { shorthand?: string; noOptDefVal?: string; hidden?: boolean; deprecated?: string } = {}): Flag<string> =>
    fs.var<string>(new StringValue({ get: () => o[key] as string, set: (v: string) => ((o as any)[key] = v) }), name, usage, opts);
  const bool = (key: keyof PatchOptions, name: string, usage: string, opts: { shorthand?: string; hidden?: boolean } = {}): Flag<boolean> =>
    fs.var<boolean>(new BoolValue({ get: () => o[key] as boolean, set: (v: boolean) => ((o as any)[key] = v) }), name, usage, opts);
  bool('allowMissingTemplateKeys', 'allow-missing-template-keys', 'If true, ignore any errors in templates when a field or map key is missing in the template. Only applies to golang and jsonpath output formats.');
  str('dryRun', 'dry-run', 'Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.', { noOptDefVal: 'unchanged' });
  str('fieldManager', 'field-manager', 'Name of the manager used to track field ownership.');
  fs.var<string[]>(new StringSliceValue({ get: () => o.filenames, set: (v: string[]) => (o.filenames = v) }), 'filename', 'Filename, directory, or URL to files identifying the resource to update', { shorthand: 'f' });
  str('kustomize', 'kustomize', "Process the kustomization directory. This flag can't be used together with -f or -R.", { shorthand: 'k' });
  bool('local', 'local', 'If true, patch will operate on the content of the file, not the server-side resource.');
  str('output', 'output', `Output format. One of: (${OUTPUT_FORMATS_HELP.join(', ')}).`, { shorthand: 'o' });
  str('patch', 'patch', 'The patch to be applied to the resource JSON file.', { shorthand: 'p' });
  str('patchFile', 'patch-file', 'A file containing a patch to be applied to the resource.');
  bool('recursive', 'recursive', 'Process the directory used in -f, --filename recursively. Useful when you want to manage related manifests organized within the same directory.', { shorthand: 'R' });
  bool('showManagedFields', 'show-managed-fields', 'If true, keep the managedFields when printing objects in JSON or YAML format.');
  str('subresource', 'subresource', 'If specified, patch will operate on the subresource of the requested object.');
  str('template', 'template', 'Template string or path to template file to use when -o=go-template, -o=go-template-file. The template format is golang templates [http://golang.org/pkg/text/template/#pkg-overview].');
  str('type', 'type', 'The type of patch being provided; one of [json merge strategic]');
  // cli-runtime's RecordFlags: deprecated (and so hidden), kept for the scripts that still pass it
  fs.var<boolean>(new BoolValue({ get: () => o.record, set: (v: boolean) => (o.record = v) }), 'record', 'Record current kubectl command in the resource annotation. If set to false, do not record the command. If set to true, record the command. If not set, default to updating the existing annotation value only if one already exists.', { deprecated: '--record will be removed in the future' });
}

/**
 * The command line kubectl records as kubernetes.io/change-cause (cli-runtime's
 * parseCommandArguments): the program, the command and its positional arguments, then each flag
 * given, by its long name, as --name=value in the order given.
 */
export function changeCause(program: string, command: string, fs: FlagSet): string {
  return `${program} ${[command, ...fs.args()].join(' ')}${fs.givenFlags().map((f) => ` --${f.name}=${f.value}`).join('')}`;
}

function defaults(): PatchOptions {
  return {
    patch: '',
    patchFile: '',
    type: 'strategic',
    dryRun: 'none',
    filenames: [],
    kustomize: '',
    recursive: false,
    local: false,
    fieldManager: 'kubectl-patch',
    subresource: '',
    output: '',
    template: '',
    allowMissingTemplateKeys: true,
    showManagedFields: false,
    record: false,
  };
}

/** cmdutil.GetDryRunStrategy, with its deprecation warnings. */
export function dryRunStrategy(value: string): DryRun {
  const lower = value;
  let b: boolean | undefined;
  switch (lower) {
    case '1': case 't': case 'T': case 'TRUE': case 'true': case 'True': b = true; break;
    case '0': case 'f': case 'F': case 'FALSE': case 'false': case 'False': b = false; break;
  }
  if (b === undefined) {
    switch (value) {
      case 'unchanged':
        log.warningf('--dry-run is deprecated and can be replaced with --dry-run=client.');
        return 'client';
      case 'client':
        return 'client';
      case 'server':
        return 'server';
      case 'none':
        return 'none';
    }
    throw new Error(`Invalid dry-run value (${value}). Must be "none", "server", or "client".`);
  }
  if (b) {
    log.warningf('--dry-run=%s is deprecated (boolean value) and can be replaced with --dry-run=%s.', value, 'client');
    return 'client';
  }
  log.warningf('--dry-run=%s is deprecated (boolean value) and can be replaced with --dry-run=%s.', value, 'none');
  return 'none';
}

function gvkOf(obj: KubeObject): { group: string; version: string; kind: string } {
  const av = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const i = av.lastIndexOf('/');
  return { group: i < 0 ? '' : av.slice(0, i), version: i < 0 ? av : av.slice(i + 1), kind: typeof obj.kind === 'string' ? obj.kind : '' };
}

/** A patch as given: its bytes as sent, and its value (or Go's JSON syntax error). */
export interface PatchInput {
  body: string;
  value?: unknown;
  syntaxError?: string;
}

/**
 * apimachinery's yaml.ToJSON: text starting with `{` is taken as JSON as it is (even invalid:
 * the error comes later, from whoever reads it); anything else is YAML converted to JSON.
 */
export function patchInput(text: string): PatchInput {
  if (/^\s*\{/u.test(text)) {
    const syntaxError = goJSONSyntaxError(text);
    return syntaxError ? { body: text, syntaxError } : { body: text, value: JSON.parse(text) };
  }
  const v = yamlToJSON(text) ?? null;
  return { body: jsonMarshal(v), value: v };
}

/**
 * The patch applied on the client (--local, --dry-run=client), as kubectl's getPatchedJSON.
 * The patch algorithms (and the schema, for strategic merge) are loaded only for this path.
 */
export async function patchLocally(patchType: string, original: KubeObject, input: PatchInput): Promise<KubeObject> {
  const [{ applyJSONPatch }, { applyMergePatch }, { applyStrategicMergePatch }, { typeForKind }] = await Promise.all([
    import('../patch/jsonpatch.js'),
    import('../patch/mergepatch.js'),
    import('../patch/strategic.js'),
    import('../schema/types.js'),
  ]);
  const local = (e: unknown): Error => {
    if (e instanceof PatchError) return new Error(e.detail);
    return e as Error;
  };
  const patch = input.value;
  switch (patchType) {
    case 'json': {
      if (input.syntaxError) throw new Error(input.syntaxError);
      let out: unknown;
      try {
        out = applyJSONPatch(original, patch, { fieldValidation: 'Ignore', maxOperations: Number.MAX_SAFE_INTEGER, maxCopyBytes: 0 });
      } catch (e) {
        const err = local(e);
        const ix = err.message.indexOf('key:');
        if (err.message.includes('doc is missing key') && ix >= 0) throw new Error(`Object to be patched is missing field (${err.message.slice(ix + 5)})`);
        throw err;
      }
      return asObject(out);
    }
    case 'merge': {
      if (input.syntaxError) throw new Error('Invalid JSON Patch');
      let out: unknown;
      try {
        out = applyMergePatch(original, patch, { fieldValidation: 'Ignore' });
      } catch (e) {
        throw local(e);
      }
      return asObject(out);
    }
    default: {
      if (input.syntaxError || (patch !== null && (typeof patch !== 'object' || Array.isArray(patch)))) throw new Error('invalid JSON document');
      const gvk = gvkOf(original);
      const t = typeForKind(gvk.group, gvk.version, gvk.kind);
      if (!t) throw new Error(`strategic merge patch is not supported for ${gvkString(gvk)} locally, try --type merge`);
      try {
        return asObject(applyStrategicMergePatch(original, patch ?? {}, t.name));
      } catch (e) {
        throw local(e);
      }
    }
  }
}

/** runtime.Decode(unstructured.UnstructuredJSONScheme, ...) of a patched document. */
function asObject(v: unknown): KubeObject {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    const kind = Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'boolean' ? 'bool' : typeof v;
    throw new Error(`json: cannot unmarshal ${kind} into Go value of type unstructured.detector`);
  }
  const o = v as KubeObject;
  if (typeof o.kind !== 'string' || !o.kind) throw new Error(`Object 'Kind' is missing in '${jsonMarshal(o)}'`);
  return o;
}

/** one GET of a URL with node:http(s) (fetch refuses ports such as 1 or 6000, which Go's client does not) */
function httpGet(url: string): Promise<{ status: number; statusText: string; body: string }> {
  return new Promise((resolve, reject) => {
    const get = url.startsWith('https:') ? httpsGet : httpGetPlain;
    const req = get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

async function fetchURL(url: string): Promise<string> {
  let lastErr: Error | undefined;
  for (let i = 0; i < 3; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 1000));
    let res: { status: number; statusText: string; body: string };
    try {
      res = await httpGet(url);
    } catch (e) {
      // a *url.Error, which kubectl words as it words a server it cannot reach
      const r = goURLErrorText('GET', url, e as Error);
      lastErr = new ConnectionError(r.text, r.host, r.refused, r.detail);
      continue;
    }
    if (res.status === 200) return res.body;
    lastErr = new Error(`unable to read URL ${quote(url)}, server reported ${res.status} ${res.statusText}, status code=${res.status}`);
    if (res.status >= 500 && res.status < 600) continue;
    break;
  }
  throw lastErr!;
}

async function runPatch(ctx: RunContext, o: PatchOptions): Promise<void> {
  const { io, global } = ctx;
  const outputChanged = ctx.flags.changed('output');
  if (log.enabled(1)) {
    // client-go's feature gates, which kubectl reports at -v=1
    for (const [feature, enabled] of [['ClientsAllowCBOR', false], ['ClientsPreferCBOR', false], ['InformerResourceVersion', false], ['InOrderInformers', true], ['WatchListClient', false]] as const) {
      log.v(1).info('Feature gate default state', { feature, enabled });
    }
  }
  const dryRun = dryRunStrategy(o.dryRun);
  const factory = new Factory(global.config, io, 'kubectl patch', io.env);
  ctx.setWarningCounter(() => factory.warnings.count);
  try {
    // Complete
    const { namespace, enforce } = factory.namespace();
    const args = ctx.args;

    // Validate
    if (o.patch && o.patchFile) throw new Error('cannot specify --patch and --patch-file together');
    if (!o.patch && !o.patchFile) throw new Error('must specify --patch or --patch-file containing the contents of the patch');
    if (o.local && args.length !== 0) throw new Error('cannot specify --local and server resources');
    if (o.local && dryRun === 'server') throw new Error('cannot specify --local and --dry-run=server - did you mean --dry-run=client?');
    if (o.type && !PATCH_TYPES[o.type.toLowerCase()]) throw new Error(`--type must be one of [json merge strategic], not ${quote(o.type)}`);

    // RunPatch
    const patchType = (o.type || 'strategic').toLowerCase();
    let patchText: string;
    if (o.patchFile) {
      try {
        patchText = readFileSync(o.patchFile, 'utf8');
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        const why = err.code === 'ENOENT' ? 'no such file or directory' : err.code === 'EISDIR' ? 'is a directory' : err.code === 'EACCES' ? 'permission denied' : err.message;
        // (Go's os.ReadFile opens a directory and fails on the read)
        throw new Error(`unable to read patch file: ${err.code === 'EISDIR' ? 'read' : 'open'} ${o.patchFile}: ${why}`);
      }
    } else patchText = o.patch;
    let patch: PatchInput;
    try {
      patch = patchInput(patchText);
    } catch (e) {
      throw new Error(`unable to parse ${quote(o.patch)}: ${(e as Error).message}`);
    }

    const printFlags: PrintFlagValues = { output: o.output, outputChanged, template: o.template, allowMissingTemplateKeys: o.allowMissingTemplateKeys, showManagedFields: o.showManagedFields };

    const result = await buildResources({
      local: o.local,
      namespace,
      enforceNamespace: enforce,
      filenames: o.filenames,
      recursive: o.recursive,
      kustomize: o.kustomize,
      subresource: o.subresource,
      args,
      programName: ctx.program,
      mapper: () => factory.restMapper(),
      describeError: (e) => factory.describeError(e),
      get: async (mapping, ns, name, sub) => {
        const rest = await factory.restClient();
        // (cli-runtime's unstructured client accepts JSON alone)
        return rest.json<KubeObject>({ method: 'GET', path: resourcePath(mapping.resource, ns, name, sub), accept: 'application/json' });
      },
      getNamespace: async (name) => {
        const rest = await factory.restClient();
        return rest.json({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(name)}` });
      },
      isNotFound,
      fetchURL,
      readStdin: io.readStdin,
      warn: (line) => io.stderr.write(line + '\n'),
    });
    if (result.err) throw result.err;

    let count = 0;
    const err = await result.visit(async (info: Info) => {
      count++;
      const { name, namespace: ns } = info;
      if (!o.local && dryRun !== 'client') {
        const mapping = info.mapping!;
        const rest = await factory.restClient();
        let patched: KubeObject;
        try {
          patched = await rest.json<KubeObject>({
            method: 'PATCH',
            path: resourcePath(mapping.resource, ns, name, o.subresource),
            query: { dryRun: dryRun === 'server' ? 'All' : undefined, fieldManager: o.fieldManager },
            body: Buffer.from(patch.body),
            contentType: PATCH_TYPES[patchType],
            accept: 'application/json',
          });
        } catch (e) {
          if (e instanceof APIError && (e.reason === 'UnsupportedMediaType' || (e.code === 415 && !e.reason))) {
            throw new Error(`${PATCH_TYPES[patchType]} is not supported by ${gvkString(mapping.gvk)}: ${e.message}`);
          }
          throw e;
        }
        const didPatch = !deepEqualJSON(info.object, patched);
        if (o.record) {
          // --record: a second (merge) patch writes the command line as the change cause
          const cause = changeCause(ctx.program, 'patch', ctx.flags);
          try {
            patched = await rest.json<KubeObject>({
              method: 'PATCH',
              path: resourcePath(mapping.resource, ns, name, o.subresource),
              query: { dryRun: dryRun === 'server' ? 'All' : undefined, fieldManager: o.fieldManager },
              body: Buffer.from(JSON.stringify({ metadata: { annotations: { 'kubernetes.io/change-cause': cause } } })),
              contentType: 'application/merge-patch+json',
              accept: 'application/json',
            });
          } catch (e) {
            log.v(4).info(`error recording reason: ${(e as Error).message}`);
          }
        }
        print(io, printFlags, didPatch, patched);
        return;
      }
      const original = info.object!;
      const target = await patchLocally(patchType, original, patch);
      const didPatch = !deepEqualJSON(original, target);
      print(io, printFlags, didPatch, target);
    });
    if (err) throw err;
    if (count === 0) throw new Error('no objects passed to patch');
  } catch (e) {
    throw asConnectionError(e, (t) => factory.connectionError(t));
  } finally {
    factory.close();
  }
}

function print(io: KubectlIO, flags: PrintFlagValues, didPatch: boolean, obj: KubeObject): void {
  const printer = toPrinter(flags, didPatch ? 'patched' : 'patched (no change)');
  try {
    io.stdout.write(printer.print(obj));
  } catch (e) {
    if (e instanceof PrintError && e.output) io.stdout.write(e.output);
    throw e;
  }
}

/** The `patch` command's spec (a fresh option set per run). */
export function patchSpec(program = 'keelson'): KubectlCommandSpec {
  const o = defaults();
  return {
    name: 'patch',
    short: 'Update fields of a resource',
    help: { long: PATCH_LONG, example: patchExamples(program), use: 'patch (-f FILENAME | TYPE NAME) [-p PATCH|--patch-file FILE]' },
    flags: (fs) => declareFlags(fs, o),
    run: (ctx) => runPatch(ctx, o),
  };
}

/** `keelson options`: the global flags kubectl-style commands accept. */
export function optionsSpec(): KubectlCommandSpec {
  return {
    name: 'options',
    short: 'Print the list of flags inherited by all commands',
    help: { long: 'Print the list of flags inherited by all commands', example: '  # Print flags inherited by all commands\n  keelson options', use: 'options' },
    flags: () => {},
    noGlobals: true,
    run: async (ctx) => {
      const fs = new FlagSet('global');
      addGlobalFlags(fs, ctx.io.env);
      ctx.io.stdout.write(optionsText(fs));
    },
  };
}

/** Runs `patch` or `options` on this process's stdio; returns the exit code. */
export function runFromProcess(name: 'patch' | 'options', args: string[]): Promise<number> {
  const io: KubectlIO = {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    stdoutColumns: process.stdout.isTTY ? terminalLimit(process.stdout.columns ?? 0) : 0,
    colorWarnings: !!process.stderr.isTTY && process.env.TERM !== 'dumb',
  };
  return runKubectlCommand(name === 'patch' ? patchSpec() : optionsSpec(), args, io);
}

function terminalLimit(cols: number): number {
  if (cols >= 120) return 120;
  if (cols >= 100) return 100;
  if (cols >= 80) return 80;
  return 0;
}
