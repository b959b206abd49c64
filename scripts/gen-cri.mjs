#!/usr/bin/env node
// Writes the node agent's CRI v1 declarations (both committed):
//
//   src/nodeagent/cri/runtime.v1.json  a protobufjs JSON descriptor (the shape of Root#toJSON) of
//                                      package runtime.v1: the two services, every message, enum,
//                                      field (proto names, snake_case), number, type, map and oneof
//   src/nodeagent/cri/types.ts         TypeScript interfaces for those messages, with the field
//                                      names protobufjs gives them when it camel-cases them
//
// The facts (names, numbers, types) are read from the CRI's api.proto in the kubernetes/cri-api
// repository, which is not part of this tree. By default it is read from the bare clone at
// /work/.mirror/kubernetes+cri-api/repo (`git show HEAD:pkg/apis/runtime/v1/api.proto`); another
// copy can be given:
//
//   node scripts/gen-cri.mjs [--proto path/to/api.proto | --git-dir path/to/repo.git [--rev REV]] [--out DIR]
//
// (or CRI_PROTO=path / CRI_GIT_DIR=path in the environment). Comments in the proto file are
// documentation and are not carried over: the descriptor has none, and the types carry only the
// generated header and `@deprecated` marks for fields the proto marks deprecated.

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGE = 'runtime.v1';
const PROTO_PATH = 'pkg/apis/runtime/v1/api.proto';

function parseArgs(argv) {
  const o = {
    proto: process.env.CRI_PROTO || '',
    gitDir: process.env.CRI_GIT_DIR || '/work/.mirror/kubernetes+cri-api/repo',
    rev: 'HEAD',
    out: join(ROOT, 'src/nodeagent/cri'),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--proto') o.proto = v();
    else if (a === '--git-dir') o.gitDir = v();
    else if (a === '--rev') o.rev = v();
    else if (a === '--out') o.out = resolve(v());
    else if (a === '-h' || a === '--help') {
      console.log('usage: node scripts/gen-cri.mjs [--proto FILE | --git-dir DIR [--rev REV]] [--out DIR]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

function readProto(o) {
  if (o.proto) return { text: readFileSync(o.proto, 'utf8'), from: o.proto };
  const text = execFileSync('git', ['--git-dir', o.gitDir, 'show', `${o.rev}:${PROTO_PATH}`], { encoding: 'utf8', maxBuffer: 64 << 20 });
  let commit = o.rev;
  try {
    commit = execFileSync('git', ['--git-dir', o.gitDir, 'rev-parse', o.rev], { encoding: 'utf8' }).trim();
  } catch {
    /* keep the name given */
  }
  return { text, from: `kubernetes/cri-api ${commit} ${PROTO_PATH}` };
}

// ---------------------------------------------------------------------------------------------
// The descriptor: Root#toJSON of the parsed file, cut down to the package, without options
// (go_package, deprecated, debug_redact: nothing the wire format needs) and without comments.

const DROP = new Set(['options', 'parsedOptions', 'comment', 'comments', 'valuesOptions']);
const strip = (o) => Object.fromEntries(Object.entries(o).filter(([k]) => !DROP.has(k)));
const mapValues = (o, f) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

/** a reflection object's JSON (namespace, type, enum or service) without options and comments */
function cleanDescriptor(node) {
  const out = strip(node);
  if (out.fields) out.fields = mapValues(out.fields, strip);
  if (out.oneofs) out.oneofs = mapValues(out.oneofs, strip);
  if (out.methods) out.methods = mapValues(out.methods, strip);
  if (out.nested) out.nested = mapValues(out.nested, cleanDescriptor);
  return out;
}

// JSON with every object that holds no further objects on one line: one line per field, enum
// or method, so that a change in the proto is a small diff.
function formatJSON(value, indent = '') {
  const isObj = (v) => v !== null && typeof v === 'object';
  const flat = (v) => !isObj(v) || Object.values(v).every((x) => !isObj(x) || (Array.isArray(x) && !x.some(isObj)));
  const inline = (v) => {
    if (!isObj(v)) return JSON.stringify(v);
    if (Array.isArray(v)) return `[${v.map(inline).join(', ')}]`;
    const e = Object.entries(v);
    return e.length ? `{ ${e.map(([k, x]) => `${JSON.stringify(k)}: ${inline(x)}`).join(', ')} }` : '{}';
  };
  if (flat(value)) return inline(value);
  const inner = indent + '  ';
  if (Array.isArray(value)) return '[\n' + value.map((v) => inner + formatJSON(v, inner)).join(',\n') + '\n' + indent + ']';
  return '{\n' + Object.entries(value).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${formatJSON(v, inner)}`).join(',\n') + '\n' + indent + '}';
}

// ---------------------------------------------------------------------------------------------
// The TypeScript declarations

const SCALARS = {
  double: 'number', float: 'number',
  int32: 'number', uint32: 'number', sint32: 'number', fixed32: 'number', sfixed32: 'number',
  // 64-bit integers: decoded with `longs: Number`, so above 2^53 they lose precision
  int64: 'number', uint64: 'number', sint64: 'number', fixed64: 'number', sfixed64: 'number',
  bool: 'boolean', string: 'string', bytes: 'Buffer',
};

/** a nested type's TypeScript name: its path below the package joined with `_` */
function tsName(t, pkg) {
  const parts = [];
  for (let x = t; x && x !== pkg; x = x.parent) parts.unshift(x.name);
  return parts.join('_');
}

function fieldType(f, pkg) {
  const base = (typeName, resolved) => (resolved ? tsName(resolved, pkg) : SCALARS[typeName]);
  if (f.map) {
    const key = SCALARS[f.keyType] === 'number' ? 'number' : 'string';
    return `Record<${key}, ${base(f.type, f.resolvedType)}>`;
  }
  const t = base(f.type, f.resolvedType);
  if (!t) throw new Error(`unknown type ${f.type} of ${f.fullName}`);
  return f.repeated ? `${/[|&]/.test(t) ? `(${t})` : t}[]` : t;
}

function collect(ns, out) {
  for (const n of ns.nestedArray) {
    if (n instanceof protobuf.Type) out.types.push(n);
    else if (n instanceof protobuf.Enum) out.enums.push(n);
    else if (n instanceof protobuf.Service) out.services.push(n);
    if (n instanceof protobuf.Namespace) collect(n, out);
  }
  return out;
}

function writeTypes(pkg, from) {
  const { types, enums, services } = collect(pkg, { types: [], enums: [], services: [] });
  const L = [];
  L.push('// Generated by scripts/gen-cri.mjs from the CRI v1 field facts (message and field names,');
  L.push('// numbers and types) of ' + from + '.');
  L.push('// Do not edit by hand: change the script and run it again.');
  L.push('//');
  L.push('// Field names are camelCase, as protobufjs converts them. Every field is optional: a request');
  L.push('// may leave any out; in a response from CRIClient, scalars, enums, lists and maps are always');
  L.push('// present (zero values included) and a message field is absent when the runtime did not set');
  L.push('// it. Enums are their value names; 64-bit integers are numbers; bytes are Buffers.');
  L.push('/* eslint-disable */');
  L.push('');
  for (const e of enums) {
    const names = Object.keys(e.values);
    L.push(`export type ${tsName(e, pkg)} = ${names.map((n) => JSON.stringify(n)).join(' | ')};`);
    L.push('');
  }
  for (const t of types) {
    const fields = t.fieldsArray;
    if (fields.length === 0) {
      L.push(`export interface ${tsName(t, pkg)} {}`);
      L.push('');
      continue;
    }
    L.push(`export interface ${tsName(t, pkg)} {`);
    for (const f of fields) {
      if (f.options?.deprecated) L.push('  /** @deprecated */');
      const oneof = f.partOf ? ` // oneof ${f.partOf.name}` : '';
      L.push(`  ${protobuf.util.camelCase(f.name)}?: ${fieldType(f, pkg)};${oneof}`);
    }
    L.push('}');
    L.push('');
  }
  for (const s of services) {
    L.push(`export interface ${tsName(s, pkg)}Methods {`);
    for (const m of s.methodsArray) {
      const stream = m.requestStream || m.responseStream ? `; requestStream: ${!!m.requestStream}; responseStream: ${!!m.responseStream}` : '';
      L.push(`  ${m.name}: { request: ${tsName(m.resolvedRequestType, pkg)}; response: ${tsName(m.resolvedResponseType, pkg)}${stream} };`);
    }
    L.push('}');
    L.push('');
  }
  return L.join('\n');
}

// ---------------------------------------------------------------------------------------------

const o = parseArgs(process.argv.slice(2));
const { text, from } = readProto(o);
const root = protobuf.parse(text, { keepCase: true, alternateCommentMode: false }).root;
root.resolveAll();
const pkg = root.lookup(PACKAGE);
if (!(pkg instanceof protobuf.Namespace)) throw new Error(`package ${PACKAGE} not found in ${from}`);
for (const s of ['RuntimeService', 'ImageService']) if (!(pkg.lookup(s) instanceof protobuf.Service)) throw new Error(`service ${s} not found in ${from}`);

const full = root.toJSON({ keepComments: false });
const segs = PACKAGE.split('.');
let json = full;
for (const s of segs) json = json.nested[s];
const pkgJSON = cleanDescriptor({ nested: json.nested });
let descriptor = pkgJSON;
for (const s of [...segs].reverse()) descriptor = { nested: { [s]: descriptor } };
const descriptorText = formatJSON(descriptor) + '\n';
// the descriptor must load back into the same shape
const check = protobuf.Root.fromJSON(JSON.parse(descriptorText));
check.resolveAll();
for (const t of collect(pkg, { types: [], enums: [], services: [] }).types) {
  const u = check.lookupType(t.fullName.slice(1));
  for (const f of t.fieldsArray) if (!u.fields[f.name] || u.fields[f.name].id !== f.id) throw new Error(`descriptor check failed at ${f.fullName}`);
}

mkdirSync(o.out, { recursive: true });
writeFileSync(join(o.out, 'runtime.v1.json'), descriptorText);
writeFileSync(join(o.out, 'types.ts'), writeTypes(pkg, from));
const counts = collect(pkg, { types: [], enums: [], services: [] });
console.log(`gen-cri: ${counts.types.length} messages, ${counts.enums.length} enums, ${counts.services.map((s) => `${s.name} (${s.methodsArray.length} methods)`).join(', ')} from ${from}`);
