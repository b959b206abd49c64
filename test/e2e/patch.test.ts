// `keelson patch` against `kubectl patch` (1.33), differentially: for each case the objects are
// (re)created, kubectl patch runs, the objects are recreated exactly as before, keelson patch
// runs with the same arguments, KUBECONFIG and HOME, and stdout, stderr and the exit code must
// be the same. Where they differ, kubectl is right.
//
// What is normalized before comparing, and nothing else: the values that differ between two
// creations of an object (uid, resourceVersion, creationTimestamp, managedFields times), klog's
// line headers (time, pid, source file), and the program name in help and usage hints
// (`kubectl patch --help` / `keelson patch --help`).
//
// Both tools share the HOME of the cluster, so keelson also reads the discovery cache kubectl
// wrote and the other way round.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync, existsSync, readdirSync, rmSync, utimesSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCluster, KEELSON, kubectlBinary, type Cluster, type RunResult } from './harness.js';

let c: Cluster;
const NS = 'patch-e2e';

type Obj = Record<string, any>;

function run(bin: 'kubectl' | 'keelson', args: string[], opts: { input?: string; env?: Record<string, string> } = {}): RunResult {
  const env = { PATH: process.env.PATH ?? '', HOME: c.home, KUBECONFIG: c.kubeconfig, ...opts.env };
  const cmd = bin === 'kubectl' ? kubectlBinary('1.33') : process.execPath;
  const argv = bin === 'kubectl' ? ['patch', ...args] : [KEELSON, 'patch', ...args];
  const r = spawnSync(cmd, argv, { env, input: opts.input ?? '', encoding: 'utf8', timeout: 60_000, cwd: c.home });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** Values that differ between two creations of the same object, and klog headers. */
function normalize(s: string, bin: 'kubectl' | 'keelson'): string {
  let out = s
    .replace(/^([IWEF])\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ [^\]\s]+\] /gm, '$1 <klog>] ')
    .replace(/"(resourceVersion|uid|creationTimestamp|time)":(\s?)"[^"]*"/g, '"$1":$2"<v>"')
    .replace(/^(\s*(?:- )?)(resourceVersion|uid|creationTimestamp|time): .*$/gm, '$1$2: <v>')
    .replace(/\b(resourceVersion|uid|creationTimestamp|time):[^ \]]+/g, '$1:<v>')
    .replace(/\\"(resourceVersion|uid|creationTimestamp|time)\\":\\"[^\\]*\\"/g, '\\"$1\\":\\"<v>\\"');
  if (bin === 'kubectl') out = out.replace(/\bkubectl(?:\.1\.33)? (patch|options|get)\b/g, 'keelson $1').replace(/"kubectl options"/g, '"keelson options"');
  return out;
}

// ── objects ──────────────────────────────────────────────────────────────────

const cm = (name: string, data: Record<string, string> = { a: '1' }, ns = NS): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { app: 'patch' } }, data });

const deploy = (name: string, replicas = 1): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NS },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { schedulerName: 'manual', containers: [{ name: 'web', image: 'nginx:1.25' }, { name: 'side', image: 'busybox:1.36' }] } },
  },
});

const pod = (name: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS },
  spec: { schedulerName: 'manual', containers: [{ name: 'web', image: 'nginx:1.25' }, { name: 'side', image: 'busybox:1.36' }] },
});

const node = (name: string): Obj => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { zone: 'a' } }, spec: {} });

// a fixed cluster IP: an allocated one would differ between the two creations
const svc = (name: string, clusterIP: string): Obj => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS }, spec: { clusterIP, selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }] } });

function pathOf(o: Obj, withName: boolean): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const plural = ({ ConfigMap: 'configmaps', Deployment: 'deployments', Pod: 'pods', Node: 'nodes', Service: 'services', Secret: 'secrets', Namespace: 'namespaces' } as Record<string, string>)[o.kind]!;
  let p = group ? `/apis/${group}/${version}` : `/api/${version}`;
  if (o.metadata.namespace) p += `/namespaces/${o.metadata.namespace}`;
  p += `/${plural}`;
  if (withName) p += `/${o.metadata.name}`;
  return p;
}

/** Deletes (waiting until gone) and creates the objects, so each tool starts from the same state. */
async function recreate(objs: Obj[]): Promise<void> {
  for (const o of objs) {
    const del = await c.raw('DELETE', pathOf(o, true) + '?gracePeriodSeconds=0');
    assert.ok(del.status === 200 || del.status === 202 || del.status === 404, `delete ${pathOf(o, true)}: ${del.status} ${del.text}`);
    for (let i = 0; i < 200; i++) {
      const g = await c.raw('GET', pathOf(o, true));
      if (g.status === 404) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    // a field manager that sorts before kubectl-patch, so managedFields keep one order whether
    // or not the patch lands in the same second as the creation
    const r = await c.raw('POST', pathOf(o, false) + '?fieldManager=e2e-setup', { body: o });
    assert.equal(r.status, 201, `create ${pathOf(o, false)}: ${r.text}`);
    if (o.status) {
      const cur = r.json();
      const s = await c.raw('PUT', pathOf(o, true) + '/status?fieldManager=e2e-setup', { body: { ...cur, status: o.status } });
      assert.equal(s.status, 200, `status ${pathOf(o, true)}: ${s.text}`);
    }
  }
}

interface Case {
  name: string;
  args: string[];
  objects?: Obj[];
  input?: string;
  env?: Record<string, string>;
  /** also compare the object on the server after each run (JSON of GET, normalized) */
  checkState?: Obj;
  /** compare stderr's lines in sorted order (kubectl prints some in Go's map order) */
  unorderedStderr?: boolean;
}

async function state(o: Obj): Promise<string> {
  const r = await c.raw('GET', pathOf(o, true));
  if (r.status !== 200) return `${r.status}`;
  const j = r.json();
  delete j.metadata.managedFields;
  return normalize(JSON.stringify(j), 'keelson');
}

async function differential(k: Case): Promise<void> {
  await recreate(k.objects ?? []);
  const a = run('kubectl', k.args, { input: k.input, env: k.env });
  const stateA = k.checkState ? await state(k.checkState) : '';
  await recreate(k.objects ?? []);
  const b = run('keelson', k.args, { input: k.input, env: k.env });
  const stateB = k.checkState ? await state(k.checkState) : '';
  const errs = (s: string) => (k.unorderedStderr ? s.split('\n').sort().join('\n') : s);
  assert.deepEqual(
    { code: b.code, stdout: normalize(b.stdout, 'keelson'), stderr: errs(normalize(b.stderr, 'keelson')), state: stateB },
    { code: a.code, stdout: normalize(a.stdout, 'kubectl'), stderr: errs(normalize(a.stderr, 'kubectl')), state: stateA },
    `patch ${k.args.join(' ')}`,
  );
}

let files: string;

before(async () => {
  // (the deployment controller would make each run's Deployment state depend on timing)
  c = await startCluster({ args: ['--controllers=*,-deployment-controller'] });
  const ns = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  assert.equal(ns.status, 201, ns.text);
  files = join(c.home, 'files');
  mkdirSync(join(files, 'dir', 'sub'), { recursive: true });
  mkdirSync(join(files, 'kz', 'base'), { recursive: true });
  mkdirSync(join(files, 'kz', 'over'), { recursive: true });
  const w = (p: string, s: string) => writeFileSync(join(files, p), s);
  w('cm-f.yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-f\n  namespace: ${NS}\ndata:\n  a: "1"\n`);
  w('cm-nons.yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-nons\ndata:\n  a: "1"\n`);
  w('cm-other-ns.yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-f\n  namespace: other\ndata:\n  a: "1"\n`);
  w('dir/a.yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-dir-a\n  namespace: ${NS}\ndata:\n  a: "1"\n`);
  w('dir/b.json', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-dir-b', namespace: NS }, data: { b: '2' } }));
  w('dir/sub/c.yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-dir-c\n  namespace: ${NS}\n`);
  w('dir/notes.txt', 'not a manifest\n');
  w('list.yaml', `apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: cm-l1, namespace: ${NS}}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: cm-l2, namespace: ${NS}}\n`);
  w('local.yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n  labels: {app: x}\ndata:\n  a: "1"\n  n: "1000000"\nspec:\n  replicas: 3\n  f: 1.5\n  items:\n  - {name: one, v: 1}\n  - {name: two, v: 2}\n`);
  w('local-deploy.yaml', `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ld\nspec:\n  selector: {matchLabels: {app: ld}}\n  template:\n    metadata: {labels: {app: ld}}\n    spec:\n      containers:\n      - {name: web, image: nginx}\n      - {name: side, image: busybox}\n`);
  w('local-cr.yaml', `apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: ct\nspec:\n  cronSpec: "* * * * */5"\n`);
  // metadata that does not decode as an ObjectMeta (cli-runtime's metadataValidatingDecoder)
  w('bad-annotation.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm1, annotations: {x: 1}}\n');
  w('bad-labels.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm1, labels: {x: y}}\n');
  w('bad-generation.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm1, generation: "x"}\n');
  w('bad-time.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm1, creationTimestamp: "bad"}\n');
  w('bad-metadata.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: [1]\n');
  w('patch.yaml', 'data:\n  fromfile: "yes"\n');
  w('patch.json', '{"data":{"fromfile":"json"}}');
  w('tmpl.txt', '{{.metadata.name}}:{{index .data "a"}}\n');
  w('jp.txt', '{.metadata.name}');
  w('kz/base/kustomization.yaml', 'resources:\n- cm.yaml\ncommonLabels:\n  team: a\n');
  w('kz/base/cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kzcm\ndata:\n  k: v\n');
  w('kz/over/kustomization.yaml', `resources:\n- ../base\nnamespace: ${NS}\nnamePrefix: pre-\nnameSuffix: -suf\ncommonLabels:\n  env: prod\n`);
  // a kustomization with workloads: selectors, templates, name references, a Namespace object, order
  mkdirSync(join(files, 'kz', 'app'), { recursive: true });
  w(
    'kz/app/kustomization.yaml',
    'namespace: shop\nnamePrefix: dev-\ncommonLabels:\n  app.kubernetes.io/part-of: shop\nlabels:\n- pairs:\n    tier: web\ncommonAnnotations:\n  owner: team-a\nresources:\n- app.yaml\n- ns.yaml\n',
  );
  w(
    'kz/app/app.yaml',
    [
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      serviceAccountName: runner\n      containers:\n      - name: c\n        image: nginx\n        envFrom:\n        - configMapRef: {name: settings}\n        env:\n        - name: P\n          valueFrom:\n            secretKeyRef: {name: creds, key: p}\n      volumes:\n      - name: v\n        configMap: {name: settings}\n',
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports:\n  - port: 80\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  k: v\n',
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  p: x\n',
      'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: runner\n',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\nrules: []\n',
    ].join('---\n'),
  );
  w('kz/app/ns.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: anything\n');
});

after(async () => {
  await c?.stop();
});

const f = (p: string) => join(files, p);

// ── the table ────────────────────────────────────────────────────────────────

const cases: Case[] = [
  // patch types on built-in kinds
  { name: 'strategic on a ConfigMap', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}'], checkState: cm('cm1') },
  { name: 'strategic as YAML', objects: [cm('cm1')], args: ['configmap', 'cm1', '-n', NS, '-p', 'data:\n  b: "3"'], checkState: cm('cm1') },
  { name: 'no change', objects: [cm('cm1')], args: ['configmaps', 'cm1', '-n', NS, '-p', '{"data":{"a":"1"}}'] },
  { name: 'TYPE/NAME', objects: [cm('cm1')], args: ['configmap/cm1', '-n', NS, '-p', '{"data":{"c":"3"}}'] },
  { name: 'kind form', objects: [cm('cm1')], args: ['ConfigMap', 'cm1', '-n', NS, '-p', '{"data":{"c":"3"}}'] },
  { name: 'merge removes a key', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '--type', 'merge', '-p', '{"data":{"a":null,"z":"9"}}'], checkState: cm('cm1') },
  { name: 'json patch', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '--type=json', '-p', '[{"op":"add","path":"/data/j","value":"v"},{"op":"remove","path":"/data/a"}]'], checkState: cm('cm1') },
  { name: 'json patch that does not apply', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '--type=json', '-p', '[{"op":"replace","path":"/data/nope/x","value":"v"}]'] },
  { name: 'json patch test fails', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '--type', 'json', '-p', '[{"op":"test","path":"/data/a","value":"2"}]'] },
  { name: 'type in upper case', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '--type', 'MERGE', '-p', '{"data":{"u":"1"}}'] },
  { name: 'patch file', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '--patch-file', 'files/patch.yaml'] },
  { name: 'patch file JSON', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '--patch-file', 'files/patch.json', '-o', 'yaml'] },
  { name: 'strategic merges containers by name', objects: [deploy('web')], args: ['deployment', 'web', '-n', NS, '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}', '-o', 'yaml'], checkState: deploy('web') },
  { name: 'strategic $patch delete', objects: [deploy('web')], args: ['deploy', 'web', '-n', NS, '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}}', '-o', 'json'] },
  { name: 'merge replaces the containers list', objects: [deploy('web')], args: ['deployments.apps', 'web', '-n', NS, '--type', 'merge', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"x"}]}}}}', '-o', 'name'] },
  { name: 'Deployment.v1.apps (kind form)', objects: [deploy('web')], args: ['Deployment.v1.apps', 'web', '-n', NS, '-p', '{"metadata":{"labels":{"x":"y"}}}'] },
  { name: 'deployment.apps', objects: [deploy('web')], args: ['deployment.apps/web', '-n', NS, '-p', '{"metadata":{"labels":{"x":"y"}}}'] },
  { name: '--field-manager', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '--field-manager', 'me', '-o', 'yaml', '--show-managed-fields'] },
  { name: 'two -f flags and a comma list', objects: [cm('cm-f'), cm('cm-dir-a'), cm('cm-dir-b')], args: ['-f', 'files/cm-f.yaml', '-f', 'files/dir/a.yaml,files/dir/b.json', '-p', '{"data":{"m":"1"}}'] },
  { name: 'deployment.v1.apps', objects: [deploy('web')], args: ['deployment.v1.apps', 'web', '-n', NS, '-p', '{"metadata":{"labels":{"x":"y"}}}'] },
  { name: 'pod image', objects: [pod('p1')], args: ['pod', 'p1', '-n', NS, '-p', '{"spec":{"containers":[{"name":"side","image":"busybox:1.37"}]}}', '-o', 'jsonpath={.spec.containers[*].image}'] },
  { name: 'cluster-scoped node', objects: [node('n1')], args: ['node', 'n1', '-p', '{"spec":{"unschedulable":true}}'], checkState: node('n1') },
  { name: 'cluster-scoped with -n', objects: [node('n1')], args: ['no', 'n1', '-n', NS, '-p', '{"metadata":{"labels":{"zone":"b"}}}', '-o', 'yaml'] },
  { name: 'service ports', objects: [svc('s1', '10.96.100.101')], args: ['svc', 's1', '-n', NS, '-p', '{"spec":{"ports":[{"port":80,"targetPort":9090}]}}', '-o', 'yaml'] },
  { name: 'two names', objects: [cm('cm1'), cm('cm2')], args: ['cm', 'cm1', 'cm2', '-n', NS, '-p', '{"data":{"x":"1"}}'] },
  { name: 'two TYPE/NAMEs, one missing', objects: [cm('cm1')], args: ['cm/cm1', 'cm/nope', '-n', NS, '-p', '{"data":{"x":"1"}}'] },
  { name: 'two types', objects: [cm('cm1'), svc('cm1', '10.96.100.102')], args: ['cm,svc', 'cm1', '-n', NS, '-p', '{"metadata":{"labels":{"t":"1"}}}'] },

  // subresources
  { name: 'scale subresource', objects: [deploy('web', 1)], args: ['deployment', 'web', '-n', NS, '--subresource=scale', '--type=merge', '-p', '{"spec":{"replicas":3}}'], checkState: deploy('web') },
  { name: 'scale subresource as yaml', objects: [deploy('web', 1)], args: ['deployment', 'web', '-n', NS, '--subresource', 'scale', '-p', '{"spec":{"replicas":2}}', '-o', 'yaml'] },
  { name: 'scale no change', objects: [deploy('web', 2)], args: ['deployment', 'web', '-n', NS, '--subresource', 'scale', '--type', 'merge', '-p', '{"spec":{"replicas":2}}'] },
  { name: 'status subresource', objects: [deploy('web')], args: ['deployment', 'web', '-n', NS, '--subresource=status', '--type=merge', '-p', '{"status":{"observedGeneration":1,"replicas":1}}', '-o', 'jsonpath={.status}'] },
  { name: 'status ignores spec', objects: [deploy('web')], args: ['deployment', 'web', '-n', NS, '--subresource=status', '--type=merge', '-p', '{"spec":{"replicas":5}}', '-o', 'jsonpath={.spec.replicas}'] },
  { name: 'node status', objects: [node('n1')], args: ['node', 'n1', '--subresource', 'status', '--type', 'merge', '-p', '{"status":{"capacity":{"cpu":"4"}}}', '-o', 'go-template={{.status.capacity.cpu}}'] },
  { name: 'unknown subresource', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '--subresource', 'nope', '-p', '{}'] },

  // output formats
  { name: '-o json', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"<&>"}}', '-o', 'json'] },
  { name: '-o yaml', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"long":"a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb cc dd ee ff gg hh ii jj kk","ml":"x\\ny\\n"}}', '-o', 'yaml'] },
  { name: '-o yaml --show-managed-fields', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '-o', 'yaml', '--show-managed-fields'] },
  { name: '-o json --show-managed-fields', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '-ojson', '--show-managed-fields=true'] },
  { name: '-o name', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '-o', 'name'] },
  { name: '-o go-template', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '-o', 'go-template={{range $k, $v := .data}}{{$k}}={{$v}};{{end}} {{len .metadata.name}} {{.metadata.labels.app | printf "%q"}}'] },
  { name: '-o go-template with numbers', objects: [deploy('web', 3)], args: ['deploy', 'web', '-n', NS, '-p', '{}', '-o', 'go-template={{.spec.replicas}} {{eq .spec.replicas 3}} {{printf "%d %v %T" .spec.replicas .spec.replicas .spec.replicas}}'] },
  { name: '--template alone', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '--template', '{{.kind}}/{{.metadata.name}}'] },
  { name: '-o template', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-o', 'template', '--template={{.metadata.namespace}}'] },
  { name: '-o go-template-file', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-o', 'go-template-file', '--template', 'files/tmpl.txt'] },
  { name: '-o templatefile=', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-o', 'templatefile=files/tmpl.txt'] },
  { name: '-o go-template missing key', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-o', 'go-template={{.nope}}|{{.data.nope}}'] },
  { name: '-o go-template missing key, not allowed', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-o', 'go-template={{.metadata.name}} {{.nope.deeper}}', '--allow-missing-template-keys=false'] },
  { name: '-o go-template parse error', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-o', 'go-template={{.metadata.name'] },
  { name: '-o go-template without template', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-o', 'go-template'] },
  { name: '-o jsonpath', objects: [deploy('web')], args: ['deploy', 'web', '-n', NS, '-p', '{}', '-o', 'jsonpath={range .spec.template.spec.containers[*]}{.name}={.image}{"\\n"}{end}'] },
  { name: '-o jsonpath filter', objects: [deploy('web')], args: ['deploy', 'web', '-n', NS, '-p', '{}', '-o', "jsonpath={.spec.template.spec.containers[?(@.name=='side')].image}"] },
  { name: '-o jsonpath recursive', objects: [deploy('web')], args: ['deploy', 'web', '-n', NS, '-p', '{}', '-o', 'jsonpath={..image}'] },
  { name: '-o jsonpath quoted key', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"metadata":{"annotations":{"a.b/c":"v"}}}', '-o', "jsonpath={.metadata.annotations['a\\.b/c']}"] },
  { name: '-o jsonpath-as-json', objects: [deploy('web')], args: ['deploy', 'web', '-n', NS, '-p', '{}', '-o', 'jsonpath-as-json={.spec.template.spec.containers[*].name}'] },
  { name: '-o jsonpath-file', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-o', 'jsonpath-file', '--template', 'files/jp.txt'] },
  { name: '-o jsonpath missing, not allowed', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-o', 'jsonpath={.nope}', '--allow-missing-template-keys=false'] },
  { name: '-o jsonpath parse error', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-o', 'jsonpath={.metadata.name'] },
  { name: '-o wide is not offered', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-o', 'wide'] },

  // dry runs
  { name: '--dry-run=server', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '--dry-run=server', '-o', 'yaml'], checkState: cm('cm1') },
  { name: '--dry-run=client', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '--dry-run=client', '-o', 'json'], checkState: cm('cm1') },
  { name: '--dry-run=client no change', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"a":"1"}}', '--dry-run=client'] },
  { name: 'bare --dry-run', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '--dry-run'] },
  { name: '--dry-run=true', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '--dry-run=true'] },
  { name: '--dry-run=false', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '--dry-run=false'] },
  { name: '--dry-run=bogus', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '--dry-run=bogus'] },
  { name: 'client dry run of a subresource', objects: [deploy('web')], args: ['deploy', 'web', '-n', NS, '--subresource', 'scale', '--type', 'merge', '-p', '{"spec":{"replicas":4}}', '--dry-run=client', '-o', 'yaml'] },

  // files
  { name: '-f FILE', objects: [cm('cm-f')], args: ['-f', 'files/cm-f.yaml', '-p', '{"data":{"b":"2"}}'] },
  { name: '-f FILE without namespace', objects: [cm('cm-nons', { a: '1' }, 'default')], args: ['-f', 'files/cm-nons.yaml', '-p', '{"data":{"b":"2"}}', '-o', 'yaml'] },
  { name: '-f FILE namespace mismatch', objects: [cm('cm-f')], args: ['-f', 'files/cm-other-ns.yaml', '-n', NS, '-p', '{}'] },
  { name: '-f DIR', objects: [cm('cm-dir-a'), cm('cm-dir-b')], args: ['-f', 'files/dir', '-p', '{"data":{"d":"1"}}'] },
  { name: '-f DIR -R', objects: [cm('cm-dir-a'), cm('cm-dir-b'), cm('cm-dir-c')], args: ['-f', 'files/dir', '-R', '-p', '{"data":{"d":"1"}}', '-o', 'name'] },
  { name: '-f List', objects: [cm('cm-l1'), cm('cm-l2')], args: ['-f', 'files/list.yaml', '-p', '{"data":{"d":"1"}}'] },
  { name: '-f -', objects: [cm('cm-f')], args: ['-f', '-', '-p', '{"data":{"s":"1"}}'], input: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-f\n  namespace: ${NS}\n` },
  { name: '-f missing file', args: ['-f', 'files/nope.yaml', '-p', '{}'] },
  { name: '-k DIR', objects: [cm('pre-kzcm-suf')], args: ['-k', 'files/kz/over', '-p', '{"data":{"k2":"v2"}}', '-o', 'yaml'] },
  { name: '--local -k with workloads', args: ['--local', '-k', 'files/kz/app', '-p', '{}', '-o', 'yaml'] },
  { name: '--local -k names in order', args: ['--local', '-k', 'files/kz/app', '-p', '{"metadata":{"labels":{"p":"1"}}}'] },
  { name: '-k with -f', args: ['-k', 'files/kz/over', '-f', 'files/cm-f.yaml', '-p', '{}'] },
  { name: '-f and names', args: ['cm', 'x', '-f', 'files/cm-f.yaml', '-p', '{}'] },

  // --local
  { name: '--local strategic', args: ['--local', '-f', 'files/local.yaml', '-p', '{"data":{"b":"2"}}', '-o', 'yaml'] },
  { name: '--local no change', args: ['--local', '-f', 'files/local.yaml', '-p', '{"data":{"a":"1"}}'] },
  { name: '--local merge', args: ['--local', '-f', 'files/local.yaml', '--type', 'merge', '-p', '{"spec":{"items":null}}', '-o', 'json'] },
  { name: '--local json', args: ['--local', '-f', 'files/local.yaml', '--type', 'json', '-p', '[{"op":"replace","path":"/spec/replicas","value":5}]', '-o', 'yaml'] },
  { name: '--local json missing key', args: ['--local', '-f', 'files/local.yaml', '--type', 'json', '-p', '[{"op":"remove","path":"/data/zz"}]'] },
  { name: '--local strategic containers', args: ['--local', '-f', 'files/local-deploy.yaml', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"x"}]}}}}', '-o', 'yaml'] },
  { name: '--local strategic on a custom resource', args: ['--local', '-f', 'files/local-cr.yaml', '-p', '{"spec":{"replicas":2}}'] },
  { name: '--local merge on a custom resource', args: ['--local', '-f', 'files/local-cr.yaml', '--type', 'merge', '-p', '{"spec":{"replicas":2}}', '-o', 'yaml'] },
  { name: '--local go-template numbers', args: ['--local', '-f', 'files/local.yaml', '-p', '{}', '-o', 'go-template={{.spec.replicas}} {{.spec.f}} {{range .spec.items}}{{.name}}{{.v}}{{end}}'] },
  { name: '--local with names', args: ['--local', 'cm', 'x', '-p', '{}'] },
  { name: '--local with --dry-run=server', args: ['--local', '-f', 'files/local.yaml', '-p', '{}', '--dry-run=server'] },
  { name: '--local without files', args: ['--local', '-p', '{}'] },
  { name: '--local with -n enforcing', args: ['--local', '-f', 'files/cm-f.yaml', '-n', 'other', '-p', '{}'] },

  // errors
  { name: 'NotFound', args: ['cm', 'nope', '-n', NS, '-p', '{}'] },
  { name: 'NotFound in a missing namespace', args: ['cm', 'nope', '-n', 'no-such-ns', '-p', '{}'] },
  { name: 'unknown type', args: ['foo', 'x', '-p', '{}'] },
  { name: 'unknown group', args: ['deployments.nope', 'x', '-p', '{}'] },
  { name: 'type without name', args: ['cm', '-p', '{}'] },
  { name: 'no resources', args: ['-p', '{}'] },
  { name: 'no patch', args: ['cm', 'x'] },
  { name: 'patch and patch file', args: ['cm', 'x', '-p', '{}', '--patch-file', 'files/patch.yaml'] },
  { name: 'missing patch file', args: ['cm', 'x', '--patch-file', 'files/nope.yaml'] },
  { name: 'patch file is a directory', args: ['cm', 'x', '--patch-file', 'files'] },
  { name: '--record (deprecated): the change cause in a second patch', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '--record', '-o', 'yaml'] },
  { name: '--record=false', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '--record=false', '-o', 'name'] },
  ...['bad-annotation', 'bad-labels', 'bad-generation', 'bad-time', 'bad-metadata'].map((f) => ({ name: `metadata that is not an ObjectMeta: ${f}`, objects: [cm('cm1')], args: ['-n', NS, '-f', `files/${f}.yaml`, '-p', '{"data":{"b":"2"}}'] })),
  { name: 'metadata that is not an ObjectMeta, locally', args: ['--local', '-f', 'files/bad-labels.yaml', '-p', '{}', '-o', 'name'] },
  { name: 'a URL to -f that refuses the connection', args: ['--local', '-f', 'http://127.0.0.1:1/none.yaml', '-p', '{}'] },
  { name: 'bad type', args: ['cm', 'x', '-p', '{}', '--type', 'apply'] },
  { name: 'unparsable YAML patch', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', 'a: b: c'] },
  { name: 'invalid JSON patch text', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":'] },
  { name: 'invalid object', objects: [deploy('web')], args: ['deploy', 'web', '-n', NS, '--type', 'merge', '-p', '{"spec":{"replicas":-1}}'] },
  { name: 'name change refused', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"metadata":{"name":"other"}}'] },
  { name: 'too many slashes', args: ['cm/a/b', '-p', '{}'] },
  { name: 'mixed forms', args: ['cm', 'cm/a', '-p', '{}'] },
  { name: 'unknown flag', args: ['cm', 'x', '--bogus'] },
  { name: 'bad bool flag', args: ['cm', 'x', '-p', '{}', '--local=maybe'] },
  { name: 'flag without value', args: ['cm', 'x', '-p'] },
  { name: 'help', args: ['--help'] },
  { name: '-h', args: ['-h'] },

  // warnings
  { name: 'server warning', objects: [deploy('web')], args: ['deploy', 'web', '-n', NS, '-p', '{"spec":{"bogusField":1}}'] },
  { name: '--warnings-as-errors', objects: [deploy('web')], args: ['deploy', 'web', '-n', NS, '-p', '{"spec":{"bogusField":1}}', '--warnings-as-errors'] },
  { name: '--warnings-as-errors without warnings', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '--warnings-as-errors'] },

  // connection and identity
  { name: 'refused connection', args: ['cm', 'x', '-p', '{}', '-s', 'https://127.0.0.1:1'] },
  { name: 'missing kubeconfig', args: ['cm', 'x', '-p', '{}', '--kubeconfig', '/nonexistent/kubeconfig'] },
  { name: 'no kubeconfig at all', args: ['cm', 'x', '-p', '{}'], env: { KUBECONFIG: '/nonexistent/a:/nonexistent/b', HOME: '/nonexistent-home' } },
  { name: '-f with no server to map its kind', args: ['-f', 'files/cm-f.yaml', '-p', '{}'], env: { KUBECONFIG: '/nonexistent/a', HOME: '/nonexistent-home' } },
  { name: 'unknown context', args: ['cm', 'x', '-p', '{}', '--context', 'nope'] },
  { name: 'unknown user', args: ['cm', 'x', '-p', '{}', '--user', 'nope'] },
  { name: 'unknown cluster', args: ['cm', 'x', '-p', '{}', '--cluster', 'nope'] },
  { name: 'bad request timeout', args: ['cm', 'x', '-p', '{}', '--request-timeout', 'soon'] },
  { name: 'request timeout', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '--request-timeout', '30s'] },
  { name: 'missing CA file', args: ['cm', 'x', '-p', '{}', '--certificate-authority', '/nonexistent/ca.crt'] },
  { name: 'insecure-skip-tls-verify', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '--insecure-skip-tls-verify'] },
  { name: 'impersonation', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '--as', 'someone', '--as-group', 'g1', '--as-group', 'g2', '--as-uid', 'u1'] },
  { name: 'disable-compression', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{"data":{"b":"2"}}', '--disable-compression', '-o', 'name'] },
  { name: 'separate cache dir', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '--cache-dir', 'other-cache'] },
  { name: 'profile none', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '--profile', 'none'] },
  { name: 'unknown profile', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '--profile', 'bogus'] },
  { name: '-v=1', objects: [cm('cm1')], args: ['cm', 'cm1', '-n', NS, '-p', '{}', '-v=1'], unorderedStderr: true },
];

for (const k of cases) test(k.name, () => differential(k));

// The discovery cache: kubectl's layout, shared with kubectl, refreshed on a miss.
test('discovery cache layout and invalidation', async () => {
  const cache = join(c.home, 'dc');
  rmSync(cache, { recursive: true, force: true });
  await recreate([cm('cm1')]);
  const r = run('keelson', ['cm', 'cm1', '-n', NS, '-p', '{}', '--cache-dir', cache]);
  assert.equal(r.code, 0, r.stderr);
  const dirs = readdirSync(join(cache, 'discovery'));
  assert.deepEqual(dirs, [`127.0.0.1_${c.port}`]);
  const base = join(cache, 'discovery', dirs[0]!);
  assert.ok(existsSync(join(base, 'servergroups.json')));
  assert.ok(existsSync(join(base, 'v1', 'serverresources.json')));
  assert.ok(existsSync(join(base, 'apps', 'v1', 'serverresources.json')));
  // kubectl reads keelson's cache (its files are not rewritten while fresh)
  const k = spawnSync(kubectlBinary('1.33'), ['patch', 'cm', 'cm1', '-n', NS, '-p', '{}', '--cache-dir', cache], { env: { PATH: process.env.PATH ?? '', HOME: c.home, KUBECONFIG: c.kubeconfig }, encoding: 'utf8' });
  assert.equal(k.status, 0, k.stderr);
  // a stale cache missing a resource is invalidated and refreshed: drop configmaps from it
  const file = join(base, 'v1', 'serverresources.json');
  const list = JSON.parse(readFileSync(file, 'utf8'));
  list.resources = list.resources.filter((x: any) => x.name !== 'configmaps');
  writeFileSync(file, JSON.stringify(list));
  const r2 = run('keelson', ['cm', 'cm1', '-n', NS, '-p', '{}', '--cache-dir', cache]);
  assert.equal(r2.code, 0, r2.stderr);
  assert.ok(JSON.parse(readFileSync(file, 'utf8')).resources.some((x: any) => x.name === 'configmaps'), 'refreshed');
  // an expired cache (older than 6h) is read again from the server
  const old = new Date(Date.now() - 7 * 3600 * 1000);
  utimesSync(file, old, old);
  const r3 = run('keelson', ['cm', 'cm1', '-n', NS, '-p', '{}', '--cache-dir', cache]);
  assert.equal(r3.code, 0, r3.stderr);
});

