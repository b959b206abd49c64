// kubectl's object printers and the -o/--template flags that select them
// (k8s.io/cli-runtime printers and genericclioptions.PrintFlags): json, yaml, name (and the
// default "<kind>/<name> <operation>" line), go-template(-file), template(file), jsonpath(-file)
// and jsonpath-as-json, with kubectl's messages.

import { readFileSync } from 'node:fs';
import { jsonMarshal, quote, sprintf, toUnstructuredValues } from './gofmt.js';
import { GoTemplate, KUBECTL_FUNCS, TemplateExecError } from './gotemplate.js';
import { JSONPath } from './jsonpath.js';
import { yamlMarshal } from './goyaml.js';

export type KubeObject = Record<string, unknown>;

/** A printer failure; `output` is what kubectl writes to stdout before failing (template debugging). */
export class PrintError extends Error {
  constructor(
    message: string,
    readonly output = '',
  ) {
    super(message);
    this.name = 'PrintError';
  }
}

export interface Printer {
  /** The text for one object; throws PrintError. */
  print(obj: KubeObject): string;
}

export interface PrintFlagValues {
  output: string;
  /** whether -o was given on the command line */
  outputChanged: boolean;
  template: string;
  allowMissingTemplateKeys: boolean;
  showManagedFields: boolean;
}

const JSON_YAML = ['json', 'yaml'];
const NAME = ['name'];
const GO_TEMPLATE_FORMATS = ['go-template', 'go-template-file', 'template', 'templatefile'];
const JSONPATH_FORMATS = ['jsonpath', 'jsonpath-as-json', 'jsonpath-file'];

/** The -o values kubectl lists for commands printing objects, in its help order. */
export const OUTPUT_FORMATS_HELP = [...JSON_YAML, ...NAME, ...GO_TEMPLATE_FORMATS, ...JSONPATH_FORMATS];

class NoCompatiblePrinter extends Error {}

function noCompatible(output: string): PrintError {
  const allowed = [...JSON_YAML, ...NAME, ...GO_TEMPLATE_FORMATS, ...JSONPATH_FORMATS].sort();
  return new PrintError(`unable to match a printer suitable for the output format ${quote(output)}, allowed formats are: ${allowed.join(',')}`);
}

function withoutManagedFields(obj: KubeObject): KubeObject {
  const md = obj.metadata as Record<string, unknown> | undefined;
  if (!md || typeof md !== 'object' || !('managedFields' in md)) return obj;
  const { managedFields: _drop, ...rest } = md;
  void _drop;
  return { ...obj, metadata: rest };
}

function groupKind(obj: KubeObject): { group: string; kind: string } {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const i = apiVersion.indexOf('/');
  return { group: i < 0 ? '' : apiVersion.slice(0, i), kind: typeof obj.kind === 'string' ? obj.kind : '' };
}

function checkGVK(obj: KubeObject): void {
  const { kind } = groupKind(obj);
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  if (!kind && !apiVersion) throw new PrintError('missing apiVersion or kind; try GetObjectKind().SetGroupVersionKind() if you know the type');
}

class JSONPrinter implements Printer {
  constructor(private readonly showManagedFields: boolean) {}
  print(obj: KubeObject): string {
    checkGVK(obj);
    return jsonMarshal(this.showManagedFields ? obj : withoutManagedFields(obj), '    ') + '\n';
  }
}

class YAMLPrinter implements Printer {
  constructor(private readonly showManagedFields: boolean) {}
  print(obj: KubeObject): string {
    checkGVK(obj);
    return yamlMarshal(this.showManagedFields ? obj : withoutManagedFields(obj));
  }
}

/** The name printer: `configmap/x patched`, `deployment.apps/x`, with -o name no operation. */
export class NamePrinter implements Printer {
  constructor(
    private readonly operation: string,
    private readonly shortOutput: boolean,
  ) {}
  print(obj: KubeObject): string {
    checkGVK(obj);
    const md = obj.metadata as Record<string, unknown> | undefined;
    const name = md && typeof md.name === 'string' && md.name ? md.name : '<unknown>';
    const { group, kind } = groupKind(obj);
    if (!kind) throw new PrintError(`missing kind for resource with name ${name}`);
    const op = this.shortOutput || !this.operation ? '' : ' ' + this.operation;
    return group ? `${kind.toLowerCase()}.${group}/${name}${op}\n` : `${kind.toLowerCase()}/${name}${op}\n`;
  }
}

class GoTemplatePrinter implements Printer {
  constructor(
    private readonly raw: string,
    private readonly tmpl: GoTemplate,
    private readonly allowMissing: boolean,
  ) {}
  print(obj: KubeObject): string {
    const data = jsonMarshal(obj);
    const out = toUnstructuredValues(JSON.parse(data));
    try {
      return this.tmpl.execute(out, { missingKey: this.allowMissing ? 'default' : 'error' });
    } catch (e) {
      if (!(e instanceof TemplateExecError)) throw e;
      const debug =
        e.partial +
        `Error executing template: ${e.message}. Printing more information for debugging the template:\n` +
        `\ttemplate was:\n\t\t${this.raw}\n` +
        `\traw data was:\n\t\t${data}\n` +
        `\tobject given to template engine was:\n\t\t${sprintf('%+v', out)}\n\n`;
      throw new PrintError(`error executing template ${quote(this.raw)}: ${e.message}`, debug);
    }
  }
}

class JSONPathPrinter implements Printer {
  constructor(
    private readonly raw: string,
    private readonly jp: JSONPath,
    private readonly allowMissing: boolean,
    private readonly outputJSON: boolean,
  ) {}
  print(obj: KubeObject): string {
    const data = toUnstructuredValues(obj);
    try {
      return this.jp.execute(data, { allowMissingKeys: this.allowMissing, outputJSON: this.outputJSON });
    } catch (e) {
      const buf =
        `Error executing template: ${(e as Error).message}. Printing more information for debugging the template:\n` +
        `\ttemplate was:\n\t\t${this.raw}\n` +
        `\tobject given to jsonpath engine was:\n\t\t${sprintf('%#v', data)}\n\n`;
      throw new PrintError(`error executing jsonpath ${quote(this.raw)}: ${buf}\n`);
    }
  }
}

function readTemplateFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'ENOENT' ? 'no such file or directory' : err.code === 'EISDIR' ? 'is a directory' : err.code === 'EACCES' ? 'permission denied' : err.message;
    throw new PrintError(`error reading --template ${path}, open ${path}: ${why}`);
  }
}

function templatePrinter(format: string, templateArg: string, allowMissing: boolean): Printer {
  // JSONPath first, then Go templates (KubeTemplatePrintFlags)
  for (const [formats, kind] of [
    [JSONPATH_FORMATS, 'jsonpath'],
    [GO_TEMPLATE_FORMATS, 'go'],
  ] as const) {
    if (!templateArg && format === '') throw new NoCompatiblePrinter();
    let tformat = format;
    let value = '';
    if (!templateArg) {
      for (const f of formats) {
        if (format.startsWith(f + '=')) {
          value = format.slice(f.length + 1);
          tformat = f;
          break;
        }
      }
    } else value = templateArg;
    if (!formats.includes(tformat)) continue;
    if (value === '') throw new PrintError('template format specified but no template given');
    if (kind === 'jsonpath') {
      if (tformat === 'jsonpath-file') value = readTemplateFile(value);
      let jp: JSONPath;
      try {
        jp = JSONPath.parse('out', value);
      } catch (e) {
        throw new PrintError(`error parsing jsonpath ${value}, ${(e as Error).message}`);
      }
      return new JSONPathPrinter(value, jp, allowMissing, tformat === 'jsonpath-as-json');
    }
    if (tformat === 'templatefile' || tformat === 'go-template-file') value = readTemplateFile(value);
    let t: GoTemplate;
    try {
      t = GoTemplate.parse('output', value, KUBECTL_FUNCS);
    } catch (e) {
      throw new PrintError(`error parsing template ${value}, ${(e as Error).message}`);
    }
    return new GoTemplatePrinter(value, t, allowMissing);
  }
  throw new NoCompatiblePrinter();
}

/**
 * PrintFlags.ToPrinter: the printer for the flags, with `operation` ("patched", "patched (no
 * change)") for the default name output. Throws PrintError with kubectl's messages.
 */
export function toPrinter(flags: PrintFlagValues, operation: string): Printer {
  let format = flags.output;
  if (flags.template && !flags.outputChanged) format = 'go-template';
  const lower = format.toLowerCase();
  if (lower === 'json') return new JSONPrinter(flags.showManagedFields);
  if (lower === 'yaml') return new YAMLPrinter(flags.showManagedFields);
  if (lower === 'name') return new NamePrinter(operation, true);
  if (lower === '') return new NamePrinter(operation, false);
  try {
    return templatePrinter(format, flags.template, flags.allowMissingTemplateKeys);
  } catch (e) {
    if (e instanceof NoCompatiblePrinter) throw noCompatible(flags.output);
    throw e;
  }
}
