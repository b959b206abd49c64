// A robustness sweep of the API server, driven by discovery: every served resource of /api and
// /apis (their subresources too, and a custom resource) gets systematically bad requests (bodies,
// patches of each type, query parameters, delete options, paths, headers, watches). Every answer
// must come within a bounded time and must not be a 5xx (504 only where Kubernetes answers it:
// 'Too large resource version', a request timeout); every 4xx is a Status (kind Status, status
// Failure, a message, code = the HTTP status) with the code and reason Kubernetes gives for the
// case. After the sweep the server still answers /readyz and the objects the sweep aimed at are
// as they were. Bad requests run with bounded concurrency; failures are collected and reported
// together.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import zlib from 'node:zlib';
import YAML from 'yaml';
import { startCluster, createCRD, crdBody, type Cluster, type RawResponse } from './harness.js';
import { everyKindManifest, certificateRequestPEM } from './every-kind.js';

const NS = 'rb';
/** the longest any one answer may take (a 'Too large resource version' answer takes about 3 s) */
const BOUND_MS = 10_000;
const PARALLEL = 8;
const CR_GROUP = 'rb.example.com';

let c: Cluster;
/** the fixture objects before the sweep, by group/kind */
let beforeSweep: Map<string, any> | undefined;

interface Resource {
  /** e.g. configmaps, deployments/scale */
  name: string;
  base: string;
  sub: string;
  namespaced: boolean;
  verbs: string[];
  kind: string;
  group: string;
  version: string;
  /** /api/v1 or /apis/<group>/<version> */
  prefix: string;
  custom: boolean;
}

/** what an answer must be: a 2xx, or a Status of this code and reason (message matching, when given) */
type Want = { ok: true } | { code: number; reason: string; message?: RegExp };

interface Case {
  what: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  want?: Want;
  /** a further check of the answer (an error message when it fails) */
  check?: (r: RawResponse) => string | undefined;
}

const ok: Want = { ok: true };
const bad = (message?: RegExp): Want => ({ code: 400, reason: 'BadRequest', message });
const invalid = (message?: RegExp): Want => ({ code: 422, reason: 'Invalid', message });
const notFound = (message?: RegExp): Want => ({ code: 404, reason: 'NotFound', message });
const notAllowed: Want = { code: 405, reason: 'MethodNotAllowed', message: /^the server does not allow this method on the requested resource$/ };
const notAcceptable: Want = { code: 406, reason: 'NotAcceptable' };
const unsupported: Want = { code: 415, reason: 'UnsupportedMediaType', message: /^the body of the request was in an unknown format - accepted media types include: / };

let resources: Resource[] = [];
/** the groups custom resource definitions serve */
let customGroups = new Set<string>();
/** kind (group/Kind) -> the name of the object of that kind the fixture made */
const fixtureNames = new Map<string, { name: string; namespaced: boolean }>();

before(async () => {
  c = await startCluster({ args: ['--feature-gates=CBORServingAndStorage=true'] });
  const manifest = everyKindManifest(NS, 'probe=1', certificateRequestPEM());
  const k = c.kubectl(['create', '-f', '-'], { input: manifest });
  assert.equal(k.code, 0, k.stderr);
  for (const d of YAML.parseAllDocuments(manifest).map((x) => x.toJSON())) {
    const group = d.apiVersion.includes('/') ? d.apiVersion.split('/')[0] : '';
    fixtureNames.set(`${group}/${d.kind}`, { name: d.metadata.name, namespaced: d.metadata.namespace !== undefined });
  }
  const scale = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' };
  const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' }, size: { type: 'string' } } }, status: { type: 'object', properties: { replicas: { type: 'integer' } } } } } };
  await createCRD(c, crdBody(CR_GROUP, 'widgets', 'Widget', [{ name: 'v1', served: true, storage: true, schema, subresources: { status: {}, scale } }]));
  const cr = await c.raw('POST', `/apis/${CR_GROUP}/v1/namespaces/${NS}/widgets`, { body: { apiVersion: `${CR_GROUP}/v1`, kind: 'Widget', metadata: { name: 'w1', labels: { probe: '1' } }, spec: { replicas: 1, size: 'big' } } });
  assert.equal(cr.status, 201, cr.text);
  fixtureNames.set(`${CR_GROUP}/Widget`, { name: 'w1', namespaced: true });
  customGroups = new Set((await c.raw('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions')).json().items.map((d: any) => d.spec.group));
  resources = await discover();
  beforeSweep = await fixtureObjects();
});

after(async () => {
  await c?.stop();
});

/** every resource of every served group version, from discovery */
async function discover(): Promise<Resource[]> {
  const out: Resource[] = [];
  const add = async (prefix: string, group: string, version: string) => {
    const list = (await c.raw('GET', prefix)).json();
    for (const r of list.resources) {
      const [base, sub = ''] = r.name.split('/');
      out.push({ name: r.name, base, sub, namespaced: r.namespaced, verbs: r.verbs, kind: r.kind, group: r.group ?? group, version: r.version ?? version, prefix, custom: customGroups.has(group) });
    }
  };
  for (const v of (await c.raw('GET', '/api')).json().versions) await add(`/api/${v}`, '', v);
  for (const g of (await c.raw('GET', '/apis')).json().groups) for (const v of g.versions) await add(`/apis/${v.groupVersion}`, g.name, v.version);
  return out;
}

/** the main resource of a subresource */
function mainOf(r: Resource): Resource | undefined {
  return resources.find((x) => x.prefix === r.prefix && x.name === r.base);
}

/** the fixture object of a resource (its main resource's kind), if there is one */
function fixtureOf(r: Resource): string | undefined {
  const m = r.sub ? mainOf(r) : r;
  return m && fixtureNames.get(`${m.group}/${m.kind}`)?.name;
}

function collectionPath(r: Resource): string {
  return r.namespaced ? `${r.prefix}/namespaces/${NS}/${r.base}` : `${r.prefix}/${r.base}`;
}

function objectPath(r: Resource, name = fixtureOf(r) ?? 'rb-absent'): string {
  return `${collectionPath(r)}/${encodeURIComponent(name)}${r.sub ? `/${r.sub}` : ''}`;
}

/** the subresources that connect to a kubelet or proxy somewhere: only the generic checks apply */
const CONNECT = new Set(['log', 'exec', 'attach', 'portforward', 'proxy']);

// ---- running a sweep ----

async function send(x: Case): Promise<RawResponse> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${BOUND_MS} ms`)), BOUND_MS);
  });
  try {
    return await Promise.race([c.raw(x.method, x.path, { headers: x.headers, body: x.body }), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** what is wrong with an answer (undefined: nothing) */
function judge(x: Case, r: RawResponse): string | undefined {
  if (r.status >= 500) {
    const tooLarge = r.status === 504 && /Too large resource version/.test(r.text);
    if (!tooLarge) return `answered ${r.status}: ${r.text.slice(0, 300)}`;
  }
  if (r.status >= 400) {
    let s: any;
    try {
      // (an error is negotiated as every answer is: YAML when YAML is what the client accepts)
      s = /yaml/.test(String(r.headers['content-type'])) ? YAML.parse(r.text) : r.json();
    } catch {
      return `answered ${r.status} without a Status: ${JSON.stringify(r.text.slice(0, 200))}`;
    }
    if (s.kind !== 'Status' || s.apiVersion !== 'v1' || s.status !== 'Failure' || s.code !== r.status || typeof s.message !== 'string' || s.message === '') {
      return `answered ${r.status} with a malformed Status: ${r.text.slice(0, 300)}`;
    }
  }
  const w = x.want;
  if (w && 'ok' in w) {
    if (r.status < 200 || r.status > 299) return `expected a success, got ${r.status}: ${r.text.slice(0, 300)}`;
  } else if (w) {
    const s = r.status >= 400 ? (/yaml/.test(String(r.headers['content-type'])) ? YAML.parse(r.text) : r.json()) : undefined;
    if (r.status !== w.code || s?.reason !== w.reason) return `expected ${w.code} ${w.reason}, got ${r.status} ${s?.reason ?? ''}: ${r.text.slice(0, 300)}`;
    if (w.message && !w.message.test(s.message)) return `expected a message matching ${w.message}, got ${JSON.stringify(s.message)}`;
  }
  return x.check?.(r);
}

async function sweep(cases: Case[]): Promise<void> {
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const x = cases[next++]!;
      try {
        const problem = judge(x, await send(x));
        if (problem) failures.push(`${x.what}: ${x.method} ${x.path.slice(0, 200)}: ${problem}`);
      } catch (e) {
        failures.push(`${x.what}: ${x.method} ${x.path.slice(0, 200)}: ${(e as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  assert.deepEqual(failures, [], `${failures.length} of ${cases.length} answers were wrong:\n${failures.join('\n')}`);
}

// ---- bodies ----

const JSON_CT = 'application/json';

/** a bad body, its Content-Type and what a create or an update of it is answered (undefined: only the generic checks) */
function badBodies(r: Resource): { what: string; ct: string; body: string | Buffer; want?: Want }[] {
  const other = r.group === 'apps' ? { apiVersion: 'batch/v1', kind: 'Job' } : { apiVersion: 'apps/v1', kind: 'Deployment' };
  const av = r.group ? `${r.group}/${r.version}` : r.version;
  const b = (o: unknown) => JSON.stringify(o);
  // a custom resource (its status too) has no Protobuf form; its scale, an autoscaling/v1 Scale, has one
  const noProtobuf = r.custom && r.sub !== 'scale';
  return [
    { what: 'not JSON', ct: JSON_CT, body: 'not json', want: bad() },
    { what: 'truncated JSON', ct: JSON_CT, body: `{"apiVersion":"${av}","kind":`, want: bad() },
    { what: 'a JSON array', ct: JSON_CT, body: '[]', want: bad() },
    { what: 'a JSON string', ct: JSON_CT, body: '"x"', want: bad() },
    { what: 'a JSON number', ct: JSON_CT, body: '42', want: bad() },
    { what: 'JSON null', ct: JSON_CT, body: 'null', want: bad() },
    { what: 'an empty body', ct: JSON_CT, body: '', want: bad() },
    { what: 'arrays 10k deep', ct: JSON_CT, body: '['.repeat(10_000) + ']'.repeat(10_000), want: bad() },
    { what: 'objects 100k deep', ct: JSON_CT, body: '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000) },
    { what: 'a number of 1e400', ct: JSON_CT, body: `{"apiVersion":"${av}","kind":"${r.kind}","metadata":{"name":"x","generation":1e400}}`, want: bad() },
    { what: 'a number of 2^64', ct: JSON_CT, body: `{"apiVersion":"${av}","kind":"${r.kind}","metadata":{"name":"x","generation":18446744073709551616}}`, want: bad() },
    { what: 'an unknown apiVersion', ct: JSON_CT, body: b({ apiVersion: 'nope.example.com/v9', kind: r.kind, metadata: { name: 'x' } }), want: bad() },
    { what: 'an unknown kind', ct: JSON_CT, body: b({ apiVersion: av, kind: 'NotAKind', metadata: { name: 'x' } }), want: bad() },
    { what: 'a kind of another group', ct: JSON_CT, body: b({ ...other, metadata: { name: 'x' } }), want: bad() },
    { what: 'labels as a list', ct: JSON_CT, body: b({ apiVersion: av, kind: r.kind, metadata: { name: 'x', labels: ['a'] } }), want: bad() },
    { what: 'a name that is a number', ct: JSON_CT, body: b({ apiVersion: av, kind: r.kind, metadata: { name: 5 } }), want: bad() },
    { what: 'metadata that is a string', ct: JSON_CT, body: b({ apiVersion: av, kind: r.kind, metadata: 'x' }), want: bad() },
    { what: 'invalid UTF-8', ct: JSON_CT, body: Buffer.concat([Buffer.from(`{"apiVersion":"${av}","kind":"${r.kind}","metadata":{"name":"x","labels":{"a":"`), Buffer.from([0xff, 0xfe]), Buffer.from('"}}}')]) },
    { what: 'garbage Protobuf', ct: 'application/vnd.kubernetes.protobuf', body: Buffer.from([0x6b, 0x38, 0x73, 0x00, 0xff, 0xff, 0x01, 0x02]), want: noProtobuf ? unsupported : bad() },
    { what: 'Protobuf without its prefix', ct: 'application/vnd.kubernetes.protobuf', body: 'garbage', want: noProtobuf ? unsupported : bad() },
    { what: 'garbage CBOR', ct: 'application/cbor', body: Buffer.from([0xff, 0x00, 0x1f, 0x9f]), want: bad() },
    { what: 'truncated CBOR', ct: 'application/cbor', body: Buffer.from([0xd9, 0xd9, 0xf7, 0xa1, 0x61]), want: bad() },
    { what: 'invalid YAML', ct: 'application/yaml', body: 'a: [b\n  - : :', want: bad() },
    { what: 'a YAML list', ct: 'application/yaml', body: '- a\n- b', want: bad() },
    { what: 'an unknown Content-Type', ct: 'text/plain', body: '{}', want: unsupported },
    { what: 'a Content-Type with odd parameters', ct: 'application/x-foo;charset=bar', body: '{}', want: unsupported },
  ];
}

test('bodies: every create and update of every resource refuses bad bodies', async () => {
  const cases: Case[] = [];
  for (const r of resources) {
    if (CONNECT.has(r.sub)) continue;
    for (const x of badBodies(r)) {
      const headers = { 'content-type': x.ct };
      if (!r.sub) {
        const post = r.verbs.includes('create') && !(r.namespaced && r.base === 'namespaces');
        cases.push({ what: `${r.name}@${r.prefix} create with ${x.what}`, method: 'POST', path: `${collectionPath(r)}?dryRun=All`, headers, body: x.body, want: post ? x.want : notAllowed });
      } else if (r.verbs.includes('create')) {
        cases.push({ what: `${r.name}@${r.prefix} create with ${x.what}`, method: 'POST', path: `${objectPath(r)}?dryRun=All`, headers, body: x.body, want: x.want });
      }
      // (a create-only subresource has no PUT: 405, as kube-apiserver's router answers)
      const put = r.verbs.includes('update');
      cases.push({ what: `${r.name}@${r.prefix} update with ${x.what}`, method: 'PUT', path: `${objectPath(r)}?dryRun=All`, headers, body: x.body, want: put ? x.want : notAllowed });
    }
  }
  await sweep(cases);
});

// ---- patches ----

const JP = 'application/json-patch+json';
const MP = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';
const APPLY_CBOR = 'application/apply-patch+cbor';

function badPatches(r: Resource): { what: string; ct: string; body: string | Buffer; query?: string; want: Want }[] {
  const av = r.group ? `${r.group}/${r.version}` : r.version;
  const name = fixtureOf(r) ?? 'rb-absent';
  const jsonPatchApplies = invalid(/^the server rejected our request due to an error in our request$/);
  const out: { what: string; ct: string; body: string | Buffer; query?: string; want: Want }[] = [
    // JSON patch: not a list of operations (400), operations that do not apply (422)
    { what: 'json-patch of an object', ct: JP, body: '{}', want: bad(/^error decoding patch: /) },
    { what: 'json-patch of a string', ct: JP, body: '"x"', want: bad(/^error decoding patch: /) },
    { what: 'json-patch of numbers', ct: JP, body: '[1,2]', want: bad(/^error decoding patch: /) },
    { what: 'json-patch not JSON', ct: JP, body: 'not json', want: bad(/^error decoding patch: /) },
    { what: 'json-patch empty', ct: JP, body: '', want: bad(/^error decoding patch: /) },
    { what: 'json-patch with an unknown op', ct: JP, body: '[{"op":"bogus","path":"/metadata/labels"}]', want: jsonPatchApplies },
    { what: 'json-patch without a path', ct: JP, body: '[{"op":"add"}]', want: jsonPatchApplies },
    { what: 'json-patch to nowhere', ct: JP, body: '[{"op":"add","path":"/nowhere/deep/x","value":1}]', want: jsonPatchApplies },
    { what: 'json-patch removing nothing', ct: JP, body: '[{"op":"remove","path":"/metadata/labels/nokey"}]', want: jsonPatchApplies },
    { what: 'json-patch whose test fails', ct: JP, body: '[{"op":"test","path":"/metadata/name","value":"other"},{"op":"add","path":"/metadata/labels/hacked","value":"1"}]', want: jsonPatchApplies },
    { what: 'json-patch moving from nowhere', ct: JP, body: '[{"op":"move","from":"/nowhere/x","path":"/metadata/labels/x"}]', want: jsonPatchApplies },
    { what: 'json-patch with a null op', ct: JP, body: '[null]', want: jsonPatchApplies },
    { what: 'json-patch with a huge index', ct: JP, body: '[{"op":"add","path":"/metadata/finalizers/18446744073709551616","value":"x"}]', want: jsonPatchApplies },
    { what: 'json-patch replacing the root', ct: JP, body: '[{"op":"replace","path":"","value":5}]', want: jsonPatchApplies },
    // merge patch: not an object (400), the wrong types (422)
    { what: 'merge-patch of a list', ct: MP, body: '[]', want: bad(/^error decoding patch: /) },
    { what: 'merge-patch of a number', ct: MP, body: '5', want: bad(/^error decoding patch: /) },
    { what: 'merge-patch of null', ct: MP, body: 'null', want: bad(/^Invalid JSON Patch$/) },
    { what: 'merge-patch not JSON', ct: MP, body: 'not json', want: bad(/^error decoding patch: /) },
    { what: 'merge-patch of labels as a list', ct: MP, body: '{"metadata":{"labels":["a"]}}', want: invalid() },
    // (a custom resource decodes it as unstructured, whose name is then missing: the name check's 400)
    { what: 'merge-patch of metadata as a number', ct: MP, body: '{"metadata":5}', want: r.custom && r.sub !== 'scale' ? bad(/^the name of the object \(\) does not match the name on the URL/) : invalid() },
    { what: 'merge-patch of a number name', ct: MP, body: '{"metadata":{"name":5}}', want: invalid() },
    { what: 'merge-patch of another name', ct: MP, body: '{"metadata":{"name":"other-name"}}', want: bad(/does not match the name on the URL/) },
    // server-side apply: garbage (400), no field manager (422), the wrong kind (400)
    { what: 'apply of invalid YAML', ct: APPLY, body: '{{{', query: 'fieldManager=rb', want: bad() },
    { what: 'apply of a YAML list', ct: APPLY, body: '[]', query: 'fieldManager=rb', want: bad() },
    { what: 'apply of nothing', ct: APPLY, body: '', query: 'fieldManager=rb', want: bad() },
    { what: 'apply without a field manager', ct: APPLY, body: `apiVersion: ${av}\nkind: ${r.kind}\nmetadata: {name: ${name}}`, want: invalid(/^PatchOptions\.meta\.k8s\.io "" is invalid: fieldManager: Required value: is required for apply patch$/) },
    { what: 'apply of the wrong kind', ct: APPLY, body: `apiVersion: ${av}\nkind: NotAKind\nmetadata: {name: ${name}}`, query: 'fieldManager=rb', want: bad(/^invalid object type: /) },
    { what: 'apply of labels as a list', ct: APPLY, body: `apiVersion: ${av}\nkind: ${r.kind}\nmetadata: {name: ${name}, labels: [a]}`, query: 'fieldManager=rb', want: bad() },
    { what: 'apply with a field manager of control characters', ct: APPLY, body: `apiVersion: ${av}\nkind: ${r.kind}\nmetadata: {name: ${name}}`, query: 'fieldManager=%01', want: invalid(/^PatchOptions\.meta\.k8s\.io "" is invalid: fieldManager: Invalid value: "\\u0001": invalid character U\+0001/) },
    { what: 'CBOR apply of garbage', ct: APPLY_CBOR, body: Buffer.from([0xff, 0x00]), query: 'fieldManager=rb', want: bad(/^error decoding patch: /) },
    { what: 'CBOR apply of a list', ct: APPLY_CBOR, body: Buffer.from([0x80]), query: 'fieldManager=rb', want: bad() },
    { what: 'CBOR apply without a field manager', ct: APPLY_CBOR, body: Buffer.from([0xa0]), want: invalid(/fieldManager: Required value/) },
    // not a patch type
    { what: 'a patch as application/json', ct: JSON_CT, body: '{}', want: unsupported },
    { what: 'a patch as text/plain', ct: 'text/plain', body: '{}', want: unsupported },
  ];
  // strategic merge patch: built-in kinds only (a custom resource's is 415)
  const smp: { what: string; body: string; want: Want }[] = [
    { what: 'strategic-merge-patch of a list', body: '[]', want: bad() },
    { what: 'strategic-merge-patch not JSON', body: 'not json', want: bad() },
    { what: 'strategic-merge-patch with an unknown $patch', body: '{"$patch":"bogus"}', want: bad(/^unknown patch type: bogus/) },
    { what: 'strategic-merge-patch with a numeric $patch', body: '{"$patch":5}', want: bad(/^unknown patch type/) },
    { what: 'strategic-merge-patch with a junk $setElementOrder', body: '{"metadata":{"$setElementOrder/finalizers":"x"}}', want: bad() },
    { what: 'strategic-merge-patch with a junk $retainKeys', body: '{"$retainKeys":5}', want: bad(/retainKeys/) },
    { what: 'strategic-merge-patch of labels as a list', body: '{"metadata":{"labels":["a"]}}', want: invalid() },
  ];
  for (const x of smp) out.push({ ...x, ct: SMP, want: r.custom ? unsupported : x.want });
  return out;
}

test('patches: every patch type refuses bad patches on every patchable resource', async () => {
  const cases: Case[] = [];
  for (const r of resources) {
    if (CONNECT.has(r.sub) || !fixtureOf(r)) continue;
    const patchable = r.verbs.includes('patch');
    for (const x of badPatches(r)) {
      // (apply, and patches of subresources other than status and scale, have their own rules: only the generic checks there)
      const want = !patchable ? notAllowed : r.sub && r.sub !== 'status' && r.sub !== 'scale' ? undefined : x.want;
      const query = ['dryRun=All', x.query].filter(Boolean).join('&');
      cases.push({ what: `${r.name}@${r.prefix} ${x.what}`, method: 'PATCH', path: `${objectPath(r)}?${query}`, headers: { 'content-type': x.ct }, body: x.body, want });
    }
  }
  await sweep(cases);
});

// ---- query parameters ----

test('query parameters: lists and watches of every resource refuse bad options', async () => {
  const listCases: [string, Want][] = [
    ['limit=abc', bad(/^strconv\.ParseInt: parsing "abc": invalid syntax$/)],
    ['limit=-1', ok],
    ['limit=1e999', bad(/^strconv\.ParseInt: parsing "1e999": invalid syntax$/)],
    ['limit=99999999999999999999', bad(/^strconv\.ParseInt: parsing "99999999999999999999": value out of range$/)],
    ['limit=', bad(/^strconv\.ParseInt: parsing "": invalid syntax$/)],
    ['continue=garbage', bad(/^invalid continue token/)],
    ['limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MX0', bad(/^invalid continue token/)],
    ['resourceVersion=abc', bad(/^invalid resource version/)],
    ['resourceVersion=abc&resourceVersionMatch=Exact', bad(/^invalid resource version/)],
    ['resourceVersion=abc&resourceVersionMatch=NotOlderThan', bad(/^invalid resource version/)],
    ['resourceVersion=-1', bad(/^invalid resource version/)],
    ['resourceVersionMatch=Exact', bad(/resourceVersionMatch is forbidden unless resourceVersion is provided/)],
    ['resourceVersionMatch=Bogus&resourceVersion=1', bad(/resourceVersionMatch: Unsupported value: "Bogus"/)],
    ['resourceVersion=0&resourceVersionMatch=Exact', bad(/resourceVersionMatch "exact" is forbidden for resourceVersion "0"/)],
    ['resourceVersion=1&limit=1&continue=garbage', bad()],
    ['fieldSelector=a', bad(/^invalid selector: 'a'; can't understand 'a'$/)],
    ['fieldSelector=metadata.name!x', bad(/^invalid selector/)],
    // (a kind with field labels of its own, and a custom resource, say it in the words of their conversion)
    ['fieldSelector=nope.field%3Dx', bad(/^("nope\.field" is not a known field selector: only "metadata\.name", "metadata\.namespace"|field label not supported: nope\.field)$/)],
    ['labelSelector=a+in+(b', bad(/^unable to parse requirement/)],
    ['labelSelector=a+bogus+b', bad(/^unable to parse requirement: found 'bogus'/)],
    ['labelSelector=(', bad()],
    ['labelSelector=a%3Db%3Dc', bad()],
    ['labelSelector=a>b', bad(/the value must be an integer/)],
    ['timeoutSeconds=abc', bad(/^strconv\.ParseInt: parsing "abc": invalid syntax$/)],
    ['timeoutSeconds=-5', ok],
    ['sendInitialEvents=true', bad(/sendInitialEvents is forbidden for list/)],
    ['pretty=xx', ok],
    ['allowWatchBookmarks=xx', ok],
    ['watch=1&resourceVersion=abc', bad(/^invalid resource version/)],
    ['watch=1&sendInitialEvents=true', bad(/sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/)],
    ['watch=1&resourceVersion=1&resourceVersionMatch=Exact', bad()],
    ['watch=1&timeoutSeconds=abc', bad(/^strconv\.ParseInt: parsing "abc": invalid syntax$/)],
    ['watch=1&limit=abc', bad(/^strconv\.ParseInt: parsing "abc": invalid syntax$/)],
    ['watch=1&labelSelector=(', bad()],
    ['watch=1&fieldSelector=nope.field%3Dx', bad(/is not a known field selector|field label not supported: nope\.field/)],
    // a negative timeout ends the watch at once (Go's timer of a negative duration)
    ['watch=1&timeoutSeconds=-5', ok],
  ];
  // (what the storage, not the handler, reads: a resource that is no stored one, componentstatuses,
  // takes them as Kubernetes' REST of it does, unread; so do metrics-server's NodeMetrics and
  // PodMetrics, whose storage reads only the selectors)
  const storageLevel = /^(continue=|limit=1&continue=|resourceVersion=(abc|-1)|resourceVersion=1&limit=1&continue=)/;
  const cases: Case[] = [];
  for (const r of resources) {
    if (r.sub || !r.verbs.includes('list')) continue;
    const virtual = (r.group === '' && r.base === 'componentstatuses') || r.group === 'metrics.k8s.io';
    for (const [q, want] of listCases) {
      if (q.startsWith('watch=1') && !r.verbs.includes('watch')) continue;
      cases.push({ what: `${r.name}@${r.prefix} list`, method: 'GET', path: `${collectionPath(r)}?${q}`, want: virtual && storageLevel.test(q) ? ok : want });
    }
  }
  // a resource version from the future: 504 'Too large resource version' after a short wait
  for (const p of [`/api/v1/namespaces/${NS}/configmaps`, `/apis/${CR_GROUP}/v1/namespaces/${NS}/widgets`, `/api/v1/namespaces/${NS}/configmaps/cm1`]) {
    cases.push({ what: 'a future resource version', method: 'GET', path: `${p}?resourceVersion=99999999999`, want: { code: 504, reason: 'Timeout', message: /^Timeout: Too large resource version: 99999999999, current: \d+$/ } });
  }
  // the options of writes
  const cms = `/api/v1/namespaces/${NS}/configmaps`;
  const widgets = `/apis/${CR_GROUP}/v1/namespaces/${NS}/widgets`;
  const cm = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1' } });
  const w = JSON.stringify({ apiVersion: `${CR_GROUP}/v1`, kind: 'Widget', metadata: { name: 'w1' } });
  for (const [coll, obj] of [
    [cms, cm],
    [widgets, w],
  ] as const) {
    const name = coll === cms ? 'cm1' : 'w1';
    const j = { 'content-type': JSON_CT };
    const m = { 'content-type': MP };
    cases.push(
      // dryRun: Kubernetes' words in a 400 (Keelson's choice, see handlers.ts dryRunOf)
      { what: 'create dryRun=Maybe', method: 'POST', path: `${coll}?dryRun=Maybe`, headers: j, body: obj, want: bad(/^CreateOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: \[\]string\{"Maybe"\}: supported values: "All"$/) },
      { what: 'update dryRun=Maybe', method: 'PUT', path: `${coll}/${name}?dryRun=Maybe`, headers: j, body: obj, want: bad(/^UpdateOptions\.meta\.k8s\.io "" is invalid: dryRun/) },
      { what: 'patch dryRun=Maybe', method: 'PATCH', path: `${coll}/${name}?dryRun=Maybe`, headers: m, body: '{}', want: bad(/^PatchOptions\.meta\.k8s\.io "" is invalid: dryRun/) },
      { what: 'delete dryRun=Maybe', method: 'DELETE', path: `${coll}/${name}?dryRun=Maybe`, want: bad(/^DeleteOptions\.meta\.k8s\.io "" is invalid: dryRun/) },
      { what: 'create fieldValidation=Bogus', method: 'POST', path: `${coll}?fieldValidation=Bogus&dryRun=All`, headers: j, body: obj, want: invalid(/^CreateOptions\.meta\.k8s\.io "" is invalid: fieldValidation: Unsupported value: "Bogus"/) },
      { what: 'update fieldValidation=Bogus', method: 'PUT', path: `${coll}/${name}?fieldValidation=Bogus&dryRun=All`, headers: j, body: obj, want: invalid(/^UpdateOptions\.meta\.k8s\.io "" is invalid: fieldValidation/) },
      { what: 'patch fieldValidation=Bogus', method: 'PATCH', path: `${coll}/${name}?fieldValidation=Bogus&dryRun=All`, headers: m, body: '{}', want: invalid(/^PatchOptions\.meta\.k8s\.io "" is invalid: fieldValidation/) },
      { what: 'create with a field manager of control characters', method: 'POST', path: `${coll}?fieldManager=%00&dryRun=All`, headers: j, body: obj, want: invalid(/^CreateOptions\.meta\.k8s\.io "" is invalid: fieldManager: Invalid value: "\\u0000": invalid character U\+0000 \(at position 0\)$/) },
      { what: 'update with a field manager of control characters', method: 'PUT', path: `${coll}/${name}?fieldManager=%00&dryRun=All`, headers: j, body: obj, want: invalid(/^UpdateOptions\.meta\.k8s\.io "" is invalid: fieldManager: Invalid value: "\\u0000"/) },
      { what: 'update with a field manager too long', method: 'PUT', path: `${coll}/${name}?fieldManager=${'x'.repeat(200)}&dryRun=All`, headers: j, body: obj, want: invalid(/^UpdateOptions\.meta\.k8s\.io "" is invalid: fieldManager: Too long: may not be (longer|more) than 128/) },
      { what: 'patch with a field manager of control characters', method: 'PATCH', path: `${coll}/${name}?fieldManager=%00&dryRun=All`, headers: m, body: '{}', want: invalid(/^PatchOptions\.meta\.k8s\.io "" is invalid: fieldManager/) },
      { what: 'non-apply patch with force', method: 'PATCH', path: `${coll}/${name}?force=true&dryRun=All`, headers: m, body: '{}', want: invalid(/force: Forbidden: may not be specified for non-apply patch/) },
      { what: 'delete propagationPolicy=Bogus', method: 'DELETE', path: `${coll}/${name}?propagationPolicy=Bogus&dryRun=All`, want: invalid(/^DeleteOptions\.meta\.k8s\.io "" is invalid: propagationPolicy: Unsupported value: "Bogus"/) },
      { what: 'delete gracePeriodSeconds=abc', method: 'DELETE', path: `${coll}/${name}?gracePeriodSeconds=abc&dryRun=All`, want: bad(/^strconv\.ParseInt: parsing "abc": invalid syntax$/) },
      { what: 'delete orphanDependents with propagationPolicy', method: 'DELETE', path: `${coll}/${name}?orphanDependents=true&propagationPolicy=Foreground&dryRun=All`, want: invalid(/orphanDependents and deletionPropagation cannot be both set/) },
      { what: 'deletecollection with a bad label selector', method: 'DELETE', path: `${coll}?labelSelector=a+in+(&dryRun=All`, want: bad(/^unable to parse requirement/) },
      { what: 'deletecollection with an unknown field selector', method: 'DELETE', path: `${coll}?fieldSelector=spec.x%3Dy&dryRun=All`, want: bad(/is not a known field selector|field label not supported: spec\.x/) },
      { what: 'deletecollection with limit=abc', method: 'DELETE', path: `${coll}?limit=abc&dryRun=All`, want: bad(/^strconv\.ParseInt/) },
      { what: 'deletecollection with timeoutSeconds=abc', method: 'DELETE', path: `${coll}?timeoutSeconds=abc&dryRun=All`, want: bad(/^strconv\.ParseInt/) },
      { what: 'deletecollection with sendInitialEvents', method: 'DELETE', path: `${coll}?sendInitialEvents=true&dryRun=All`, want: bad(/sendInitialEvents is forbidden for list/) },
    );
  }
  await sweep(cases);
});

// ---- delete options ----

test('delete options: bad DeleteOptions bodies delete nothing', async () => {
  const bodies: [string, string, string, Want][] = [
    ['preconditions of the wrong type', JSON_CT, '{"dryRun":["All"],"preconditions":"x"}', bad(/cannot unmarshal string into Go struct field DeleteOptions\.preconditions of type v1\.Preconditions/)],
    ['a precondition uid of the wrong type', JSON_CT, '{"dryRun":["All"],"preconditions":{"uid":5}}', bad(/cannot unmarshal number/)],
    ['a precondition uid that differs', JSON_CT, '{"dryRun":["All"],"preconditions":{"uid":"wrong"}}', { code: 409, reason: 'Conflict', message: /the UID in the precondition \(wrong\) does not match the UID in record|Precondition failed: UID in precondition: wrong/ }],
    ['gracePeriodSeconds as a string', JSON_CT, '{"dryRun":["All"],"gracePeriodSeconds":"x"}', bad(/cannot unmarshal string/)],
    ['gracePeriodSeconds of 1e400', JSON_CT, '{"dryRun":["All"],"gracePeriodSeconds":1e400}', bad()],
    ['an unknown propagationPolicy', JSON_CT, '{"dryRun":["All"],"propagationPolicy":"Bogus"}', invalid(/propagationPolicy: Unsupported value: "Bogus"/)],
    ['dryRun Maybe', JSON_CT, '{"dryRun":["Maybe"]}', bad(/dryRun: Unsupported value/)],
    ['dryRun as a string', JSON_CT, '{"dryRun":"All"}', bad(/cannot unmarshal string into Go struct field DeleteOptions\.dryRun of type \[\]string/)],
    ['a list', JSON_CT, '[]', bad()],
    ['not JSON', JSON_CT, 'not json', bad()],
    ['another kind', JSON_CT, '{"kind":"Pod","apiVersion":"v1","dryRun":["All"]}', bad(/^decoded object cannot be converted to DeleteOptions$/)],
    ['an unknown Content-Type', 'text/plain', '{"dryRun":["All"]}', unsupported],
    ['invalid YAML', 'application/yaml', 'a: [b', bad()],
    ['garbage Protobuf', 'application/vnd.kubernetes.protobuf', '\x6b\x38\x73\x00\xff', bad()],
  ];
  const cases: Case[] = [];
  for (const r of resources) {
    if (r.sub || !r.verbs.includes('delete') || !fixtureOf(r)) continue;
    for (const [what, ct, body, want] of bodies) {
      cases.push({ what: `${r.name}@${r.prefix} delete with ${what}`, method: 'DELETE', path: objectPath(r), headers: { 'content-type': ct }, body, want });
    }
    if (r.verbs.includes('deletecollection')) {
      for (const [what, ct, body, want] of bodies.filter(([, , , w]) => !('code' in w) || w.code !== 409)) {
        cases.push({ what: `${r.name}@${r.prefix} deletecollection with ${what}`, method: 'DELETE', path: `${collectionPath(r)}?labelSelector=probe%3D1`, headers: { 'content-type': ct }, body, want });
      }
    }
  }
  await sweep(cases);
});

// ---- paths ----

test('paths: unknown resources, odd names, absent namespaces and wrong scopes', async () => {
  const cm = `/api/v1/namespaces/${NS}/configmaps`;
  const long = 'x'.repeat(300);
  const nameInvalid = (name: string, why: string) => bad(new RegExp(`^Name parameter invalid: "${name.replace(/[.%]/g, '\\$&')}": ${why}$`));
  const cases: Case[] = [
    { what: 'an unknown group', method: 'GET', path: '/apis/nope.example.com/v1/things', want: notFound(/^the server could not find the requested resource$/) },
    { what: 'an unknown version', method: 'GET', path: '/apis/apps/v9/deployments', want: notFound() },
    { what: 'an unknown resource', method: 'GET', path: '/apis/apps/v1/nothings', want: notFound() },
    { what: 'an unknown core version', method: 'GET', path: '/api/v9/pods', want: notFound() },
    { what: 'an unknown core resource', method: 'POST', path: '/api/v1/nothings', headers: { 'content-type': JSON_CT }, body: '{}', want: notFound() },
    { what: 'an unknown group, deep', method: 'DELETE', path: '/apis/nope/v1/x/y', want: notFound() },
    { what: 'a long name', method: 'GET', path: `${cm}/${long}`, want: notFound() },
    { what: 'an uppercase name', method: 'GET', path: `${cm}/UPPER`, want: notFound(/^configmaps "UPPER" not found$/) },
    { what: 'an uppercase name, put', method: 'PUT', path: `${cm}/UPPER`, headers: { 'content-type': JSON_CT }, body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}', want: bad(/^the name of the object \(x\) does not match the name on the URL \(UPPER\)$/) },
    { what: 'the name ..', method: 'GET', path: `${cm}/..`, want: nameInvalid('..', "may not be '..'") },
    { what: 'the name .', method: 'GET', path: '/api/v1/nodes/.', want: nameInvalid('.', "may not be '.'") },
    { what: 'a name with %', method: 'GET', path: `${cm}/a%25b`, want: nameInvalid('a%b', "may not contain '%'") },
    { what: 'the name .., deleted', method: 'DELETE', path: `${cm}/..`, want: nameInvalid('..', "may not be '..'") },
    { what: 'the name .., patched', method: 'PATCH', path: `${cm}/..`, headers: { 'content-type': MP }, body: '{}', want: nameInvalid('..', "may not be '..'") },
    { what: 'the name .., put', method: 'PUT', path: `${cm}/..`, headers: { 'content-type': JSON_CT }, body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":".."}}', want: nameInvalid('..', "may not be '..'") },
    { what: 'the name .., a log', method: 'GET', path: `/api/v1/namespaces/${NS}/pods/../log`, want: nameInvalid('..', "may not be '..'") },
    { what: 'the name .., a status', method: 'GET', path: `/apis/${CR_GROUP}/v1/namespaces/${NS}/widgets/../status`, want: nameInvalid('..', "may not be '..'") },
    { what: 'a created name with %', method: 'POST', path: `/api/v1/namespaces/${NS}/events?dryRun=All`, headers: { 'content-type': JSON_CT }, body: JSON.stringify({ metadata: { name: 'a%b' }, involvedObject: { namespace: NS } }), want: invalid() },
    { what: 'an encoded slash', method: 'GET', path: `${cm}/a%2Fb` },
    { what: 'encoded dots and slashes', method: 'GET', path: `/api/v1/namespaces/${NS}/pods/..%2F..%2Fsecrets` },
    { what: 'a NUL in a name', method: 'GET', path: `${cm}/%00`, want: notFound() },
    { what: 'a byte that is not UTF-8', method: 'GET', path: `${cm}/%ff`, want: notFound() },
    { what: 'a namespace that does not exist: list', method: 'GET', path: '/api/v1/namespaces/nonexistent/configmaps', want: ok },
    { what: 'a namespace that does not exist: get', method: 'GET', path: '/api/v1/namespaces/nonexistent/configmaps/x', want: notFound(/^configmaps "x" not found$/) },
    { what: 'a namespace that does not exist: create', method: 'POST', path: '/api/v1/namespaces/nonexistent/configmaps', headers: { 'content-type': JSON_CT }, body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}', want: notFound(/^namespaces "nonexistent" not found$/) },
    { what: 'a namespace that does not exist: patch', method: 'PATCH', path: '/api/v1/namespaces/nonexistent/configmaps/x', headers: { 'content-type': MP }, body: '{}', want: notFound() },
    { what: 'a namespaced object without its namespace', method: 'GET', path: '/api/v1/configmaps/cm1', want: notFound(/^the server could not find the requested resource$/) },
    { what: 'a namespaced create without a namespace', method: 'POST', path: '/api/v1/configmaps', headers: { 'content-type': JSON_CT }, body: '{}', want: notAllowed },
    { what: 'a namespaced deletecollection without a namespace', method: 'DELETE', path: '/api/v1/configmaps', want: notAllowed },
    { what: 'a cluster-scoped resource in a namespace', method: 'GET', path: `/api/v1/namespaces/${NS}/nodes`, want: notFound(/^the server could not find the requested resource$/) },
    { what: 'a cluster-scoped object in a namespace', method: 'GET', path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/clusterroles/tbl-crole`, want: notFound() },
    { what: 'extra path segments', method: 'GET', path: `${cm}/cm1/y/z`, want: notFound(/^the server could not find the requested resource$/) },
    { what: 'a subresource a kind does not have', method: 'GET', path: `${cm}/cm1/status`, want: notFound() },
    { what: 'extra segments below a subresource', method: 'GET', path: `/api/v1/namespaces/${NS}/pods/p1/status/extra`, want: notFound() },
    { what: 'a collection update', method: 'PUT', path: cm, headers: { 'content-type': JSON_CT }, body: '{}', want: notAllowed },
    { what: 'a collection patch', method: 'PATCH', path: cm, headers: { 'content-type': MP }, body: '{}', want: notAllowed },
    { what: 'a create on an object path', method: 'POST', path: `${cm}/cm1`, headers: { 'content-type': JSON_CT }, body: '{}', want: notAllowed },
    { what: 'a put of an eviction', method: 'PUT', path: `/api/v1/namespaces/${NS}/pods/p1/eviction`, headers: { 'content-type': JSON_CT }, body: '{}', want: notAllowed },
    { what: 'a put of a binding', method: 'PUT', path: `/api/v1/namespaces/${NS}/pods/p1/binding`, headers: { 'content-type': JSON_CT }, body: '{}', want: notAllowed },
    { what: 'a put of a token', method: 'PUT', path: `/api/v1/namespaces/${NS}/serviceaccounts/sa1/token`, headers: { 'content-type': JSON_CT }, body: '{}', want: notAllowed },
    { what: 'a get of an eviction', method: 'GET', path: `/api/v1/namespaces/${NS}/pods/p1/eviction`, want: notAllowed },
    { what: 'OPTIONS', method: 'OPTIONS', path: '/api/v1/namespaces', want: notAllowed },
    { what: 'TRACE', method: 'TRACE', path: '/api/v1/namespaces', want: notAllowed },
    { what: 'an unknown method', method: 'FOO', path: '/api/v1/namespaces', want: notAllowed },
    { what: 'a create of a review with GET', method: 'GET', path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', want: notAllowed },
  ];
  // every resource: an object that is not there, and the subresources of one that is not there
  for (const r of resources) {
    if (!r.verbs.includes('get') || CONNECT.has(r.sub)) continue;
    const main = r.sub ? mainOf(r) : r;
    // (metrics-server words it as its listers of Nodes and Pods do: node "x", pods "x")
    const metrics = r.group === 'metrics.k8s.io' ? { nodes: 'node', pods: 'pods' }[r.base] : undefined;
    const plural = metrics ?? (main?.group ? `${main.base}.${main.group}` : r.base);
    cases.push({ what: `${r.name}@${r.prefix} absent`, method: 'GET', path: objectPath(r, 'rb-absent'), want: notFound(new RegExp(`^${plural.replace(/\./g, '\\.')} "rb-absent" not found$`)) });
  }
  await sweep(cases);
});

// ---- headers ----

test('headers: unknown Accept types, odd Content-Encodings, big headers', async () => {
  const cm = `/api/v1/namespaces/${NS}/configmaps`;
  const body = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
  const j = { 'content-type': JSON_CT };
  const cases: Case[] = [];
  for (const r of resources) {
    if (r.sub || !r.verbs.includes('list')) continue;
    cases.push({ what: `${r.name}@${r.prefix} Accept foo/bar`, method: 'GET', path: collectionPath(r), headers: { accept: 'foo/bar' }, want: notAcceptable });
    cases.push({ what: `${r.name}@${r.prefix} Accept a Table of v9`, method: 'GET', path: collectionPath(r), headers: { accept: 'application/json;as=Table;v=v9;g=meta.k8s.io' }, want: notAcceptable });
  }
  cases.push(
    { what: 'Accept a Table of no group', method: 'GET', path: cm, headers: { accept: 'application/json;as=Table' }, want: notAcceptable },
    { what: 'Accept an unknown transform', method: 'GET', path: cm, headers: { accept: 'application/json;as=Bogus;v=v1;g=meta.k8s.io' }, want: notAcceptable },
    { what: 'Accept a metadata list of one object', method: 'GET', path: `${cm}/cm1`, headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' }, want: notAcceptable },
    { what: 'Accept nothing', method: 'GET', path: cm, headers: { accept: 'application/json;q=0' }, want: notAcceptable },
    { what: 'Accept punctuation', method: 'GET', path: cm, headers: { accept: ';;;' }, want: notAcceptable },
    { what: 'Accept foo/bar on a watch', method: 'GET', path: `${cm}?watch=1&timeoutSeconds=1`, headers: { accept: 'foo/bar' }, want: notAcceptable },
    { what: 'Accept YAML on a watch', method: 'GET', path: `${cm}?watch=1&timeoutSeconds=1`, headers: { accept: 'application/yaml' }, want: notAcceptable },
    { what: 'Accept foo/bar on a create', method: 'POST', path: `${cm}?dryRun=All`, headers: { ...j, accept: 'foo/bar' }, body: body('accept'), want: notAcceptable },
    { what: 'Accept foo/bar on a delete', method: 'DELETE', path: `${cm}/cm1?dryRun=All`, headers: { accept: 'foo/bar' }, want: notAcceptable },
    { what: 'Accept foo/bar on a patch', method: 'PATCH', path: `${cm}/cm1?dryRun=All`, headers: { accept: 'foo/bar', 'content-type': MP }, body: '{}', want: notAcceptable },
    // Kubernetes decodes no request Content-Encoding: a plain body is read as it is, a gzipped one is not JSON
    { what: 'Content-Encoding gzip on a plain body', method: 'POST', path: `${cm}?dryRun=All`, headers: { ...j, 'content-encoding': 'gzip' }, body: body('plain'), want: ok },
    { what: 'Content-Encoding gzip on a gzipped body', method: 'POST', path: `${cm}?dryRun=All`, headers: { ...j, 'content-encoding': 'gzip' }, body: zlib.gzipSync(body('gz')), want: bad() },
    { what: 'Content-Encoding bogus', method: 'POST', path: `${cm}?dryRun=All`, headers: { ...j, 'content-encoding': 'bogus' }, body: body('bogus'), want: ok },
    { what: 'a 200 kB header', method: 'GET', path: cm, headers: { 'x-big': 'a'.repeat(200_000) }, want: ok },
    { what: '500 headers', method: 'GET', path: cm, headers: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`x-h${i}`, 'v'])), want: ok },
    { what: 'a Content-Type of punctuation', method: 'POST', path: `${cm}?dryRun=All`, headers: { 'content-type': ';;' }, body: body('ct'), want: unsupported },
  );
  await sweep(cases);
});

/** a raw HTTP/1.1 exchange over TLS: what came back within `ms`, and whether the server closed */
function rawExchange(head: string, ms: number): Promise<{ text: string; closed: boolean; elapsed: number }> {
  return new Promise((resolve) => {
    const t = c.credentials;
    const started = Date.now();
    let text = '';
    const s = tls.connect({ host: '127.0.0.1', port: c.port, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost', ALPNProtocols: ['http/1.1'] }, () => s.write(head));
    const done = (closed: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve({ text, closed, elapsed: Date.now() - started });
    };
    const timer = setTimeout(() => done(false), ms);
    s.on('data', (d) => {
      text += d.toString('latin1');
      // a whole answer with a Content-Length: done
      const m = /\r\ncontent-length: (\d+)\r\n/i.exec(text);
      const end = text.indexOf('\r\n\r\n');
      if (m && end >= 0 && Buffer.byteLength(text.slice(end + 4), 'latin1') >= Number(m[1])) done(false);
    });
    s.on('close', () => done(true));
    s.on('error', () => done(true));
  });
}

test('a Content-Length larger than the body: the request times out within its timeout, as a 504 Timeout', async () => {
  const cm = `/api/v1/namespaces/${NS}/configmaps`;
  const heads = [
    `POST ${cm}?timeout=2s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"apiVersion":`,
    `PUT ${cm}/cm1?timeout=2s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`,
    `PATCH ${cm}/cm1?timeout=2s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/merge-patch+json\r\nContent-Length: 1000000\r\n\r\n{"data":`,
  ];
  const got = await Promise.all(heads.map((h) => rawExchange(h, 8_000)));
  for (const [i, g] of got.entries()) {
    assert.ok(g.elapsed < 8_000, `request ${i} still open after 8 s: ${JSON.stringify(g.text.slice(0, 300))}`);
    // kube-apiserver's timeout filter: 504 with its Status (text/plain, as Kubernetes writes it)
    assert.match(g.text, /^HTTP\/1\.1 504 Gateway Timeout\r\n/, `request ${i}: ${JSON.stringify(g.text.slice(0, 300))}`);
    const s = JSON.parse(g.text.slice(g.text.indexOf('\r\n\r\n') + 4));
    assert.equal(s.reason, 'Timeout');
    assert.equal(s.code, 504);
    assert.equal(s.message, 'Timeout: request did not complete within the allotted timeout');
  }
});

// ---- watches ----

/** until the first bytes of a stream came (a partial event, perhaps), it ended, or 2 s passed */
async function firstBytes(s: { chunks: Buffer[]; ended: boolean }): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (s.chunks.length === 0 && !s.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

test('watch: a bad resource version, an expired one, and watches the client closes mid-stream', async () => {
  const cm = `/api/v1/namespaces/${NS}/configmaps`;
  // an old resource version: its events (while the history holds them), or an ERROR 410 Expired; the watch ends at its timeout
  const old = c.stream(`${cm}?watch=1&resourceVersion=1&timeoutSeconds=1`);
  await old.ready;
  assert.equal(old.status, 200);
  await old.untilEnd(5_000);
  for (const e of old.events()) {
    assert.ok(['ADDED', 'MODIFIED', 'DELETED', 'ERROR'].includes(e.type), JSON.stringify(e));
    if (e.type === 'ERROR') assert.equal(e.object.code, 410);
  }
  // a resource version that is not one: 400 before the stream
  const junk = await c.raw('GET', `${cm}?watch=1&resourceVersion=abc`);
  assert.equal(junk.status, 400);
  assert.equal(junk.json().reason, 'BadRequest');

  // a negative timeout: the watch answers 200 and ends at once
  const quick = c.stream(`${cm}?watch=1&resourceVersion=0&timeoutSeconds=-5`);
  await quick.ready;
  assert.equal(quick.status, 200);
  await quick.untilEnd(5_000);

  // watches closed by the client at every point: before the answer, during the initial events, after them
  for (let i = 0; i < 30; i++) {
    const s = c.stream(i % 2 ? `${cm}?watch=1&allowWatchBookmarks=true` : `/api/v1/pods?watch=1&resourceVersion=0&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    if (i % 3 === 1) await s.ready;
    if (i % 3 === 2) await firstBytes(s);
    s.close();
  }
  // and over HTTP/2, where a stream is reset
  const session = c.http2Session();
  try {
    for (let i = 0; i < 10; i++) {
      const s = c.stream(`${cm}?watch=1`, {}, session);
      if (i % 2) await firstBytes(s);
      s.close();
    }
  } finally {
    session.close();
  }
  const r = await c.raw('GET', `${cm}?limit=1`);
  assert.equal(r.status, 200);
});

// ---- after the sweep ----

test('after the sweep: the server is alive and ready, and the objects the sweep aimed at are unchanged', async () => {
  assert.equal(c.proc?.exitCode, null, 'the server process exited');
  const ready = await c.raw('GET', '/readyz');
  assert.equal(ready.status, 200, ready.text);
  assert.doesNotMatch(c.logs, /Unhandled|uncaughtException|RangeError: Maximum call stack/);
});

/** the fixture objects as they are now, by group/kind */
async function fixtureObjects(): Promise<Map<string, any>> {
  const out = new Map<string, any>();
  for (const r of resources) {
    if (r.sub || !r.verbs.includes('get')) continue;
    const name = fixtureOf(r);
    const key = `${r.group}/${r.kind}`;
    if (!name || out.has(key)) continue;
    const g = await c.raw('GET', objectPath(r));
    assert.equal(g.status, 200, `${key} ${name}: ${g.text.slice(0, 300)}`);
    out.set(key, g.json());
  }
  return out;
}

/** kinds nothing but the sweep writes to (no controller, no status): their resourceVersion must not move */
const PASSIVE = new Set(['/ConfigMap', '/Secret', '/PodTemplate', '/LimitRange', 'rbac.authorization.k8s.io/Role', 'rbac.authorization.k8s.io/RoleBinding', 'scheduling.k8s.io/PriorityClass', 'storage.k8s.io/StorageClass', 'networking.k8s.io/IngressClass', 'networking.k8s.io/NetworkPolicy', 'node.k8s.io/RuntimeClass', 'apps/ControllerRevision', `${CR_GROUP}/Widget`]);


test('after the sweep: every fixture object is the one it was (uid, labels, no deletion), the passive ones at the same resourceVersion', async () => {
  assert.ok(beforeSweep && beforeSweep.size > 40, `only ${beforeSweep?.size} fixture objects`);
  const now = await fixtureObjects();
  const problems: string[] = [];
  for (const [key, was] of beforeSweep) {
    const is = now.get(key);
    if (!is) {
      problems.push(`${key}: gone`);
      continue;
    }
    if (is.metadata.uid !== was.metadata.uid) problems.push(`${key}: recreated`);
    if (is.metadata.deletionTimestamp) problems.push(`${key}: being deleted`);
    if (JSON.stringify(is.metadata.labels) !== JSON.stringify(was.metadata.labels)) problems.push(`${key}: labels ${JSON.stringify(was.metadata.labels)} -> ${JSON.stringify(is.metadata.labels)}`);
    if (PASSIVE.has(key) && is.metadata.resourceVersion !== was.metadata.resourceVersion) problems.push(`${key}: written (resourceVersion ${was.metadata.resourceVersion} -> ${is.metadata.resourceVersion})`);
  }
  assert.deepEqual(problems, []);
});
