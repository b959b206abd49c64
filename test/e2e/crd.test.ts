// CustomResourceDefinitions end to end: a real keelson, a CronTab CRD applied as an operator's
// chart applies it (versions v1 and v1beta1, status and scale subresources, printer columns,
// defaults, validation), then its custom resources through raw HTTPS and kubectl 1.33 and 1.27:
// Established, discovery, create/get/list/watch/patch/apply/scale/delete, tables, the CRD's
// deletion (its custom resources go first) and a restart.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { startCluster, until, KEELSON, kubectlBinary, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'crd-e2e';
const BASE = `/apis/stable.example.com/v1/namespaces/${NS}/crontabs`;

const CRD_YAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A CronTab runs an image on a schedule.
        properties:
          spec:
            type: object
            description: What to run and when.
            properties:
              cronSpec:
                type: string
                description: The schedule, in cron format.
                pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'
              image:
                type: string
                maxLength: 30
              replicas:
                type: integer
                minimum: 1
                maximum: 10
                default: 1
              mode:
                type: string
                enum: [Fast, Slow]
                default: Slow
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name:
                      type: string
                    port:
                      type: integer
            required: [cronSpec]
          status:
            type: object
            properties:
              replicas:
                type: integer
              labelSelector:
                type: string
    selectableFields:
    - jsonPath: .spec.mode
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.labelSelector
    additionalPrinterColumns:
    - name: Spec
      type: string
      description: The cron spec defining the interval a CronJob is run
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Mode
      type: string
      priority: 1
      jsonPath: .spec.mode
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`;

const cron = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'stable.example.com/v1',
  kind: 'CronTab',
  metadata: { name, namespace: NS },
  spec: { cronSpec: '* * * * */5', image: 'my-cron-image', ...spec },
});

function kubectl(args: string[], version = '1.33', input?: string) {
  const r = c.kubectl(args, { version, input });
  return r;
}

function ok(args: string[], version = '1.33', input?: string): string {
  const r = kubectl(args, version, input);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

before(async () => {
  c = await startCluster();
  const ns = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  assert.equal(ns.status, 201, ns.text);
  ok(['apply', '-f', '-'], '1.33', CRD_YAML);
  ok(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/crontabs.stable.example.com']);
});

after(async () => {
  await c?.stop();
});

test('the CRD is Established with its names accepted, and its storage version recorded', async () => {
  const crd = (await c.raw('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com')).json();
  const cond = Object.fromEntries(crd.status.conditions.map((x: any) => [x.type, x]));
  assert.equal(cond.NamesAccepted.status, 'True');
  assert.equal(cond.NamesAccepted.reason, 'NoConflicts');
  assert.equal(cond.Established.status, 'True');
  assert.equal(cond.Established.reason, 'InitialNamesAccepted');
  assert.deepEqual(crd.status.acceptedNames, { plural: 'crontabs', singular: 'crontab', shortNames: ['ct'], kind: 'CronTab', listKind: 'CronTabList', categories: ['all'] });
  assert.deepEqual(crd.status.storedVersions, ['v1']);
  assert.equal(crd.spec.conversion.strategy, 'None');
});

test('discovery: the group, its versions (v1 preferred) and resources, legacy and aggregated', async () => {
  const groups = (await c.raw('GET', '/apis')).json();
  const g = groups.groups.find((x: any) => x.name === 'stable.example.com');
  assert.deepEqual(g.versions.map((v: any) => v.version), ['v1', 'v1beta1']);
  assert.equal(g.preferredVersion.version, 'v1');
  const group = await c.raw('GET', '/apis/stable.example.com');
  assert.equal(group.status, 200);
  const rl = (await c.raw('GET', '/apis/stable.example.com/v1')).json();
  const names = rl.resources.map((r: any) => r.name);
  assert.deepEqual(names, ['crontabs', 'crontabs/status', 'crontabs/scale']);
  const main = rl.resources[0];
  assert.equal(main.kind, 'CronTab');
  assert.equal(main.singularName, 'crontab');
  assert.equal(main.namespaced, true);
  assert.deepEqual(main.shortNames, ['ct']);
  assert.deepEqual(main.categories, ['all']);
  assert.deepEqual(main.verbs, ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch']);
  assert.equal(rl.resources[2].kind, 'Scale');
  assert.equal(rl.resources[2].group, 'autoscaling');
  const agg = (await c.raw('GET', '/apis', { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })).json();
  const ag = agg.items.find((x: any) => x.metadata.name === 'stable.example.com');
  assert.deepEqual(ag.versions.map((v: any) => v.version), ['v1', 'v1beta1']);
  assert.deepEqual(ag.versions[0].resources[0].subresources.map((s: any) => s.subresource), ['status', 'scale']);
  for (const v of ['1.33', '1.27']) {
    const out = ok(['api-resources', '--api-group=stable.example.com'], v);
    assert.match(out, /^crontabs\s+ct\s+stable\.example\.com\/v1\s+true\s+CronTab$/m, out);
  }
});

test('an APIService for each served group version, automanaged and local, as kube-aggregator registers them', async () => {
  const a = await until('the APIService', async () => {
    const r = await c.raw('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.stable.example.com');
    return r.status === 200 ? r.json() : undefined;
  });
  assert.deepEqual(a.metadata.labels, { 'kube-aggregator.kubernetes.io/automanaged': 'true' });
  assert.deepEqual(a.spec, { group: 'stable.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 });
  assert.deepEqual([a.status.conditions[0].type, a.status.conditions[0].status, a.status.conditions[0].reason], ['Available', 'True', 'Local']);
  assert.match(ok(['get', 'apiservices']), /^v1beta1\.stable\.example\.com\s+Local\s+True\s/m);
});

test('the CRDs\' APIServices are kept as kube-aggregator\'s autoregistration keeps them: deleted, it comes back; a changed spec is put back; a stray one of theirs goes', async () => {
  const P = '/apis/apiregistration.k8s.io/v1/apiservices';
  const first = (await c.raw('GET', `${P}/v1.stable.example.com`)).json();
  assert.equal((await c.raw('DELETE', `${P}/v1.stable.example.com`)).status, 200);
  await until('recreated', async () => {
    const r = await c.raw('GET', `${P}/v1.stable.example.com`);
    return r.status === 200 && r.json().metadata.uid !== first.metadata.uid ? true : undefined;
  });
  const p = await c.raw('PATCH', `${P}/v1beta1.stable.example.com`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { spec: { versionPriority: 7 } } });
  assert.equal(p.status, 200, p.text);
  await until('spec put back', async () => ((await c.raw('GET', `${P}/v1beta1.stable.example.com`)).json().spec.versionPriority === 100 ? true : undefined));
  const stray = await c.raw('POST', P, {
    body: { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1.stray.example.com', labels: { 'kube-aggregator.kubernetes.io/automanaged': 'true' } }, spec: { group: 'stray.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 } },
  });
  assert.equal(stray.status, 201, stray.text);
  await until('the stray deleted', async () => ((await c.raw('GET', `${P}/v1.stray.example.com`)).status === 404 ? true : undefined));
});

test('create: defaults applied, unknown fields pruned (reported per fieldValidation), preserved where the schema says so', async () => {
  const warn = await c.raw('POST', BASE, { body: cron('warned', { bogus: 1, extra: { anything: { goes: true } } }) });
  assert.equal(warn.status, 201, warn.text);
  assert.deepEqual(warn.headersDistinct['warning'], ['299 - "unknown field \\"spec.bogus\\""']);
  const o = warn.json();
  assert.equal(o.spec.replicas, 1);
  assert.equal(o.spec.mode, 'Slow');
  assert.equal(o.spec.bogus, undefined);
  assert.deepEqual(o.spec.extra, { anything: { goes: true } });
  assert.equal(o.metadata.generation, 1);
  const strict = await c.raw('POST', `${BASE}?fieldValidation=Strict`, { body: cron('strict', { bogus: 1 }) });
  assert.equal(strict.status, 400, strict.text);
  assert.equal(strict.json().message, 'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.bogus"');
  const ignore = await c.raw('POST', `${BASE}?fieldValidation=Ignore`, { body: cron('ignored', { bogus: 1 }) });
  assert.equal(ignore.status, 201);
  assert.equal(ignore.headersDistinct['warning'], undefined);
});

test('kubectl --validate=strict and --validate=warn on a custom resource with an unknown field', async () => {
  const doc = `apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: kv\n  namespace: ${NS}\nspec:\n  cronSpec: "* * * * *"\n  bogus: 1\n`;
  for (const v of ['1.33', '1.27']) {
    const r = kubectl(['create', '--validate=strict', '-f', '-'], v, doc);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /strict decoding error: unknown field "spec\.bogus"/);
  }
  const w = kubectl(['create', '--validate=warn', '-f', '-'], '1.33', doc);
  assert.equal(w.code, 0, w.stderr);
  assert.match(w.stderr, /Warning: unknown field "spec\.bogus"/);
});

test('validation: 422 with a cause per field, in Kubernetes\' wording', async () => {
  const bad = await c.raw('POST', BASE, { body: { ...cron('bad', { replicas: 20, mode: 'Medium', image: 'x'.repeat(31) }), spec: { replicas: 20, mode: 'Medium', image: 'x'.repeat(31) } } });
  assert.equal(bad.status, 422, bad.text);
  const st = bad.json();
  assert.equal(st.reason, 'Invalid');
  assert.equal(st.details.kind, 'CronTab');
  assert.equal(st.details.group, 'stable.example.com');
  const msgs = st.details.causes.map((x: any) => `${x.field}: ${x.message}`).sort();
  assert.deepEqual(msgs, [
    'spec.cronSpec: Required value',
    'spec.image: Too long: may not be more than 30 bytes',
    'spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"',
    'spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10',
  ]);
  const typ = await c.raw('POST', BASE, { body: cron('typ', { replicas: 'two', cronSpec: 'nope' }) });
  assert.equal(typ.status, 422);
  const tm = typ.json().message;
  assert.match(tm, /spec\.replicas: Invalid value: "string": spec\.replicas in body must be of type integer: "string"/);
  assert.match(tm, /spec\.cronSpec: Invalid value: "nope": spec\.cronSpec in body should match/);
  const name = await c.raw('POST', BASE, { body: { ...cron('Bad_Name') } });
  assert.equal(name.status, 422);
  assert.match(name.json().message, /metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
  // found by a randomized probe: without metadata (or with null), the create was a 500
  for (const metadata of [undefined, null]) {
    const { metadata: _, ...rest } = cron('nameless', { cronSpec: '* * * * */5', image: 'x' });
    const body = metadata === undefined ? rest : { ...rest, metadata };
    const r = await c.raw('POST', BASE, { body });
    assert.equal(r.status, 422, `metadata ${metadata}: ${r.text}`);
    assert.match(r.json().message, /^CronTab\.stable\.example\.com "" is invalid: metadata\.name: Required value: name or generateName is required/);
  }
});

test('get, list, watch with resourceVersions; other versions see apiVersion rewritten', async () => {
  const created = await c.raw('POST', BASE, { body: cron('rv') });
  assert.equal(created.status, 201);
  const rv = created.json().metadata.resourceVersion;
  const list = (await c.raw('GET', `${BASE}?resourceVersion=0`)).json();
  assert.equal(list.kind, 'CronTabList');
  assert.equal(list.apiVersion, 'stable.example.com/v1');
  assert.ok(list.items.some((x: any) => x.metadata.name === 'rv'));
  const exact = await c.raw('GET', `${BASE}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
  assert.equal(exact.status, 200);
  const all = (await c.raw('GET', '/apis/stable.example.com/v1/crontabs')).json();
  assert.ok(all.items.length >= 1);
  const betaResp = await c.raw('GET', `/apis/stable.example.com/v1beta1/namespaces/${NS}/crontabs/rv`);
  assert.deepEqual(betaResp.headersDistinct['warning'], ['299 - "stable.example.com/v1beta1 CronTab is deprecated; use stable.example.com/v1 CronTab"']);
  const beta = betaResp.json();
  assert.equal(beta.apiVersion, 'stable.example.com/v1beta1');
  assert.equal(beta.spec.cronSpec, '* * * * */5');
  const w = c.stream(`${BASE}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name=rv`);
  try {
    const p = await c.raw('PATCH', `${BASE}/rv`, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { image: 'v2' } }) });
    assert.equal(p.status, 200, p.text);
    const evs = await w.until((e) => e.some((x) => x.type === 'MODIFIED'));
    const m = evs.find((x) => x.type === 'MODIFIED');
    assert.equal(m.object.spec.image, 'v2');
    assert.equal(m.object.metadata.generation, 2);
  } finally {
    w.close();
  }
  const missing = await c.raw('GET', `${BASE}/nope`);
  assert.equal(missing.status, 404);
  assert.equal(missing.json().message, 'crontabs.stable.example.com "nope" not found');
});

test('a write through a version other than the storage one: stored pruned to the storage schema, answered and read with its defaults', async () => {
  const BETA = `/apis/stable.example.com/v1beta1/namespaces/${NS}/crontabs`;
  const made = await c.raw('POST', BETA, {
    body: { apiVersion: 'stable.example.com/v1beta1', kind: 'CronTab', metadata: { name: 'beta-w' }, spec: { cronSpec: '* * * * */5', image: 'x', foo: 'bar' }, top: 1 },
  });
  assert.equal(made.status, 201, made.text);
  // v1beta1 keeps unknown fields, v1 (storage) does not declare spec.foo or top; its defaults apply
  const want = { cronSpec: '* * * * */5', image: 'x', replicas: 1, mode: 'Slow' };
  assert.deepEqual(made.json().spec, want);
  assert.equal(made.json().top, undefined);
  assert.deepEqual((await c.raw('GET', `${BETA}/beta-w`)).json().spec, want);
  assert.deepEqual((await c.raw('GET', `${BASE}/beta-w`)).json().spec, want);
});

test('a field the schema no longer declares is pruned when objects are read again', async () => {
  const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const schema = (props: string[]) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: Object.fromEntries(props.map((p) => [p, { type: 'string' }])) } } } });
  const made = await c.raw('POST', crdPath, {
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.prune.example.com' },
      spec: { group: 'prune.example.com', scope: 'Namespaced', names: { plural: 'things', kind: 'Thing' }, versions: [{ name: 'v1', served: true, storage: true, schema: schema(['a', 'b']) }] },
    },
  });
  assert.equal(made.status, 201, made.text);
  const THINGS = `/apis/prune.example.com/v1/namespaces/${NS}/things`;
  await until('served', async () => (await c.raw('GET', THINGS)).status === 200);
  assert.equal((await c.raw('POST', THINGS, { body: { apiVersion: 'prune.example.com/v1', kind: 'Thing', metadata: { name: 't' }, spec: { a: '1', b: '2' } } })).status, 201);
  const crd = (await c.raw('GET', `${crdPath}/things.prune.example.com`)).json();
  crd.spec.versions[0].schema = schema(['a']);
  assert.equal((await c.raw('PUT', `${crdPath}/things.prune.example.com`, { body: crd })).status, 200);
  const spec = await until('b pruned on read', async () => {
    const o = (await c.raw('GET', `${THINGS}/t`)).json();
    return o.spec && o.spec.b === undefined ? o.spec : undefined;
  });
  assert.deepEqual(spec, { a: '1' });
  await c.raw('DELETE', `${crdPath}/things.prune.example.com`);
});

test('errors of custom resources as their handler words them', async () => {
  // a subresource the CRD does not enable is an absent object; a field selector it does not declare
  const sub = await c.raw('GET', `/apis/stable.example.com/v1beta1/namespaces/${NS}/crontabs/rv/status`);
  assert.equal(sub.status, 404);
  assert.deepEqual(sub.json().details, { name: 'rv', group: 'stable.example.com', kind: 'crontabs' });
  const sel = await c.raw('GET', `/apis/stable.example.com/v1beta1/namespaces/${NS}/crontabs?fieldSelector=spec.mode%3DFast`);
  assert.equal(sel.status, 400);
  assert.equal(sel.json().message, 'field label not supported: spec.mode');
});

test('/metrics counts the stored custom resources', async () => {
  const text = (await c.raw('GET', '/metrics')).text;
  const m = /^apiserver_storage_objects\{resource="crontabs\.stable\.example\.com"\} (\d+)$/m.exec(text);
  assert.ok(m && Number(m[1]) > 0, text.split('\n').filter((l) => l.includes('storage_objects')).join('\n'));
});

test('patch: JSON patch, merge patch; strategic merge patch is 415 as for every custom resource', async () => {
  await c.raw('POST', BASE, { body: cron('p') });
  const jp = await c.raw('PATCH', `${BASE}/p`, { headers: { 'Content-Type': 'application/json-patch+json' }, body: JSON.stringify([{ op: 'replace', path: '/spec/replicas', value: 4 }]) });
  assert.equal(jp.status, 200, jp.text);
  assert.equal(jp.json().spec.replicas, 4);
  const smp = await c.raw('PATCH', `${BASE}/p`, { headers: { 'Content-Type': 'application/strategic-merge-patch+json' }, body: '{"spec":{"replicas":5}}' });
  assert.equal(smp.status, 415);
  assert.equal(smp.json().reason, 'UnsupportedMediaType');
  assert.equal(smp.json().message, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
  const bad = await c.raw('PATCH', `${BASE}/p`, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"spec":{"replicas":50}}' });
  assert.equal(bad.status, 422);
});

test('kubectl patch without --type on a custom resource: keelson patch says what kubectl says', async () => {
  await c.raw('POST', BASE, { body: cron('kp') });
  const args = ['patch', 'crontab', 'kp', '-n', NS, '-p', '{"spec":{"replicas":2}}'];
  const env = { PATH: process.env.PATH ?? '', HOME: c.home, KUBECONFIG: c.kubeconfig };
  const a = spawnSync(kubectlBinary('1.33'), args, { env, encoding: 'utf8' });
  const b = spawnSync(process.execPath, [KEELSON, ...args], { env, encoding: 'utf8' });
  assert.equal(a.status, 1);
  assert.match(a.stderr, /application\/strategic-merge-patch\+json is not supported by stable\.example\.com\/v1, Kind=CronTab/);
  assert.deepEqual({ code: b.status, stdout: b.stdout, stderr: b.stderr }, { code: a.status, stdout: a.stdout, stderr: a.stderr });
  const m = ok(['patch', 'ct', 'kp', '-n', NS, '--type=merge', '-p', '{"spec":{"replicas":2}}']);
  assert.match(m, /crontab\.stable\.example\.com\/kp patched/);
});

test('server-side apply creates and updates, with managedFields; kubectl apply (client- and server-side)', async () => {
  const body = `apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: ssa\n  namespace: ${NS}\nspec:\n  cronSpec: "*/2 * * * *"\n  replicas: 2\n`;
  const a = await c.raw('PATCH', `${BASE}/ssa?fieldManager=tester`, { headers: { 'Content-Type': 'application/apply-patch+yaml' }, body });
  assert.equal(a.status, 201, a.text);
  const o = a.json();
  assert.equal(o.spec.replicas, 2);
  assert.equal(o.spec.mode, 'Slow');
  assert.equal(o.metadata.managedFields[0].manager, 'tester');
  assert.equal(o.metadata.managedFields[0].operation, 'Apply');
  assert.ok(o.metadata.managedFields[0].fieldsV1['f:spec']['f:cronSpec']);
  const conflict = await c.raw('PATCH', `${BASE}/ssa?fieldManager=other`, { headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: body.replace('replicas: 2', 'replicas: 3') });
  assert.equal(conflict.status, 409, conflict.text);
  const yaml = body.replace('name: ssa', 'name: kapply');
  for (const v of ['1.33', '1.27']) {
    assert.match(ok(['apply', '-f', '-'], v, yaml), /crontab\.stable\.example\.com\/kapply (created|unchanged|configured)/);
    assert.match(ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], v, yaml.replace('replicas: 2', 'replicas: 3')), /serverside-applied/);
  }
  const got = (await c.raw('GET', `${BASE}/kapply`)).json();
  assert.equal(got.spec.replicas, 3);
});

test('server-side apply merges x-kubernetes-list-type map lists by their keys, one owner per item', async () => {
  const doc = (port: string, n: number) => `apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: lm\n  namespace: ${NS}\nspec:\n  cronSpec: "* * * * *"\n  ports:\n  - name: ${port}\n    port: ${n}\n`;
  const a = await c.raw('PATCH', `${BASE}/lm?fieldManager=a`, { headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: doc('http', 80) });
  assert.equal(a.status, 201, a.text);
  const b = await c.raw('PATCH', `${BASE}/lm?fieldManager=b&force=true`, { headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: doc('https', 443) });
  assert.equal(b.status, 200, b.text);
  const o = b.json();
  assert.deepEqual(o.spec.ports, [{ name: 'http', port: 80 }, { name: 'https', port: 443 }]);
  const mfA = o.metadata.managedFields.find((m: any) => m.manager === 'a');
  assert.ok(mfA.fieldsV1['f:spec']['f:ports']['k:{"name":"http"}'], JSON.stringify(mfA.fieldsV1));
  // a dropped item goes; the other manager's stays
  const a2 = await c.raw('PATCH', `${BASE}/lm?fieldManager=a`, { headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: doc('http', 80).replace(/  ports:\n[\s\S]*$/, '') });
  assert.equal(a2.status, 200, a2.text);
  assert.deepEqual(a2.json().spec.ports, [{ name: 'https', port: 443 }]);
});

test('server-side apply of a field the structural schema lacks fails whatever the fieldValidation, as the field manager fails it', async () => {
  const body = `apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: ssa-unknown\n  namespace: ${NS}\nspec:\n  cronSpec: "* * * * *"\n  bogus: 1\n`;
  for (const fv of ['Strict', 'Warn', 'Ignore', '']) {
    const r = await c.raw('PATCH', `${BASE}/ssa-unknown?fieldManager=t${fv ? `&fieldValidation=${fv}` : ''}`, { headers: { 'Content-Type': 'application/apply-patch+yaml' }, body });
    assert.equal(r.status, 400, `${fv}: ${r.text}`);
    assert.equal(r.json().message, `failed to create typed patch object (${NS}/ssa-unknown; stable.example.com/v1, Kind=CronTab): .spec.bogus: field not declared in schema`, fv);
  }
  assert.equal((await c.raw('GET', `${BASE}/ssa-unknown`)).status, 404);
  // without the undeclared field, the same apply creates the object
  const ok = await c.raw('PATCH', `${BASE}/ssa-unknown?fieldManager=t`, { headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: body.replace('  bogus: 1\n', '') });
  assert.equal(ok.status, 201, ok.text);
});

test('status and scale subresources: generation moves with spec only; kubectl scale', async () => {
  await c.raw('POST', BASE, { body: cron('sc') });
  const st = await c.raw('PATCH', `${BASE}/sc/status`, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { replicas: 9 }, status: { replicas: 1, labelSelector: 'app=sc' } }) });
  assert.equal(st.status, 200, st.text);
  assert.equal(st.json().status.replicas, 1);
  assert.equal(st.json().spec.replicas, 1, 'a status write leaves spec alone');
  assert.equal(st.json().metadata.generation, 1);
  const main = await c.raw('PATCH', `${BASE}/sc`, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ status: { replicas: 7 } }) });
  assert.equal(main.json().status.replicas, 1, 'the main resource leaves status alone');
  assert.equal(main.json().metadata.generation, 1);
  const scale = (await c.raw('GET', `${BASE}/sc/scale`)).json();
  assert.deepEqual({ kind: scale.kind, apiVersion: scale.apiVersion, spec: scale.spec, status: scale.status }, { kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 1 }, status: { replicas: 1, selector: 'app=sc' } });
  for (const v of ['1.33', '1.27']) assert.match(ok(['scale', 'crontab', 'sc', '-n', NS, `--replicas=${v === '1.33' ? 3 : 4}`], v), /crontab\.stable\.example\.com\/sc scaled/);
  const after = (await c.raw('GET', `${BASE}/sc`)).json();
  assert.equal(after.spec.replicas, 4);
  assert.equal(after.metadata.generation, 3);
  const fresh = (await c.raw('GET', `${BASE}/sc/scale`)).json();
  const tooMany = await c.raw('PUT', `${BASE}/sc/scale`, { body: { ...fresh, spec: { replicas: 11 } } });
  assert.equal(tooMany.status, 422, tooMany.text);
});

test('kubectl get: printer columns (wide adds priority 1), every name of the kind, category all', async () => {
  await c.raw('POST', BASE, { body: cron('cols', { replicas: 2, mode: 'Fast' }) });
  for (const v of ['1.33', '1.27']) {
    const out = ok(['get', 'crontabs', 'cols', '-n', NS], v);
    assert.match(out, /^NAME\s+SPEC\s+REPLICAS\s+AGE\n/, out);
    assert.match(out, /^cols\s+\* \* \* \* \*\/5\s+2\s+\d+s$/m, out);
    const wide = ok(['get', 'crontabs', 'cols', '-n', NS, '-o', 'wide'], v);
    assert.match(wide, /^NAME\s+SPEC\s+REPLICAS\s+MODE\s+AGE\n/, wide);
    assert.match(wide, /\s2\s+Fast\s+\d+s$/m, wide);
    for (const name of ['crontab', 'ct', 'CronTab', 'crontabs.stable.example.com', 'crontabs.v1beta1.stable.example.com']) {
      assert.match(ok(['get', name, 'cols', '-n', NS, '-o', 'name'], v), /^crontab\.stable\.example\.com\/cols$/m);
    }
    const all = ok(['get', 'all', '-n', NS], v);
    assert.match(all, /crontab\.stable\.example\.com\/cols/);
  }
  const t = (await c.raw('GET', `${BASE}/cols`, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
  assert.deepEqual(
    t.columnDefinitions.map((d: any) => [d.name, d.type, d.priority]),
    [
      ['Name', 'string', 0],
      ['Spec', 'string', 0],
      ['Replicas', 'integer', 0],
      ['Mode', 'string', 1],
      ['Age', 'date', 0],
    ],
  );
  assert.deepEqual(t.rows[0].cells.slice(0, 4), ['cols', '* * * * */5', 2, 'Fast']);
});

test('selectableFields: field selectors on a custom resource\'s own fields', async () => {
  await c.raw('POST', BASE, { body: cron('fast1', { mode: 'Fast' }) });
  const l = (await c.raw('GET', `${BASE}?fieldSelector=spec.mode%3DFast`)).json();
  assert.ok(l.items.length >= 1);
  assert.ok(l.items.every((x: any) => x.spec.mode === 'Fast'));
  assert.match(ok(['get', 'ct', '-n', NS, '--field-selector', 'spec.mode=Fast', '-o', 'name']), /crontab\.stable\.example\.com\/fast1/);
  const bad = await c.raw('GET', `${BASE}?fieldSelector=spec.image%3Dx`);
  assert.equal(bad.status, 400);
});

test('delete and deletecollection', async () => {
  await c.raw('POST', BASE, { body: cron('del1') });
  const d = await c.raw('DELETE', `${BASE}/del1`);
  assert.equal(d.status, 200, d.text);
  assert.equal((await c.raw('GET', `${BASE}/del1`)).status, 404);
  await c.raw('POST', BASE, { body: { ...cron('dc1'), metadata: { name: 'dc1', namespace: NS, labels: { batch: 'x' } } } });
  await c.raw('POST', BASE, { body: { ...cron('dc2'), metadata: { name: 'dc2', namespace: NS, labels: { batch: 'x' } } } });
  const dc = await c.raw('DELETE', `${BASE}?labelSelector=batch%3Dx`);
  assert.equal(dc.status, 200, dc.text);
  const left = (await c.raw('GET', `${BASE}?labelSelector=batch%3Dx`)).json();
  assert.equal(left.items.length, 0);
});

test('a second CRD with a name taken in its group is not accepted', async () => {
  const other = CRD_YAML.replace('name: crontabs.stable.example.com', 'name: crontables.stable.example.com').replace('plural: crontabs', 'plural: crontables').replace('singular: crontab', 'singular: crontable').replace('kind: CronTab', 'kind: CronTable').replace('shortNames: [ct]', 'shortNames: [ct2]');
  ok(['apply', '-f', '-'], '1.33', other.replace('singular: crontable', 'singular: crontab'));
  const crd = await until('NamesAccepted', async () => {
    const o = (await c.raw('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontables.stable.example.com')).json();
    return o.status?.conditions?.find((x: any) => x.type === 'NamesAccepted') ? o : undefined;
  });
  const cond = Object.fromEntries(crd.status.conditions.map((x: any) => [x.type, x]));
  assert.deepEqual([cond.NamesAccepted.status, cond.NamesAccepted.reason, cond.NamesAccepted.message], ['False', 'SingularConflict', '"crontab" is already in use']);
  assert.equal(cond.Established.status, 'False');
  // the names that are free are accepted all the same (the naming controller's partial acceptance)
  assert.deepEqual(crd.status.acceptedNames, { plural: 'crontables', shortNames: ['ct2'], kind: 'CronTable', listKind: 'CronTableList', categories: ['all'] });
  assert.equal((await c.raw('GET', `/apis/stable.example.com/v1/namespaces/${NS}/crontables`)).status, 404);
  ok(['delete', 'crd', 'crontables.stable.example.com']);
});

test('an established CRD that asks for a taken short name keeps serving its accepted names; discovery shows those', async () => {
  const path = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com';
  const taken = CRD_YAML.replace('name: crontabs.stable.example.com', 'name: gizmos.stable.example.com').replace('plural: crontabs', 'plural: gizmos').replace('singular: crontab', 'singular: gizmo').replace('kind: CronTab', 'kind: Gizmo').replace('shortNames: [ct]', 'shortNames: [gz]');
  ok(['apply', '-f', '-'], '1.33', taken);
  ok(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/gizmos.stable.example.com']);
  const crd = (await c.raw('GET', path)).json();
  crd.spec.names.shortNames = ['ct', 'gz'];
  crd.spec.names.categories = ['all', 'newcat'];
  assert.equal((await c.raw('PUT', path, { body: crd })).status, 200);
  const after = await until('the conflict', async () => {
    const o = (await c.raw('GET', path)).json();
    return o.status.conditions.find((x: any) => x.type === 'NamesAccepted')?.status === 'False' ? o : undefined;
  });
  const names = after.status.conditions.find((x: any) => x.type === 'NamesAccepted');
  assert.deepEqual([names.reason, names.message], ['ShortNamesConflict', '"gz" is already in use']);
  assert.deepEqual(after.status.acceptedNames.shortNames, ['ct']);
  assert.deepEqual(after.status.acceptedNames.categories, ['all', 'newcat']);
  const res = await until('discovery', async () => {
    const list = (await c.raw('GET', '/apis/stable.example.com/v1')).json();
    const r = list.resources.find((x: any) => x.name === 'crontabs');
    return r?.categories?.includes('newcat') ? r : undefined;
  });
  assert.deepEqual(res.shortNames, ['ct']);
  // put back
  crd.spec.names.shortNames = ['ct'];
  crd.spec.names.categories = ['all'];
  const back = (await c.raw('GET', path)).json();
  back.spec.names = crd.spec.names;
  assert.equal((await c.raw('PUT', path, { body: back })).status, 200);
  ok(['delete', 'crd', 'gizmos.stable.example.com']);
});

test('a CRD in a Kubernetes community group needs the API approval annotation; its condition says which', async () => {
  const crd = (annotations?: Record<string, string>) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gizmos.x.k8s.io', ...(annotations ? { annotations } : {}) },
    spec: { group: 'x.k8s.io', scope: 'Cluster', names: { plural: 'gizmos', kind: 'Gizmo' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] },
  });
  const missing = await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd() });
  assert.equal(missing.status, 422, missing.text);
  assert.match(missing.json().message, /metadata\.annotations\[api-approved\.kubernetes\.io\]: Required value: protected groups must have approval annotation/);
  const bypass = await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd({ 'api-approved.kubernetes.io': 'unapproved, testing only' }) });
  assert.equal(bypass.status, 201, bypass.text);
  const cond = await until('the approval condition', async () => {
    const o = (await c.raw('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.x.k8s.io')).json();
    return o.status?.conditions?.find((x: any) => x.type === 'KubernetesAPIApprovalPolicyConformant');
  });
  assert.deepEqual([cond.status, cond.reason, cond.message], ['False', 'UnapprovedAnnotation', 'not approved: "unapproved, testing only"']);
  assert.equal((await c.raw('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.x.k8s.io')).status, 200);
});

test('a bad CRD is refused with Kubernetes\' wording', async () => {
  const bad = await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'gadgets', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: { properties: { spec: { type: 'object' } } } } }] },
    },
  });
  assert.equal(bad.status, 422, bad.text);
  const msgs = bad.json().details.causes.map((x: any) => `${x.field}: ${x.message}`);
  assert.ok(msgs.includes('metadata.name: Invalid value: "widgets.example.com": must be spec.names.plural+"."+spec.group'), msgs.join('\n'));
  assert.ok(msgs.some((m: string) => m.startsWith('spec.versions: Invalid value') && m.endsWith('must have exactly one version marked as storage version')), msgs.join('\n'));
  assert.ok(msgs.includes('spec.versions[0].schema.openAPIV3Schema.type: Required value: must not be empty at the root'), msgs.join('\n'));
  // selectableFields: a field of the schema, of a scalar type, named once, not under metadata
  const sel = await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'sels.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'sels', kind: 'Sel' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'string' }, obj: { type: 'object' } } } } } },
            selectableFields: [{ jsonPath: '.spec.missing' }, { jsonPath: '.spec.obj' }, { jsonPath: '.spec.n' }, { jsonPath: '.spec.n' }, { jsonPath: 'spec.n' }, { jsonPath: '.spec.n[0]' }],
          },
        ],
      },
    },
  });
  assert.equal(sel.status, 422, sel.text);
  assert.deepEqual(
    sel.json().details.causes.map((x: any) => `${x.field}: ${x.message}`),
    [
      'spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.missing": is an invalid path: does not refer to a valid field',
      'spec.versions[0].selectableFields[1].jsonPath: Invalid value: ".spec.obj": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
      'spec.versions[0].selectableFields[3].jsonPath: Duplicate value: ".spec.n"',
      'spec.versions[0].selectableFields[4].jsonPath: Invalid value: "spec.n": is an invalid path: expected [ or . but got: spec',
      'spec.versions[0].selectableFields[5].jsonPath: Invalid value: ".spec.n[0]": is an invalid path: array notation is not allowed',
    ],
  );
});

test('OpenAPI v3 and v2 carry the custom resource schemas: kubectl explain', async () => {
  const index = (await c.raw('GET', '/openapi/v3')).json();
  assert.ok(index.paths['apis/stable.example.com/v1'], Object.keys(index.paths).join(' '));
  const doc = (await c.raw('GET', '/openapi/v3/apis/stable.example.com/v1')).json();
  const ct = doc.components.schemas['com.example.stable.v1.CronTab'];
  assert.deepEqual(ct['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
  assert.deepEqual(ct.properties.metadata.allOf, [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
  assert.deepEqual(ct.properties.spec.required, ['cronSpec']);
  assert.equal(ct.properties.spec.properties.replicas.maximum, 10);
  assert.ok(doc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']);
  assert.ok(doc.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale']);
  const v2 = (await c.raw('GET', '/openapi/v2')).json();
  assert.equal(v2.definitions['com.example.stable.v1.CronTab'].properties.metadata.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  assert.ok(v2.definitions['com.example.stable.v1beta1.CronTabList']);
  for (const v of ['1.33', '1.27']) {
    const out = ok(['explain', 'crontab.spec'], v);
    assert.match(out, /KIND:\s+CronTab/);
    assert.match(out, /What to run and when\./);
    assert.match(out, /cronSpec\s+<string> -required-\n\s+The schedule, in cron format\./);
    assert.match(ok(['explain', 'ct.spec.replicas'], v), /FIELD:\s+replicas <integer>/);
  }
});

test('a CRD update is served at once: a new column, a new storage version recorded in storedVersions', async () => {
  await c.raw('POST', BASE, { body: cron('upd') });
  const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com';
  const crd = (await c.raw('GET', crdPath)).json();
  const v1 = crd.spec.versions.find((v: any) => v.name === 'v1');
  v1.additionalPrinterColumns.splice(1, 0, { name: 'Image', type: 'string', jsonPath: '.spec.image' });
  v1.schema.openAPIV3Schema.properties.spec.properties.zone = { type: 'string', default: 'zone-a' };
  const put1 = await c.raw('PUT', crdPath, { body: crd });
  assert.equal(put1.status, 200, put1.text);
  // objects stored before get the storage version's new default when read
  await until('the new default', async () => (await c.raw('GET', `${BASE}/upd`)).json().spec?.zone === 'zone-a');
  const crd2 = put1.json();
  crd2.spec.versions.find((v: any) => v.name === 'v1').storage = false;
  crd2.spec.versions.find((v: any) => v.name === 'v1beta1').storage = true;
  const put = await c.raw('PUT', crdPath, { body: crd2 });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(put.json().status.storedVersions, ['v1', 'v1beta1']);
  // a version still in storedVersions cannot leave spec.versions
  const crd3 = put.json();
  crd3.spec.versions = crd3.spec.versions.filter((v: any) => v.name !== 'v1');
  const dropped = await c.raw('PUT', crdPath, { body: crd3 });
  assert.equal(dropped.status, 422, dropped.text);
  assert.ok(
    dropped.json().details.causes.some(
      (x: any) =>
        x.field === 'status.storedVersions[0]' &&
        x.message ===
          'Invalid value: "v1": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions',
    ),
    dropped.text,
  );
  const out = await until('the new column', () => {
    const r = kubectl(['get', 'crontab', 'upd', '-n', NS]);
    return /^NAME\s+SPEC\s+IMAGE\s+REPLICAS\s+AGE$/m.test(r.stdout) ? r.stdout : undefined;
  });
  assert.match(out, /^upd\s+\* \* \* \* \*\/5\s+my-cron-image\s+1\s/m);
  // written now through v1: stored as v1beta1, still read as v1
  const p = await c.raw('PATCH', `${BASE}/upd`, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"spec":{"image":"again"}}' });
  assert.equal(p.status, 200, p.text);
  assert.equal(p.json().apiVersion, 'stable.example.com/v1');
  assert.equal((await c.raw('GET', `/apis/stable.example.com/v1beta1/namespaces/${NS}/crontabs/upd`)).json().spec.image, 'again');
});

test('deleting a namespace removes its custom resources', async () => {
  const ns = 'crd-e2e-gone';
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status, 201);
  const created = await c.raw('POST', `/apis/stable.example.com/v1/namespaces/${ns}/crontabs`, { body: { ...cron('inside'), metadata: { name: 'inside', namespace: ns } } });
  assert.equal(created.status, 201, created.text);
  assert.equal((await c.raw('DELETE', `/api/v1/namespaces/${ns}`)).status, 200);
  await until('namespace gone', async () => (await c.raw('GET', `/api/v1/namespaces/${ns}`)).status === 404, 30_000);
  assert.equal((await c.raw('GET', `/apis/stable.example.com/v1/namespaces/${ns}/crontabs/inside`)).status, 404);
});

test('restart: the CRD is served again with its objects', async () => {
  await c.raw('POST', BASE, { body: cron('persist') });
  await c.stopProcess();
  await c.launch();
  const got = await c.raw('GET', `${BASE}/persist`);
  assert.equal(got.status, 200, got.text);
  assert.equal(got.json().spec.replicas, 1);
  assert.match(ok(['get', 'ct', 'persist', '-n', NS]), /^persist\s/m);
});

test('deleting the CRD removes its custom resources first (finalizer, Terminating), then stops serving', async () => {
  // an object held by a finalizer of its own keeps the CRD until it goes
  const held = await c.raw('POST', BASE, { body: { ...cron('held'), metadata: { name: 'held', namespace: NS, finalizers: ['example.com/hold'] } } });
  assert.equal(held.status, 201, held.text);
  const w = c.stream('/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=1&fieldSelector=metadata.name=crontabs.stable.example.com');
  try {
    const d = await c.raw('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com');
    assert.equal(d.status, 200, d.text);
    const marked = d.json();
    assert.ok(marked.metadata.deletionTimestamp);
    assert.deepEqual(marked.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
    const term = marked.status.conditions.find((x: any) => x.type === 'Terminating');
    assert.deepEqual([term.status, term.reason], ['True', 'InstanceDeletionPending']);
    await until('held marked for deletion', async () => (await c.raw('GET', `${BASE}/held`)).json().metadata?.deletionTimestamp);
    const refused = await c.raw('POST', BASE, { body: cron('late') });
    assert.equal(refused.status, 405, refused.text);
    assert.equal(refused.json().message, 'create not allowed while custom resource definition is terminating');
    assert.equal((await c.raw('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com')).status, 200);
    const release = await c.raw('PATCH', `${BASE}/held`, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"metadata":{"finalizers":null}}' });
    assert.equal(release.status, 200, release.text);
    const evs = await w.until((e) => e.some((x) => x.type === 'DELETED'), 20_000);
    const reasons = evs.map((e) => e.object.status?.conditions?.find((x: any) => x.type === 'Terminating')?.reason).filter(Boolean);
    assert.ok(reasons.includes('InstanceDeletionInProgress'), reasons.join(','));
  } finally {
    w.close();
  }
  assert.equal((await c.raw('GET', `${BASE}`)).status, 404);
  assert.equal((await c.raw('GET', '/apis/stable.example.com/v1')).status, 404);
  const groups = (await c.raw('GET', '/apis')).json();
  assert.ok(!groups.groups.some((x: any) => x.name === 'stable.example.com'));
  await until('APIServices gone', async () => (await c.raw('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.stable.example.com')).status === 404);
  // created again: no object of the old one is left in storage
  ok(['apply', '-f', '-'], '1.33', CRD_YAML);
  ok(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/crontabs.stable.example.com']);
  const list = (await c.raw('GET', '/apis/stable.example.com/v1/crontabs')).json();
  assert.deepEqual(list.items, []);
});

test('printer column cells as Kubernetes makes them: date columns parse strict RFC 3339 ("" and "null" are <unknown>), string columns print numbers as Go and objects as Go JSON', async () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'cells.print.example.com' },
    spec: {
      group: 'print.example.com',
      scope: 'Namespaced',
      names: { plural: 'cells', singular: 'cell', kind: 'Cell', listKind: 'CellList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
          additionalPrinterColumns: [
            { name: 'When', type: 'date', jsonPath: '.spec.when' },
            { name: 'Num', type: 'string', jsonPath: '.spec.num' },
            { name: 'Obj', type: 'string', jsonPath: '.spec.obj' },
          ],
        },
      ],
    },
  };
  const made = await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
  assert.equal(made.status, 201, made.text);
  const base = `/apis/print.example.com/v1/namespaces/${NS}/cells`;
  await until('cells served', async () => (await c.raw('GET', base)).status === 200);
  const cases: [string, any, unknown[]][] = [
    ['day', { when: '2024-01-01', num: 1234567.5, obj: { b: ['<x&y>'], a: 1 } }, ['<invalid>', '1.2345675e+06', '{"a":1,"b":["\\u003cx\\u0026y\\u003e"]}']],
    ['empty', { when: '', num: 0.00001, obj: true }, ['<unknown>', '1e-05', 'true']],
    ['null', { when: 'null', num: 42, obj: 'text' }, ['<unknown>', '42', 'text']],
  ];
  for (const [name, spec, cells] of cases) {
    const r = await c.raw('POST', base, { body: { apiVersion: 'print.example.com/v1', kind: 'Cell', metadata: { name }, spec } });
    assert.equal(r.status, 201, r.text);
    const t = (await c.raw('GET', `${base}/${name}`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
    assert.deepEqual(t.rows[0].cells.slice(1), cells, name);
  }
});

test('every served version of a custom resource shows the storage version\'s storageVersionHash', async () => {
  const crd = (await c.raw('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com')).json();
  const storage = crd.spec.versions.find((v: any) => v.storage).name;
  const want = createHash('sha256').update(`stable.example.com/${storage}/${crd.spec.names.kind}`).digest().subarray(0, 8).toString('base64');
  for (const v of crd.spec.versions.filter((x: any) => x.served)) {
    const r = (await c.raw('GET', `/apis/stable.example.com/${v.name}`)).json();
    assert.equal(r.resources.find((x: any) => x.name === 'crontabs').storageVersionHash, want, v.name);
  }
});
