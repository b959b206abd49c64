#!/usr/bin/env node
// Writes src/schema/gen/*.json: Keelson's type declarations (TypeDecl, see src/schema/model.ts),
// one file per Go package of the Kubernetes API.
//
// The facts of the wire format (JSON names, protobuf field numbers, merge keys, list types,
// enum values, defaults) are read from the Go sources of the Kubernetes API packages, which are
// not part of this repository: fetch them, extract them somewhere outside the tree, and pass the
// four directories:
//
//   node scripts/gen-schema.mjs --api /tmp/k8s-src/api \
//       --apimachinery /tmp/k8s-src/apimachinery \
//       --apiextensions /tmp/k8s-src/apiextensions-apiserver \
//       --aggregator /tmp/k8s-src/kube-aggregator \
//       [--out src/schema/gen] [--strict] [--from "<where the sources came from>"]
//
// The declarations in the tree were generated from the release-1.33 branches of
// kubernetes/api, kubernetes/apimachinery, kubernetes/apiextensions-apiserver and
// kubernetes/kube-aggregator (its API types: pkg/apis/apiregistration/v1, the APIService kind)
// (`git archive release-1.33 | tar -x -C /tmp/k8s-src/<repo>`); --from is recorded in
// gen/index.json. The packages and the root types are listed in PACKAGES below; every type
// reachable from a root is declared too. Also written: gen/index.json, the per-file table
// the loader (src/schema/types.ts) reads first (canonical prefix, protobuf package, kinds).
//
// Only struct tags, markers and declarations are read; Go comments (documentation) are not
// used. Descriptions come from src/schema/descriptions.json, written in our own words.
// The script cross-checks every declaration against the package's generated.proto (message
// names, field numbers and names) and prints what does not agree; --strict makes that an error.

import { readFileSync, readdirSync, writeFileSync, mkdirSync, existsSync, rmSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// ---------------------------------------------------------------------------------------------
// Arguments

function parseArgs(argv) {
  const o = { out: join(ROOT, 'src/schema/gen'), strict: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unexpected argument ${a}`);
    const key = m[1];
    if (key === 'from') {
      o.from = m[2] ?? argv[++i];
      continue;
    }
    if (key === 'strict') {
      o.strict = true;
      continue;
    }
    const v = m[2] ?? argv[++i];
    if (v === undefined) throw new Error(`--${key} needs a value`);
    o[key] = resolve(v);
  }
  for (const k of ['api', 'apimachinery', 'apiextensions', 'aggregator']) {
    if (!o[k]) throw new Error(`missing --${k} <dir> (see the header of scripts/gen-schema.mjs)`);
    if (!existsSync(o[k])) throw new Error(`--${k}: no such directory ${o[k]}`);
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// What to generate

/**
 * The packages whose objects are roots. `objects`: every kind the package registers in its
 * scheme (top-level kinds, their lists, subresource and option kinds), except `exclude`.
 * `roots`: named types. Everything reachable from a root is declared too, in its own package's file.
 */
const PACKAGES = [
  { path: 'k8s.io/api/core/v1', objects: true, exclude: ['List', 'RangeAllocation', 'SerializedReference', 'PodStatusResult'] },
  { path: 'k8s.io/api/apps/v1', objects: true },
  { path: 'k8s.io/api/batch/v1', objects: true },
  { path: 'k8s.io/api/autoscaling/v1', objects: true },
  { path: 'k8s.io/api/autoscaling/v2', objects: true },
  { path: 'k8s.io/api/policy/v1', objects: true },
  { path: 'k8s.io/api/rbac/v1', objects: true },
  { path: 'k8s.io/api/networking/v1', objects: true },
  { path: 'k8s.io/api/storage/v1', objects: true },
  { path: 'k8s.io/api/scheduling/v1', objects: true },
  { path: 'k8s.io/api/coordination/v1', objects: true },
  { path: 'k8s.io/api/discovery/v1', objects: true },
  { path: 'k8s.io/api/events/v1', objects: true },
  { path: 'k8s.io/api/certificates/v1', objects: true },
  { path: 'k8s.io/api/node/v1', objects: true },
  { path: 'k8s.io/api/authentication/v1', objects: true },
  { path: 'k8s.io/api/authorization/v1', objects: true },
  { path: 'k8s.io/api/admissionregistration/v1', objects: true },
  { path: 'k8s.io/api/admission/v1', objects: true },
  { path: 'k8s.io/api/flowcontrol/v1', objects: true },
  { path: 'k8s.io/api/apidiscovery/v2', objects: true },
  { path: 'k8s.io/api/apidiscovery/v2beta1', objects: true },
  { path: 'k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1', objects: true },
  { path: 'k8s.io/kube-aggregator/pkg/apis/apiregistration/v1', objects: true },
  {
    path: 'k8s.io/apimachinery/pkg/apis/meta/v1',
    roots: [
      'TypeMeta', 'ObjectMeta', 'ListMeta', 'Status', 'StatusDetails', 'StatusCause', 'DeleteOptions', 'Preconditions',
      'CreateOptions', 'PatchOptions', 'UpdateOptions', 'GetOptions', 'ListOptions', 'WatchEvent', 'Table',
      'TableColumnDefinition', 'TableRow', 'TableRowCondition', 'TableOptions', 'PartialObjectMetadata',
      'PartialObjectMetadataList', 'APIResourceList', 'APIResource', 'APIGroupList', 'APIGroup', 'APIVersions',
      'GroupVersionForDiscovery', 'ServerAddressByClientCIDR', 'LabelSelector', 'LabelSelectorRequirement',
      'ManagedFieldsEntry', 'OwnerReference', 'Condition', 'RootPaths', 'GroupVersionKind', 'FieldSelectorRequirement',
    ],
  },
  { path: 'k8s.io/apimachinery/pkg/version', roots: ['Info'] },
];

/**
 * The group/version/kinds of meta/v1 types as the API server sends them: the status and
 * discovery documents are of the legacy core group (apiVersion v1); tables and partial
 * object metadata are of meta.k8s.io/v1. The options and watch events are accepted in every
 * group version; v1 stands for all of them.
 */
/** meta/v1 kinds every group version registers (the options of each verb, and watch events). */
const META_IN_EVERY_GROUP = ['WatchEvent', 'DeleteOptions', 'CreateOptions', 'PatchOptions', 'UpdateOptions', 'GetOptions', 'ListOptions'];

const META_GVK = {
  Status: ['', 'v1'],
  APIVersions: ['', 'v1'],
  APIGroupList: ['', 'v1'],
  APIGroup: ['', 'v1'],
  APIResourceList: ['', 'v1'],
  WatchEvent: ['', 'v1'],
  DeleteOptions: ['', 'v1'],
  CreateOptions: ['', 'v1'],
  PatchOptions: ['', 'v1'],
  UpdateOptions: ['', 'v1'],
  GetOptions: ['', 'v1'],
  ListOptions: ['', 'v1'],
  Table: ['meta.k8s.io', 'v1'],
  TableOptions: ['meta.k8s.io', 'v1'],
  PartialObjectMetadata: ['meta.k8s.io', 'v1'],
  PartialObjectMetadataList: ['meta.k8s.io', 'v1'],
};

/** Go types whose JSON form differs from a plain struct; the codec handles each (model.ts Special). */
const SPECIALS = {
  'k8s.io/apimachinery/pkg/apis/meta/v1.Time': { special: 'Time', format: 'date-time' },
  'k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime': { special: 'MicroTime', format: 'date-time' },
  'k8s.io/apimachinery/pkg/apis/meta/v1.Duration': { special: 'Duration' },
  'k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1': { special: 'FieldsV1' },
  'k8s.io/apimachinery/pkg/api/resource.Quantity': { special: 'Quantity' },
  'k8s.io/apimachinery/pkg/util/intstr.IntOrString': { special: 'IntOrString', format: 'int-or-string' },
  'k8s.io/apimachinery/pkg/runtime.RawExtension': { special: 'RawExtension' },
  'k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSON': { special: 'JSON' },
  'k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrArray': { special: 'JSONSchemaPropsOrArray' },
  'k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrBool': { special: 'JSONSchemaPropsOrBool' },
  'k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrStringArray': { special: 'JSONSchemaPropsOrStringArray' },
};

const META_PKG = 'k8s.io/apimachinery/pkg/apis/meta/v1';

// ---------------------------------------------------------------------------------------------
// Locating packages

let SRC; // { api, apimachinery, apiextensions, aggregator }

function packageDir(path) {
  const table = [
    ['k8s.io/apiextensions-apiserver/', SRC.apiextensions],
    ['k8s.io/kube-aggregator/', SRC.aggregator],
    ['k8s.io/apimachinery/', SRC.apimachinery],
    ['k8s.io/api/', SRC.api],
  ];
  for (const [prefix, dir] of table) if (path.startsWith(prefix)) return join(dir, path.slice(prefix.length));
  throw new Error(`no source directory for package ${path}`);
}

/** 'io.k8s.api.core.v1' for 'k8s.io/api/core/v1', as the OpenAPI definitions name types. */
function canonicalPrefix(path) {
  return 'io.k8s.' + path.slice('k8s.io/'.length).split('/').join('.');
}

/** The output file (without .json) for a package: 'core.v1', 'meta.v1', 'apiextensions.v1', 'version'. */
function fileKey(path) {
  let rest = path.replace(/^k8s\.io\/[^/]+\//, '');
  rest = rest.replace(/^pkg\/apis\//, '').replace(/^pkg\//, '');
  return rest.split('/').join('.');
}

// ---------------------------------------------------------------------------------------------
// A small reader for gofmt'd Go declarations: imports, type declarations (with their struct
// fields, tags and marker comments) and constants. Function bodies and variables are skipped.

/** Blanks out /* block comments *\/ (keeping line breaks), minding strings and line comments. */
function stripBlockComments(src) {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const d = src[i + 1];
    if (c === '/' && d === '/') {
      const end = src.indexOf('\n', i);
      const stop = end < 0 ? src.length : end;
      out += src.slice(i, stop);
      i = stop;
    } else if (c === '/' && d === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, '');
      i = stop;
    } else if (c === '"' || c === '`' || c === "'") {
      let j = i + 1;
      while (j < src.length && src[j] !== c && !(c !== '`' && src[j] === '\n')) j += src[j] === '\\' && c !== '`' ? 2 : 1;
      out += src.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

function markersOf(commentLines) {
  // '+key=value' or '+key' markers (lines of the form '// +...')
  const out = [];
  for (const c of commentLines) {
    const m = /^\/\/\s*(\+[A-Za-z0-9:._-]+)(?:=(.*))?\s*$/.exec(c);
    if (m) out.push({ key: m[1].slice(1), value: m[2] === undefined ? undefined : m[2].trim() });
  }
  return out;
}

function parseGoFile(text) {
  const lines = stripBlockComments(text).split('\n');
  const imports = {}; // alias -> path
  const types = []; // { name, comments, def: {struct fields} | {expr} }
  const consts = []; // { name, type, value, raw }
  let comments = []; // comment lines since the last code, blank lines as ''
  let i = 0;

  const addImport = (line) => {
    const m = /^\s*(?:([A-Za-z_][A-Za-z0-9_]*|\.|_)\s+)?"([^"]+)"/.exec(line);
    if (!m) return;
    const path = m[2];
    const alias = m[1] ?? path.split('/').pop();
    imports[alias] = path;
  };

  const skipBlock = (open, close) => {
    // skip from line i (which opened a block) to the matching close at column 0
    let depth = 0;
    for (; i < lines.length; i++) {
      const l = lines[i].replace(/"(?:[^"\\]|\\.)*"|`[^`]*`|'(?:[^'\\]|\\.)*'/g, '""').replace(/\/\/.*$/, '');
      for (const ch of l) {
        if (ch === open) depth++;
        else if (ch === close) depth--;
      }
      if (depth <= 0) return;
    }
  };

  const parseStruct = (name, typeComments) => {
    const fields = [];
    let fc = [];
    i++;
    for (; i < lines.length; i++) {
      const raw = lines[i];
      const t = raw.trim();
      if (t === '}') break;
      if (t === '') {
        fc = [];
        continue;
      }
      if (t.startsWith('//')) {
        fc.push(t);
        continue;
      }
      const f = parseFieldLine(t);
      if (!f) throw new Error(`cannot read field of ${name}: ${t}`);
      f.comments = fc;
      fields.push(f);
      fc = [];
    }
    types.push({ name, comments: typeComments, def: { struct: fields } });
  };

  const parseTypeSpec = (spec, typeComments) => {
    // spec: 'Name struct {' | 'Name struct{}' | 'Name Expr'
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s+(.*)$/.exec(spec);
    if (!m) throw new Error(`cannot read type: ${spec}`);
    const name = m[1];
    let rest = m[2].replace(/\s*\/\/.*$/, '').trim();
    if (/^struct\s*\{\s*\}$/.test(rest)) {
      types.push({ name, comments: typeComments, def: { struct: [] } });
    } else if (/^struct\s*\{$/.test(rest)) {
      parseStruct(name, typeComments);
    } else if (/^interface\s*\{/.test(rest)) {
      if (!/\}$/.test(rest)) skipBlock('{', '}');
    } else {
      rest = rest.replace(/^=\s*/, ''); // type alias
      types.push({ name, comments: typeComments, def: { expr: rest } });
    }
  };

  const parseConstSpec = (spec, lastType) => {
    // 'Name Type = value' | 'Name = value' | 'Name' (repeats the previous expression)
    const s = spec.replace(/\s*\/\/.*$/, '').trim();
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:\s+([A-Za-z_][A-Za-z0-9_.]*))?\s*(?:=\s*(.*))?$/.exec(s);
    if (!m) return lastType;
    const [, name, type, value] = m;
    consts.push({ name, type: type ?? null, raw: value ?? null, value: parseGoLiteral(value) });
    return type ?? null;
  };

  for (; i < lines.length; i++) {
    const line = lines[i];
    const t = line.trim();
    if (t === '') {
      comments.push('');
      continue;
    }
    if (t.startsWith('//')) {
      comments.push(t);
      continue;
    }
    const typeComments = comments;
    comments = [];
    if (/^import\s*\($/.test(t)) {
      for (i++; i < lines.length && lines[i].trim() !== ')'; i++) addImport(lines[i]);
    } else if (/^import\s+/.test(t)) {
      addImport(t.replace(/^import\s+/, ''));
    } else if (/^type\s*\($/.test(t)) {
      let tc = [];
      for (i++; i < lines.length && lines[i].trim() !== ')'; i++) {
        const u = lines[i].trim();
        if (u === '') tc.push('');
        else if (u.startsWith('//')) tc.push(u);
        else {
          parseTypeSpec(u, tc);
          tc = [];
        }
      }
    } else if (/^type\s+/.test(t)) {
      parseTypeSpec(t.replace(/^type\s+/, ''), typeComments);
    } else if (/^const\s*\($/.test(t)) {
      let lastType = null;
      for (i++; i < lines.length && lines[i].trim() !== ')'; i++) {
        const u = lines[i].trim();
        if (u === '' || u.startsWith('//')) continue;
        lastType = parseConstSpec(u, lastType);
      }
    } else if (/^const\s+/.test(t)) {
      parseConstSpec(t.replace(/^const\s+/, ''), null);
    } else if (/^(func|var)\b/.test(t)) {
      if (/\{\s*(\/\/.*)?$/.test(t) || /^var\s*\($/.test(t) || /\{/.test(t)) {
        if (/^var\s*\($/.test(t)) skipBlock('(', ')');
        else skipBlock('{', '}');
      }
    }
    // package clause and anything else: nothing to read
  }
  return { imports, types, consts };
}

function parseGoLiteral(v) {
  if (v === undefined || v === null) return undefined;
  const s = v.trim();
  if (/^"(?:[^"\\]|\\.)*"$/.test(s)) return JSON.parse(s);
  if (/^`[^`]*`$/.test(s)) return s.slice(1, -1);
  return undefined;
}

/** A struct field line (trimmed): 'Name Type `tags` // comment' or an embedded 'pkg.Type `tags`'. */
function parseFieldLine(t) {
  let tag = '';
  let body = t;
  const bt = body.indexOf('`');
  if (bt >= 0) {
    const end = body.indexOf('`', bt + 1);
    tag = body.slice(bt + 1, end);
    body = body.slice(0, bt).trim();
  } else {
    body = body.replace(/\s*\/\/.*$/, '').trim();
  }
  const parts = body.split(/\s+/);
  if (parts.length === 1) {
    // embedded
    const typ = parts[0];
    const goName = typ.replace(/^\*/, '').split('.').pop();
    return { goName, type: typ, embedded: true, tags: parseTags(tag) };
  }
  if (parts.length === 2 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(parts[0])) {
    return { goName: parts[0], type: parts[1], embedded: false, tags: parseTags(tag) };
  }
  return null;
}

function parseTags(tag) {
  const out = {};
  const re = /([A-Za-z_][A-Za-z0-9_]*):"((?:[^"\\]|\\.)*)"/g;
  let m;
  while ((m = re.exec(tag))) out[m[1]] = m[2];
  return out;
}

// ---------------------------------------------------------------------------------------------
// generated.proto: messages and their fields

function parseProto(text) {
  const out = { package: null, messages: new Map() };
  const pm = /^package\s+([A-Za-z0-9_.]+)\s*;/m.exec(text);
  if (pm) out.package = pm[1];
  const lines = text.split('\n');
  let cur = null;
  for (const raw of lines) {
    const l = raw.replace(/\/\/.*$/, '').trim();
    if (!l) continue;
    let m;
    if ((m = /^message\s+([A-Za-z0-9_]+)\s*\{/.exec(l))) {
      cur = { name: m[1], fields: new Map() };
      out.messages.set(cur.name, cur);
      if (/\}\s*$/.test(l)) cur = null;
      continue;
    }
    if (l === '}') {
      cur = null;
      continue;
    }
    if (!cur) continue;
    if ((m = /^map<\s*([A-Za-z0-9_.]+)\s*,\s*([A-Za-z0-9_.]+)\s*>\s+([A-Za-z0-9_]+)\s*=\s*(\d+)/.exec(l))) {
      cur.fields.set(Number(m[4]), { label: 'map', key: m[1], type: m[2], name: m[3], number: Number(m[4]) });
    } else if ((m = /^(optional|repeated|required)\s+([A-Za-z0-9_.]+)\s+([A-Za-z0-9_]+)\s*=\s*(\d+)/.exec(l))) {
      cur.fields.set(Number(m[4]), { label: m[1], type: m[2], name: m[3], number: Number(m[4]) });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Packages

const packages = new Map(); // import path -> package

function loadPackage(path) {
  let p = packages.get(path);
  if (p) return p;
  const dir = packageDir(path);
  if (!existsSync(dir)) throw new Error(`package ${path}: no directory ${dir}`);
  const files = readdirSync(dir).filter(
    (f) =>
      f.endsWith('.go') &&
      !f.endsWith('_test.go') &&
      !f.startsWith('zz_generated') &&
      !f.endsWith('.pb.go') &&
      !f.endsWith('_generated.go') &&
      !f.endsWith('_fuzz.go'),
  );
  p = { path, dir, types: new Map(), consts: [], groupName: undefined, proto: null };
  for (const f of files.sort()) {
    const text = readFileSync(join(dir, f), 'utf8');
    const parsed = parseGoFile(text);
    for (const t of parsed.types) {
      t.imports = parsed.imports;
      t.file = f;
      if (!p.types.has(t.name)) p.types.set(t.name, t);
    }
    for (const c of parsed.consts) p.consts.push(c);
    const gm = /^\/\/\s*\+groupName=(.*)$/m.exec(text);
    if (gm) p.groupName = gm[1].trim();
  }
  // the kinds the package registers in its scheme (register.go: AddKnownTypes(SchemeGroupVersion, &Pod{}, ...))
  p.registered = new Set();
  p.addsMetaKinds = false;
  const reg = join(dir, 'register.go');
  if (existsSync(reg)) {
    const text = stripBlockComments(readFileSync(reg, 'utf8')).replace(/\/\/.*$/gm, '');
    p.addsMetaKinds = /AddToGroupVersion\(/.test(text);
    for (const m of text.matchAll(/AddKnownTypes\(\s*SchemeGroupVersion\s*,([^)]*)\)/g))
      for (const k of m[1].matchAll(/&([A-Za-z_][A-Za-z0-9_]*)\{\}/g)) p.registered.add(k[1]);
  }
  // the group: the package's GroupName constant (register.go), else the +groupName marker (doc.go)
  const gc = p.consts.find((c) => c.name === 'GroupName' && typeof c.value === 'string');
  if (gc) p.groupName = gc.value;
  const protoFile = join(dir, 'generated.proto');
  if (existsSync(protoFile)) p.proto = parseProto(readFileSync(protoFile, 'utf8'));
  p.protoPackage = p.proto?.package ?? path.replace(/-/g, '_').split('/').join('.');
  p.version = path.split('/').pop();
  packages.set(path, p);
  return p;
}

function hasMarker(comments, key, value) {
  return markersOf(comments).some((m) => m.key === key && (value === undefined || m.value === value));
}

/** A kind of its package: registered in the package's scheme, or (no register.go) marked a runtime.Object. */
function isKind(pkg, t) {
  if (pkg.registered.size) return pkg.registered.has(t.name);
  return isRuntimeObject(t);
}

function isRuntimeObject(t) {
  return markersOf(t.comments).some(
    (m) => (m.key === 'k8s:deepcopy-gen:interfaces' && /runtime\.Object$/.test(m.value ?? '')) || m.key === 'genclient',
  );
}

function enumValues(pkg, typeName) {
  const vals = [];
  for (const c of pkg.consts) if (c.type === typeName && typeof c.value === 'string' && !vals.includes(c.value)) vals.push(c.value);
  // sorted, as the published OpenAPI lists them
  return vals.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function constValue(pkg, name) {
  const c = pkg.consts.find((x) => x.name === name);
  return c ? c.value : undefined;
}

// ---------------------------------------------------------------------------------------------
// Go types to TypeRef

const warnings = [];
let checkedFields = 0;
const queue = []; // [pkgPath, typeName] of struct types to declare
const queued = new Set();

function want(pkgPath, name) {
  const key = `${pkgPath}.${name}`;
  if (queued.has(key)) return;
  queued.add(key);
  queue.push([pkgPath, name]);
}

/**
 * Resolves a Go type expression in the scope of a package (and the imports of the file it was
 * written in). Returns { ref, nullable, format?, enum?, named?: {pkg, name} }.
 */
function resolveExpr(expr, pkg, imports) {
  if (expr.startsWith('*')) {
    const r = resolveExpr(expr.slice(1), pkg, imports);
    return { ...r, nullable: true };
  }
  if (expr === '[]byte') return { ref: { kind: 'scalar', scalar: 'bytes' }, nullable: true, format: 'byte' };
  if (expr.startsWith('[]')) {
    const inner = resolveExpr(expr.slice(2), pkg, imports);
    return { ref: { kind: 'array', items: elementRef(inner) }, nullable: true, itemInfo: inner };
  }
  if (expr.startsWith('map[')) {
    let depth = 0;
    let j = 3;
    for (; j < expr.length; j++) {
      if (expr[j] === '[') depth++;
      else if (expr[j] === ']') {
        depth--;
        if (depth === 0) break;
      }
    }
    const valueExpr = expr.slice(j + 1);
    const inner = resolveExpr(valueExpr, pkg, imports);
    return { ref: { kind: 'map', values: elementRef(inner) }, nullable: true, itemInfo: inner };
  }
  if (expr === 'interface{}' || expr === 'any') return { ref: { kind: 'special', special: 'JSON' }, nullable: true };
  const builtin = {
    string: ['string'],
    bool: ['bool'],
    int32: ['int32', 'int32'],
    int64: ['int64', 'int64'],
    int: ['int64', 'int64'],
    uint32: ['int64', 'int64'],
    uint64: ['int64', 'int64'],
    float64: ['double', 'double'],
    float32: ['double', 'double'],
    byte: ['int32', 'int32'],
  };
  if (builtin[expr]) {
    const [scalar, format] = builtin[expr];
    return { ref: { kind: 'scalar', scalar }, nullable: false, ...(format ? { format } : {}) };
  }
  let pkgPath = pkg.path;
  let name = expr;
  const dot = expr.indexOf('.');
  if (dot >= 0) {
    const alias = expr.slice(0, dot);
    name = expr.slice(dot + 1);
    pkgPath = imports[alias];
    if (!pkgPath) throw new Error(`unknown package alias ${alias} in ${pkg.path} (${expr})`);
  }
  return resolveNamed(pkgPath, name);
}

/** The TypeRef of an array or map element, carrying the element's enum values when it has them. */
function elementRef(info) {
  if (info.ref.kind === 'scalar' && info.enum && info.enum.length) return { ...info.ref, enum: info.enum };
  return info.ref;
}

function resolveNamed(pkgPath, name) {
  const special = SPECIALS[`${pkgPath}.${name}`];
  if (special) {
    return {
      ref: { kind: 'special', special: special.special },
      nullable: false,
      ...(special.format ? { format: special.format } : {}),
    };
  }
  const pkg = loadPackage(pkgPath);
  const t = pkg.types.get(name);
  if (!t) throw new Error(`type ${name} not found in ${pkgPath}`);
  if (t.def.struct) {
    want(pkgPath, name);
    return { ref: { kind: 'object', name: `${canonicalPrefix(pkgPath)}.${name}` }, nullable: false, named: { pkg, t } };
  }
  const under = resolveExpr(t.def.expr, pkg, t.imports);
  const out = { ...under, named: { pkg, t } };
  if (under.ref.kind === 'scalar' && hasMarker(t.comments, 'enum')) {
    out.enum = enumValues(pkg, name);
  }
  if (under.ref.kind === 'array' && /^\[\]/.test(t.def.expr) && pkg.proto?.messages.has(name)) {
    // a named slice that is its own protobuf message (authentication ExtraValue, meta Verbs)
    out.ref = { ...under.ref, wrapper: `${pkg.protoPackage}.${name}` };
  }
  // list and map semantics declared on the named type
  const tm = markersOf(t.comments);
  const typeListType = tm.find((m) => m.key === 'listType' || m.key === 'k8s:listType');
  if (typeListType) out.typeListType = typeListType.value;
  const typeMapType = tm.find((m) => m.key === 'mapType' || m.key === 'k8s:mapType');
  if (typeMapType) out.typeMapType = typeMapType.value;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Declarations

function lowerCamel(s) {
  // 'VolumeSource' -> 'volumeSource'; 'TypeMeta' -> 'typeMeta'
  return s.charAt(0).toLowerCase() + s.slice(1);
}

function parseDefault(raw, pkg) {
  if (raw === undefined) return undefined;
  const ref = /^ref\((.*)\)$/.exec(raw);
  if (ref) {
    const v = constValue(pkg, ref[1].split('.').pop());
    if (v === undefined) warnings.push(`default ref(${ref[1]}) in ${pkg.path} does not name a string constant`);
    return v;
  }
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

const SCALARS = new Set(['string', 'bool', 'int32', 'int64', 'double', 'bytes']);
const SPECIAL_PROTO = {
  Time: 'k8s.io.apimachinery.pkg.apis.meta.v1.Time',
  MicroTime: 'k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime',
  Duration: 'k8s.io.apimachinery.pkg.apis.meta.v1.Duration',
  FieldsV1: 'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1',
  Quantity: 'k8s.io.apimachinery.pkg.api.resource.Quantity',
  IntOrString: 'k8s.io.apimachinery.pkg.util.intstr.IntOrString',
  RawExtension: 'k8s.io.apimachinery.pkg.runtime.RawExtension',
  JSON: 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON',
  JSONSchemaPropsOrArray: 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray',
  JSONSchemaPropsOrBool: 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool',
  JSONSchemaPropsOrStringArray: 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray',
};

/** The protobuf type one value of a TypeRef is written as, fully qualified for messages. */
function protoTypeOf(ref) {
  switch (ref.kind) {
    case 'scalar':
      return ref.scalar;
    case 'special':
      return SPECIAL_PROTO[ref.special];
    case 'object': {
      const d = ref.name.lastIndexOf('.');
      const prefix = ref.name.slice(0, d);
      for (const p of packages.values()) if (canonicalPrefix(p.path) === prefix) return `${p.protoPackage}.${ref.name.slice(d + 1)}`;
      return undefined;
    }
    case 'array':
      return ref.wrapper;
    default:
      return undefined;
  }
}

function declareStruct(pkgPath, name) {
  const pkg = loadPackage(pkgPath);
  const t = pkg.types.get(name);
  const decl = {
    name: `${canonicalPrefix(pkgPath)}.${name}`,
    protoName: `${pkg.protoPackage}.${name}`,
    fields: [],
  };
  const msg = pkg.proto?.messages.get(name);
  if (!msg) decl.noProto = true;
  const tmarkers = markersOf(t.comments);
  const st = tmarkers.find((m) => m.key === 'structType' || m.key === 'k8s:structType');
  if (st) decl.structType = st.value;

  for (const f of t.def.struct) {
    const json = f.tags.json;
    if (json === '-') continue;
    const [jsonName, ...opts] = (json ?? '').split(',');
    const inlineTag = opts.includes('inline');
    const protoTag = f.tags.protobuf;
    const protoParts = protoTag && protoTag !== '-' ? protoTag.split(',') : null;
    const protoNum = protoParts ? Number(protoParts[1]) : undefined;
    const protoFieldName = protoParts?.find((x) => x.startsWith('name='))?.slice(5);

    const info = resolveExpr(f.type, pkg, t.imports);
    const isTypeMeta =
      f.embedded && info.ref.kind === 'object' && info.ref.name === `${canonicalPrefix(META_PKG)}.TypeMeta`;
    if (isTypeMeta && protoNum === undefined) {
      decl.typeMeta = true;
      continue;
    }
    if (!f.embedded && json === undefined) {
      warnings.push(`${decl.name}.${f.goName} has no json tag; skipped`);
      continue;
    }
    const inline = f.embedded && (inlineTag || jsonName === '');
    const fm = markersOf(f.comments);
    const marker = (...keys) => fm.find((m) => keys.includes(m.key));

    const field = {
      name: inline ? lowerCamel(f.goName) : jsonName,
      type: info.ref,
    };
    if (protoNum !== undefined && !Number.isNaN(protoNum)) field.proto = protoNum;
    if (inline) field.inline = true;
    const omitEmpty = opts.includes('omitempty');
    const isOptional = !!marker('optional', 'k8s:optional');
    const isRequired = !!marker('required', 'k8s:required');
    field.optional = inline ? true : isOptional || (omitEmpty && !isRequired);
    field.omitEmpty = omitEmpty;
    field.nullable = !!info.nullable;

    const ps = f.tags.patchStrategy ?? marker('patchStrategy')?.value;
    if (ps) field.patchStrategy = ps;
    const pk = f.tags.patchMergeKey ?? marker('patchMergeKey')?.value;
    if (pk) field.patchMergeKey = pk;
    const lt = marker('listType', 'k8s:listType')?.value ?? info.typeListType;
    if (lt) field.listType = lt;
    const lmk = fm.filter((m) => m.key === 'listMapKey' || m.key === 'k8s:listMapKey').map((m) => m.value);
    if (lmk.length) field.listMapKeys = [...new Set(lmk)];
    const mt = marker('mapType', 'k8s:mapType')?.value ?? info.typeMapType;
    if (mt) field.mapType = mt;
    const fst = marker('structType', 'k8s:structType')?.value;
    if (fst) field.structType = fst;
    if (info.ref.kind === 'scalar' && info.enum && info.enum.length) field.enum = info.enum;
    const def = marker('default');
    if (def) field.default = parseDefault(def.value, pkg);
    if (info.format) field.format = info.format;

    // cross-check with generated.proto
    if (msg && field.proto !== undefined) {
      const pf = msg.fields.get(field.proto);
      checkedFields++;
      if (!pf) warnings.push(`${decl.name}.${field.name}: proto field ${field.proto} not in message ${name}`);
      else {
        if (protoFieldName && pf.name !== protoFieldName)
          warnings.push(`${decl.name}.${field.name}: proto field ${field.proto} is named ${pf.name}, tag says ${protoFieldName}`);
        const ref = field.type;
        if (ref.kind === 'map' && pf.label !== 'map') warnings.push(`${decl.name}.${field.name}: a map, but proto has ${pf.label}`);
        if (ref.kind === 'array' && !ref.wrapper && pf.label !== 'repeated')
          warnings.push(`${decl.name}.${field.name}: an array, but proto has ${pf.label} ${pf.type}`);
        if (ref.kind === 'array' && ref.wrapper && pf.label !== 'optional')
          warnings.push(`${decl.name}.${field.name}: a wrapped array, but proto has ${pf.label}`);
        // the element type: what one proto value of the field holds
        let el = ref;
        if (ref.kind === 'map') el = ref.values;
        else if (ref.kind === 'array' && !ref.wrapper) el = ref.items;
        const want = protoTypeOf(el, pkg);
        const got = pf.type.includes('.') ? pf.type.replace(/^\./, '') : `${pkg.protoPackage}.${pf.type}`;
        if (want && want !== (SCALARS.has(pf.type) ? pf.type : got))
          warnings.push(`${decl.name}.${field.name}: proto type ${pf.type}, expected ${want}`);
        if (ref.kind === 'map' && pf.key !== 'string') warnings.push(`${decl.name}.${field.name}: map key ${pf.key}`);
      }
    } else if (msg && field.proto === undefined && !inline) {
      // a field that protobuf does not carry: fine when the tag says so
      if (protoTag !== '-') warnings.push(`${decl.name}.${field.name}: no protobuf tag`);
    }
    decl.fields.push(field);
  }
  if (msg) {
    const seen = new Set(decl.fields.map((f) => f.proto).filter((n) => n !== undefined));
    for (const [n, pf] of msg.fields) if (!seen.has(n)) warnings.push(`${decl.name}: proto field ${n} (${pf.name}) has no Go field`);
  }

  // group/version/kind
  if (pkgPath === META_PKG) {
    const g = META_GVK[name];
    if (g) decl.gvk = [{ group: g[0], version: g[1], kind: name }];
  } else if (isKind(pkg, t) && pkg.groupName !== undefined) {
    decl.gvk = [{ group: pkg.groupName, version: pkg.version, kind: name }];
  }
  return decl;
}

// ---------------------------------------------------------------------------------------------
// Descriptions (our own words), merged into the declarations

function mergeDescriptions(decls) {
  const file = join(ROOT, 'src/schema/descriptions.json');
  if (!existsSync(file)) return { used: 0, unknown: [] };
  const desc = JSON.parse(readFileSync(file, 'utf8'));
  const byName = new Map(decls.map((d) => [d.name, d]));
  const used = new Set();
  for (const d of decls) {
    if (typeof desc[d.name] === 'string') {
      d.description = desc[d.name];
      used.add(d.name);
    }
    for (const f of d.fields) {
      const key = `${d.name}.${f.name}`;
      if (typeof desc[key] === 'string') {
        f.description = desc[key];
        used.add(key);
      }
    }
  }
  // a type that has no description of its own borrows those of the same type in another version
  // of its group (apidiscovery v2beta1 from v2, autoscaling v1 from v2), where the fields agree
  const siblingKey = (name) => name.replace(/\.v[0-9]+(?:(?:alpha|beta)[0-9]+)?\.([A-Za-z0-9]+)$/, '.*.$1');
  const described = new Map();
  for (const d of decls) if (d.description) described.set(siblingKey(d.name), d);
  for (const d of decls) {
    const sib = described.get(siblingKey(d.name));
    if (!sib || sib === d) continue;
    if (!d.description) d.description = sib.description;
    const sf = new Map(sib.fields.map((f) => [f.name, f]));
    for (const f of d.fields) if (!f.description && sf.get(f.name)?.description) f.description = sf.get(f.name).description;
  }
  borrowDescriptions(decls);
  for (const d of decls) fallbackDescriptions(d);
  const unknown = Object.keys(desc).filter((k) => !k.startsWith('$') && !used.has(k) && !byName.has(k));
  return { used: used.size, unknown };
}

/** Types whose fields are, for a user, those of another type: they borrow its descriptions. */
const DESCRIPTIONS_FROM = {
  'io.k8s.api.core.v1.EphemeralContainerCommon': 'io.k8s.api.core.v1.Container',
  'io.k8s.api.core.v1.PersistentVolumeSource': 'io.k8s.api.core.v1.VolumeSource',
  'io.k8s.api.core.v1.AzureFilePersistentVolumeSource': 'io.k8s.api.core.v1.AzureFileVolumeSource',
  'io.k8s.api.core.v1.CephFSPersistentVolumeSource': 'io.k8s.api.core.v1.CephFSVolumeSource',
  'io.k8s.api.core.v1.CinderPersistentVolumeSource': 'io.k8s.api.core.v1.CinderVolumeSource',
  'io.k8s.api.core.v1.FlexPersistentVolumeSource': 'io.k8s.api.core.v1.FlexVolumeSource',
  'io.k8s.api.core.v1.GlusterfsPersistentVolumeSource': 'io.k8s.api.core.v1.GlusterfsVolumeSource',
  'io.k8s.api.core.v1.ISCSIPersistentVolumeSource': 'io.k8s.api.core.v1.ISCSIVolumeSource',
  'io.k8s.api.core.v1.RBDPersistentVolumeSource': 'io.k8s.api.core.v1.RBDVolumeSource',
  'io.k8s.api.core.v1.ScaleIOPersistentVolumeSource': 'io.k8s.api.core.v1.ScaleIOVolumeSource',
  'io.k8s.api.core.v1.StorageOSPersistentVolumeSource': 'io.k8s.api.core.v1.StorageOSVolumeSource',
};

/** Fields that mean the same in every volume source. */
const VOLUME_FIELDS = {
  readOnly: 'Mount the volume read-only.',
  fsType: 'The filesystem type to mount, such as ext4 or xfs.',
  secretRef: 'A Secret with the credentials to reach the storage.',
};

function borrowDescriptions(decls) {
  const byName = new Map(decls.map((d) => [d.name, d]));
  for (const [to, from] of Object.entries(DESCRIPTIONS_FROM)) {
    const t = byName.get(to);
    const f = byName.get(from);
    if (!t || !f) continue;
    t.description ??= f.description;
    const ff = new Map(f.fields.map((x) => [x.name, x]));
    for (const x of t.fields) if (!x.description && ff.get(x.name)?.description) x.description = ff.get(x.name).description;
  }
  for (const d of decls) {
    if (!/VolumeSource$/.test(d.name)) continue;
    for (const x of d.fields) if (!x.description && VOLUME_FIELDS[x.name]) x.description = VOLUME_FIELDS[x.name];
  }
}

/**
 * Descriptions for what every kind has in common, where descriptions.json says nothing more
 * particular: a list kind, its metadata and items; a kind's metadata, spec and status.
 * (`kind` and `apiVersion` are described once, on TypeMeta.)
 */
function fallbackDescriptions(d) {
  const kind = d.gvk?.[0]?.kind;
  if (!kind) return;
  const fields = new Map(d.fields.map((f) => [f.name, f]));
  const items = fields.get('items');
  const isList = kind.endsWith('List') && items?.type.kind === 'array' && items.type.items.kind === 'object';
  const of = isList ? items.type.items.name.split('.').pop() : kind;
  const set = (f, text) => {
    if (f && !f.description) f.description = text;
  };
  if (isList) {
    d.description ??= `A list of ${of} objects.`;
    set(fields.get('metadata'), 'Standard list metadata: the resource version the list was read at, and the continue token when the list is paged.');
    set(items, `The ${of} objects in the list.`);
    return;
  }
  const md = fields.get('metadata');
  if (md?.type.kind === 'object' && md.type.name.endsWith('.ObjectMeta'))
    set(md, 'Standard object metadata: name, namespace, labels, annotations, owner references, and the fields the system maintains.');
  set(fields.get('spec'), `The desired state of the ${kind}, as its author asks for it.`);
  set(fields.get('status'), `The state of the ${kind} as the system last observed it. Written by controllers through the status subresource; it may lag behind the spec.`);
}

// ---------------------------------------------------------------------------------------------
// Output

const FIELD_KEY_ORDER = [
  'name', 'type', 'proto', 'inline', 'optional', 'omitEmpty', 'nullable', 'patchStrategy', 'patchMergeKey', 'listType',
  'listMapKeys', 'mapType', 'structType', 'enum', 'default', 'format', 'description',
];
const TYPE_KEY_ORDER = ['name', 'protoName', 'description', 'structType', 'gvk', 'typeMeta', 'noProto'];

function ordered(obj, order) {
  const o = {};
  for (const k of order) if (obj[k] !== undefined) o[k] = obj[k];
  for (const k of Object.keys(obj)) if (!(k in o)) o[k] = obj[k];
  return o;
}

/** One type per block, one field per line: small diffs, quick to parse. */
function formatDecls(decls) {
  const parts = decls.map((d) => {
    const head = ordered({ ...d, fields: undefined }, TYPE_KEY_ORDER);
    delete head.fields;
    const h = JSON.stringify(head);
    const fields = d.fields.map((f) => '    ' + JSON.stringify(ordered(f, FIELD_KEY_ORDER)));
    return `  ${h.slice(0, -1)}${h.length > 2 ? ',' : ''}"fields":[${fields.length ? '\n' + fields.join(',\n') + '\n  ' : ''}]}`;
  });
  return '[\n' + parts.join(',\n') + '\n]\n';
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  SRC = { api: opts.api, apimachinery: opts.apimachinery, apiextensions: opts.apiextensions, aggregator: opts.aggregator };

  for (const spec of PACKAGES) {
    const pkg = loadPackage(spec.path);
    if (spec.objects) {
      for (const [name, t] of pkg.types) {
        if (t.def.struct && isKind(pkg, t) && !(spec.exclude ?? []).includes(name)) want(spec.path, name);
      }
    }
    for (const r of spec.roots ?? []) {
      if (!pkg.types.get(r)?.def.struct) throw new Error(`root ${spec.path}.${r} is not a struct type`);
      want(spec.path, r);
    }
  }

  const decls = [];
  while (queue.length) {
    const [p, n] = queue.shift();
    decls.push({ pkgPath: p, decl: declareStruct(p, n) });
  }

  const all = decls.map((d) => d.decl);

  // the meta kinds each group version registers beside its own: one gvk per group version,
  // sorted by group and version as the published OpenAPI lists them
  const groupVersions = [];
  for (const p of packages.values())
    if (p.addsMetaKinds && p.groupName !== undefined && p.path !== META_PKG) groupVersions.push([p.groupName, p.version]);
  groupVersions.sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1));
  for (const d of all) {
    const kind = d.name.slice(d.name.lastIndexOf('.') + 1);
    if (d.name.startsWith(canonicalPrefix(META_PKG) + '.') && META_IN_EVERY_GROUP.includes(kind))
      d.gvk = groupVersions.map(([group, version]) => ({ group, version, kind }));
  }
  const { used, unknown } = mergeDescriptions(all);

  // closure check: every object reference is declared
  const names = new Set(all.map((d) => d.name));
  const visit = (ref, where) => {
    if (ref.kind === 'object' && !names.has(ref.name)) warnings.push(`${where}: ${ref.name} is not declared`);
    if (ref.kind === 'array') visit(ref.items, where);
    if (ref.kind === 'map') visit(ref.values, where);
  };
  for (const d of all) for (const f of d.fields) visit(f.type, `${d.name}.${f.name}`);

  // write one file per package, and an index
  const byFile = new Map();
  for (const { pkgPath, decl } of decls) {
    const key = fileKey(pkgPath);
    if (!byFile.has(key)) byFile.set(key, { pkgPath, decls: [] });
    byFile.get(key).decls.push(decl);
  }
  if (existsSync(opts.out)) for (const f of readdirSync(opts.out)) if (f.endsWith('.json')) rmSync(join(opts.out, f));
  mkdirSync(opts.out, { recursive: true });
  const index = { from: opts.from ?? '', files: {} };
  const summary = [];
  for (const [key, { pkgPath, decls: ds }] of [...byFile].sort((a, b) => a[0].localeCompare(b[0]))) {
    ds.sort((a, b) => a.name.localeCompare(b.name));
    writeFileSync(join(opts.out, `${key}.json`), formatDecls(ds));
    const pkg = loadPackage(pkgPath);
    const kinds = {};
    for (const d of ds) for (const g of d.gvk ?? []) kinds[`${g.group}/${g.version}/${g.kind}`] = d.name;
    index.files[key] = {
      package: pkgPath,
      prefix: canonicalPrefix(pkgPath),
      protoPackage: pkg.protoPackage,
      types: ds.length,
      kinds,
    };
    summary.push(`${key}: ${ds.length}`);
  }
  writeFileSync(join(opts.out, 'index.json'), JSON.stringify(index, null, 1) + '\n');

  console.log(`wrote ${all.length} types in ${byFile.size} files to ${opts.out}`);
  console.log('  ' + summary.join(', '));
  console.log(`fields cross-checked against generated.proto: ${checkedFields}`);
  console.log(`descriptions merged: ${used}`);
  if (unknown.length) console.log(`descriptions naming no type or field (${unknown.length}):\n  ` + unknown.join('\n  '));
  if (warnings.length) {
    console.log(`warnings (${warnings.length}):\n  ` + warnings.join('\n  '));
    if (opts.strict) process.exit(1);
  }
}

main();
