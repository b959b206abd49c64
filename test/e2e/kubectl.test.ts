// The everyday kubectl commands, with real kubectl 1.33, 1.32 and 1.27 against one keelson
// server: version, create (namespace, the configmap and secret generators, -f with strict,
// warn and no validation), replace (and its Conflict), delete in every form, explain, and the
// errors a user meets. Every expectation is what the same command prints against a Kubernetes
// 1.33 cluster: stdout, stderr and exit code, exactly.
//
// Each kubectl version works in its own namespace, so the three runs do not see each other.
// Pods name a scheduler nobody runs (schedulerName: manual): they stay Pending and bound to no
// node whatever else the server runs, so deleting them is immediate, as in Kubernetes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startCluster, type Cluster, type RunResult } from './harness.js';

const VERSIONS = ['1.33', '1.32', '1.27'] as const;
type Version = (typeof VERSIONS)[number];

let c: Cluster;

before(async () => {
  c = await startCluster();
});

after(async () => {
  await c?.stop();
});

function kubectl(v: Version, args: string[], input?: string): RunResult {
  return c.kubectl(args, { version: v, input });
}

/** the whole outcome of a command, compared at once so a failure shows all of it */
function expectRun(v: Version, args: string[], expected: { code?: number; stdout?: string | RegExp; stderr?: string | RegExp }, input?: string): RunResult {
  const r = kubectl(v, args, input);
  const pick = (actual: string, e: string | RegExp | undefined) => (e instanceof RegExp ? (e.test(actual) ? String(e) : actual) : actual);
  assert.deepEqual(
    { code: r.code, stdout: pick(r.stdout, expected.stdout), stderr: pick(r.stderr, expected.stderr) },
    {
      code: expected.code ?? 0,
      stdout: expected.stdout instanceof RegExp ? String(expected.stdout) : (expected.stdout ?? ''),
      stderr: expected.stderr instanceof RegExp ? String(expected.stderr) : (expected.stderr ?? ''),
    },
    `kubectl ${args.join(' ')}`,
  );
  return r;
}

function getJSON(v: Version, args: string[]): any {
  const r = kubectl(v, ['get', ...args, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const tagOf = (v: Version) => v.replace('.', '');
const nsOf = (v: Version) => `kc-${tagOf(v)}`;
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

function manifest(v: Version, name: string, text: string): string {
  return c.file(`${tagOf(v)}-${name}`, text);
}

const POD = (name: string, extra = '', containerExtra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels:
    app: web
spec:
  schedulerName: manual
  containers:
  - name: nginx
    image: nginx:1.27
    ports:
    - containerPort: 80
${containerExtra}${extra}`;

const DEPLOYMENT = (name: string, image = 'nginx:1.27', extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    app: ${name}
spec:
  replicas: 0
${extra}  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
      - name: main
        image: ${image}
`;

const SERVICE = (name: string, portExtra = '') => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 8080
${portExtra}`;

const CONFIGMAP = (name: string, value: string, labels = '') => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
${labels}data:
  key: "${value}"
`;

// ---------------------------------------------------------------------------------------------
// version

for (const v of VERSIONS) {
  test(`kubectl ${v}: version prints client and server versions`, () => {
    const r = kubectl(v, ['version']);
    assert.equal(r.code, 0, r.stderr);
    if (v === '1.27') {
      // 1.27 prints Go structs and, against a 1.33 server, the deprecation note and the skew warning
      assert.match(r.stdout, /^Client Version: version\.Info\{Major:"1", Minor:"27", GitVersion:"v1\.27\.\d+", .*\}\nKustomize Version: v\S+\nServer Version: version\.Info\{Major:"1", Minor:"33", GitVersion:"v1\.33\.\d+(\+[0-9A-Za-z.-]+)?", GitCommit:"[0-9a-f]{40}", GitTreeState:"(clean|dirty)", BuildDate:"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", GoVersion:"[^"]+", Compiler:"[^"]+", Platform:"linux\/(amd64|arm64)"\}\n$/);
      assert.equal(
        r.stderr,
        'WARNING: This version information is deprecated and will be replaced with the output from kubectl version --short.  Use --output=yaml|json to get the full version.\n' +
          'WARNING: version difference between client (1.27) and server (1.33) exceeds the supported minor version skew of +/-1\n',
      );
    } else {
      // no skew warning: 1.32 and 1.33 are within one minor version of the server
      assert.match(r.stdout, new RegExp(`^Client Version: v${v.replace('.', '\\.')}\\.\\d+\\nKustomize Version: v\\S+\\nServer Version: v1\\.33\\.\\d+(\\+[0-9A-Za-z.-]+)?\\n$`));
      assert.equal(r.stderr, '');
    }
  });

  test(`kubectl ${v}: version -o json has the server's version.Info`, () => {
    const r = kubectl(v, ['version', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout).serverVersion;
    assert.equal(s.major, '1');
    assert.equal(s.minor, '33');
    assert.match(s.gitVersion, /^v1\.33\.\d+(\+[0-9A-Za-z.-]+)?$/);
    assert.match(s.gitCommit, /^[0-9a-f]{40}$/);
    assert.match(s.gitTreeState, /^(clean|dirty)$/);
    assert.match(s.buildDate, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(s.platform, /^linux\/(amd64|arm64)$/);
    if (v !== '1.27') assert.equal(r.stderr, '');
  });
}

// ---------------------------------------------------------------------------------------------
// create: namespace, generators, -f

for (const v of VERSIONS) {
  const ns = nsOf(v);
  const tag = tagOf(v);

  test(`kubectl ${v}: create namespace`, () => {
    expectRun(v, ['create', 'namespace', ns], { stdout: `namespace/${ns} created\n` });
    const n = getJSON(v, ['namespace', ns]);
    assert.deepEqual(n.spec, { finalizers: ['kubernetes'] });
    assert.deepEqual(n.status, { phase: 'Active' });
    assert.equal(n.metadata.labels?.['kubernetes.io/metadata.name'], ns);
  });

  test(`kubectl ${v}: create configmap --from-literal and --from-file`, () => {
    const dir = join(c.home, `cm-${tag}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'app.properties'), 'color=blue\nsize=3\n');
    writeFileSync(join(dir, 'blob.bin'), Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80]));
    expectRun(
      v,
      ['create', 'configmap', 'gen', '-n', ns, '--from-literal=a=1', '--from-literal=greeting=hello world', `--from-file=${join(dir, 'app.properties')}`, `--from-file=renamed=${join(dir, 'app.properties')}`, `--from-file=${join(dir, 'blob.bin')}`],
      { stdout: 'configmap/gen created\n' },
    );
    const cm = getJSON(v, ['configmap', 'gen', '-n', ns]);
    assert.deepEqual(cm.data, { a: '1', greeting: 'hello world', 'app.properties': 'color=blue\nsize=3\n', renamed: 'color=blue\nsize=3\n' });
    assert.deepEqual(cm.binaryData, { 'blob.bin': b64(Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80])) });
    assert.deepEqual(Object.keys(cm.metadata).sort(), ['creationTimestamp', 'name', 'namespace', 'resourceVersion', 'uid']);
    expectRun(v, ['create', 'configmap', 'gen-dir', '-n', ns, `--from-file=${dir}`], { stdout: 'configmap/gen-dir created\n' });
    const d = getJSON(v, ['configmap', 'gen-dir', '-n', ns]);
    assert.deepEqual([d.data, d.binaryData], [{ 'app.properties': 'color=blue\nsize=3\n' }, { 'blob.bin': b64(Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80])) }]);
  });

  test(`kubectl ${v}: create secret generic (the server makes it Opaque)`, () => {
    const f = join(c.home, `token-${tag}`);
    writeFileSync(f, 's3cr3t\n');
    expectRun(v, ['create', 'secret', 'generic', 'gen', '-n', ns, '--from-literal=username=admin', `--from-file=token=${f}`], { stdout: 'secret/gen created\n' });
    const s = getJSON(v, ['secret', 'gen', '-n', ns]);
    assert.equal(s.type, 'Opaque');
    assert.deepEqual(s.data, { username: b64('admin'), token: b64('s3cr3t\n') });
    expectRun(v, ['get', 'secret', 'gen', '-n', ns, '-o', 'jsonpath={.type}'], { stdout: 'Opaque' });
  });

  test(`kubectl ${v}: create secret docker-registry`, () => {
    expectRun(
      v,
      ['create', 'secret', 'docker-registry', 'reg', '-n', ns, '--docker-server=registry.example.com', '--docker-username=u', '--docker-password=p', '--docker-email=u@example.com'],
      { stdout: 'secret/reg created\n' },
    );
    const s = getJSON(v, ['secret', 'reg', '-n', ns]);
    assert.equal(s.type, 'kubernetes.io/dockerconfigjson');
    assert.deepEqual(Object.keys(s.data), ['.dockerconfigjson']);
    assert.deepEqual(JSON.parse(Buffer.from(s.data['.dockerconfigjson'], 'base64').toString()), {
      auths: { 'registry.example.com': { username: 'u', password: 'p', email: 'u@example.com', auth: b64('u:p') } },
    });
  });

  test(`kubectl ${v}: create secret tls`, () => {
    const cert = join(c.dataDir, 'pki', 'apiserver.crt');
    const key = join(c.dataDir, 'pki', 'apiserver.key');
    expectRun(v, ['create', 'secret', 'tls', 'tls', '-n', ns, `--cert=${cert}`, `--key=${key}`], { stdout: 'secret/tls created\n' });
    const s = getJSON(v, ['secret', 'tls', '-n', ns]);
    assert.equal(s.type, 'kubernetes.io/tls');
    assert.deepEqual(s.data, { 'tls.crt': b64(readFileSync(cert)), 'tls.key': b64(readFileSync(key)) });
  });

  test(`kubectl ${v}: create -f a Pod, a Deployment and a Service (strict validation)`, () => {
    const pod = manifest(v, 'pod.yaml', POD('web'));
    const deploy = manifest(v, 'deploy.yaml', DEPLOYMENT('web'));
    const svc = manifest(v, 'svc.yaml', SERVICE('web'));
    expectRun(v, ['create', '-n', ns, '-f', pod], { stdout: 'pod/web created\n' });
    expectRun(v, ['create', '-n', ns, '-f', deploy, '-f', svc], { stdout: 'deployment.apps/web created\nservice/web created\n' });
    const p = getJSON(v, ['pod', 'web', '-n', ns]);
    assert.deepEqual([p.kind, p.metadata.namespace, p.spec.containers[0].image, p.status.phase], ['Pod', ns, 'nginx:1.27', 'Pending']);
    const d = getJSON(v, ['deployment', 'web', '-n', ns]);
    assert.deepEqual([d.kind, d.apiVersion, d.metadata.generation, d.spec.replicas], ['Deployment', 'apps/v1', 1, 0]);
    const s = getJSON(v, ['service', 'web', '-n', ns]);
    assert.deepEqual([s.kind, s.spec.type, s.spec.ports], ['Service', 'ClusterIP', [{ port: 80, protocol: 'TCP', targetPort: 8080 }]]);
    // a multi-document file, from stdin
    expectRun(v, ['create', '-n', ns, '-f', '-'], { stdout: 'pod/web-2 created\nservice/web-2 created\n' }, POD('web-2') + '---\n' + SERVICE('web-2'));
  });

  test(`kubectl ${v}: create -f with an unknown field fails with the server's strict decoding error`, () => {
    const pod = manifest(v, 'bad-pod.yaml', POD('bad', '  bogusSpec: x\n', '    bogusField: 1\n'));
    const deploy = manifest(v, 'bad-deploy.yaml', DEPLOYMENT('bad', 'nginx:1.27', '  bogus: 1\n'));
    const svc = manifest(v, 'bad-svc.yaml', SERVICE('bad', '    bogusPort: 1\n'));
    expectRun(v, ['create', '-n', ns, '-f', pod], {
      code: 1,
      stderr: `Error from server (BadRequest): error when creating "${pod}": Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.bogusSpec", unknown field "spec.containers[0].bogusField"\n`,
    });
    expectRun(v, ['create', '-n', ns, '-f', deploy, '--validate=strict'], {
      code: 1,
      stderr: `Error from server (BadRequest): error when creating "${deploy}": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.bogus"\n`,
    });
    expectRun(v, ['create', '-n', ns, '-f', svc, '--validate=true'], {
      code: 1,
      stderr: `Error from server (BadRequest): error when creating "${svc}": Service in version "v1" cannot be handled as a Service: strict decoding error: unknown field "spec.ports[0].bogusPort"\n`,
    });
    // nothing was created
    expectRun(v, ['get', 'pod/bad', 'deployment/bad', 'service/bad', '-n', ns, '--ignore-not-found', '-o', 'name'], {});
  });

  test(`kubectl ${v}: create -f --validate=warn creates and prints the server's warnings`, () => {
    const pod = manifest(v, 'warn-pod.yaml', POD('warned', '  bogusSpec: x\n', '    bogusField: 1\n'));
    const deploy = manifest(v, 'warn-deploy.yaml', DEPLOYMENT('warned', 'nginx:1.27', '  bogus: 1\n'));
    const svc = manifest(v, 'warn-svc.yaml', SERVICE('warned', '    bogusPort: 1\n'));
    expectRun(v, ['create', '-n', ns, '-f', pod, '--validate=warn'], {
      stdout: 'pod/warned created\n',
      stderr: 'Warning: unknown field "spec.bogusSpec"\nWarning: unknown field "spec.containers[0].bogusField"\n',
    });
    expectRun(v, ['create', '-n', ns, '-f', deploy, '--validate=warn'], { stdout: 'deployment.apps/warned created\n', stderr: 'Warning: unknown field "spec.bogus"\n' });
    expectRun(v, ['create', '-n', ns, '-f', svc, '--validate=warn'], { stdout: 'service/warned created\n', stderr: 'Warning: unknown field "spec.ports[0].bogusPort"\n' });
    const p = getJSON(v, ['pod', 'warned', '-n', ns]);
    assert.equal('bogusSpec' in p.spec, false);
    assert.equal('bogusField' in p.spec.containers[0], false);
  });

  test(`kubectl ${v}: create -f --validate=false creates silently, dropping the unknown fields`, () => {
    const pod = manifest(v, 'lax-pod.yaml', POD('lax', '  bogusSpec: x\n', '    bogusField: 1\n'));
    const deploy = manifest(v, 'lax-deploy.yaml', DEPLOYMENT('lax', 'nginx:1.27', '  bogus: 1\n'));
    const svc = manifest(v, 'lax-svc.yaml', SERVICE('lax', '    bogusPort: 1\n'));
    expectRun(v, ['create', '-n', ns, '-f', pod, '--validate=false'], { stdout: 'pod/lax created\n' });
    expectRun(v, ['create', '-n', ns, '-f', deploy, '-f', svc, '--validate=false'], { stdout: 'deployment.apps/lax created\nservice/lax created\n' });
    const s = getJSON(v, ['service', 'lax', '-n', ns]);
    assert.deepEqual(s.spec.ports, [{ port: 80, protocol: 'TCP', targetPort: 8080 }]);
  });
}

// ---------------------------------------------------------------------------------------------
// the errors a user meets

for (const v of VERSIONS) {
  const ns = nsOf(v);

  test(`kubectl ${v}: an unknown resource type`, () => {
    expectRun(v, ['get', 'foos'], { code: 1, stderr: 'error: the server doesn\'t have a resource type "foos"\n' });
    expectRun(v, ['delete', 'foos', 'x', '-n', ns], { code: 1, stderr: 'error: the server doesn\'t have a resource type "foos"\n' });
  });

  test(`kubectl ${v}: get or delete of an object that does not exist: NotFound, exit 1`, () => {
    expectRun(v, ['get', 'pod', 'nope', '-n', ns], { code: 1, stderr: 'Error from server (NotFound): pods "nope" not found\n' });
    expectRun(v, ['get', 'deployment.apps', 'nope', '-n', ns], { code: 1, stderr: 'Error from server (NotFound): deployments.apps "nope" not found\n' });
    expectRun(v, ['get', 'namespace', 'nope-ns'], { code: 1, stderr: 'Error from server (NotFound): namespaces "nope-ns" not found\n' });
    expectRun(v, ['delete', 'configmap', 'nope', '-n', ns], { code: 1, stderr: 'Error from server (NotFound): configmaps "nope" not found\n' });
  });

  test(`kubectl ${v}: create of an object that exists: AlreadyExists`, () => {
    const pod = join(c.home, `${tagOf(v)}-pod.yaml`);
    expectRun(v, ['create', '-n', ns, '-f', pod], { code: 1, stderr: `Error from server (AlreadyExists): error when creating "${pod}": pods "web" already exists\n` });
    expectRun(v, ['create', 'namespace', ns], { code: 1, stderr: `Error from server (AlreadyExists): namespaces "${ns}" already exists\n` });
    expectRun(v, ['create', 'configmap', 'gen', '-n', ns, '--from-literal=a=1'], { code: 1, stderr: 'error: failed to create configmap: configmaps "gen" already exists\n' });
    expectRun(v, ['create', 'secret', 'generic', 'gen', '-n', ns, '--from-literal=a=1'], { code: 1, stderr: 'error: failed to create secret secrets "gen" already exists\n' });
  });

  test(`kubectl ${v}: a namespace that does not exist`, () => {
    const cm = manifest(v, 'cm-ghost-ns.yaml', CONFIGMAP('cfg', '1'));
    expectRun(v, ['create', '-n', 'no-such-ns', '-f', cm], { code: 1, stderr: `Error from server (NotFound): error when creating "${cm}": namespaces "no-such-ns" not found\n` });
    expectRun(v, ['create', 'configmap', 'x', '-n', 'no-such-ns', '--from-literal=a=1'], { code: 1, stderr: 'error: failed to create configmap: namespaces "no-such-ns" not found\n' });
    // a list in a missing namespace is empty
    expectRun(v, ['get', 'pods', '-n', 'no-such-ns'], { stderr: 'No resources found in no-such-ns namespace.\n' });
    // the server answers 'pods "web" not found'; kubectl then GETs the namespace and reports that instead
    expectRun(v, ['get', 'pod', 'web', '-n', 'no-such-ns'], { code: 1, stderr: 'Error from server (NotFound): namespaces "no-such-ns" not found\n' });
    expectRun(v, ['delete', 'configmap', 'x', '-n', 'no-such-ns'], { code: 1, stderr: 'Error from server (NotFound): configmaps "x" not found\n' });
  });

  test(`kubectl ${v}: an invalid name: the 422 message as Kubernetes words it`, () => {
    expectRun(v, ['create', 'namespace', 'Bad_Name'], {
      code: 1,
      stderr:
        `The Namespace "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\n`,
    });
    const long = 'a'.repeat(64);
    // the name is also the namespace's `kubernetes.io/metadata.name` label, so Kubernetes reports both
    expectRun(v, ['create', 'namespace', long], {
      code: 1,
      stderr: `The Namespace "${long}" is invalid: \n* metadata.name: Invalid value: "${long}": must be no more than 63 characters\n* metadata.labels: Invalid value: "${long}": must be no more than 63 characters\n`,
    });
    const pod = manifest(v, 'bad-name-pod.yaml', POD('Bad_Name'));
    expectRun(v, ['create', '-n', ns, '-f', pod], {
      code: 1,
      stderr:
        `The Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n`,
    });
    expectRun(v, ['create', 'configmap', 'Bad_Name', '-n', ns], {
      code: 1,
      stderr:
        `error: failed to create configmap: ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n`,
    });
  });

  test(`kubectl ${v}: an invalid object: every cause, as Kubernetes lists them`, () => {
    // a Pod without containers and with a bad restart policy
    const pod = manifest(
      v,
      'invalid-pod.yaml',
      `apiVersion: v1
kind: Pod
metadata:
  name: invalid
spec:
  restartPolicy: Sometimes
  containers: []
`,
    );
    expectRun(v, ['create', '-n', ns, '-f', pod], {
      code: 1,
      stderr:
        'The Pod "invalid" is invalid: \n' +
        '* spec.containers: Required value\n' +
        '* spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"\n',
    });
  });
}

// ---------------------------------------------------------------------------------------------
// replace

for (const v of VERSIONS) {
  const ns = nsOf(v);

  test(`kubectl ${v}: replace -f`, () => {
    const cm = manifest(v, 'cfg.yaml', CONFIGMAP('cfg', 'one'));
    expectRun(v, ['create', '-n', ns, '-f', cm], { stdout: 'configmap/cfg created\n' });
    const cm2 = manifest(v, 'cfg2.yaml', CONFIGMAP('cfg', 'two'));
    expectRun(v, ['replace', '-n', ns, '-f', cm2], { stdout: 'configmap/cfg replaced\n' });
    expectRun(v, ['get', 'configmap', 'cfg', '-n', ns, '-o', 'jsonpath={.data.key}'], { stdout: 'two' });
    const deploy = manifest(v, 'deploy-v2.yaml', DEPLOYMENT('web', 'nginx:1.28'));
    expectRun(v, ['replace', '-n', ns, '-f', deploy], { stdout: 'deployment.apps/web replaced\n' });
    const d = getJSON(v, ['deployment', 'web', '-n', ns]);
    assert.deepEqual([d.spec.template.spec.containers[0].image, d.metadata.generation], ['nginx:1.28', 2]);
    const ghost = manifest(v, 'ghost.yaml', CONFIGMAP('ghost', 'x'));
    expectRun(v, ['replace', '-n', ns, '-f', ghost], { code: 1, stderr: `Error from server (NotFound): error when replacing "${ghost}": configmaps "ghost" not found\n` });
  });

  test(`kubectl ${v}: replace with a stale resourceVersion: Conflict`, () => {
    const cur = kubectl(v, ['get', 'configmap', 'cfg', '-n', ns, '-o', 'yaml']);
    assert.equal(cur.code, 0, cur.stderr);
    const stale = manifest(v, 'cfg-stale.yaml', cur.stdout.replace(/key: .*/, 'key: three'));
    const fresh = manifest(v, 'cfg-fresh.yaml', cur.stdout.replace(/key: .*/, 'key: four'));
    expectRun(v, ['replace', '-f', fresh], { stdout: 'configmap/cfg replaced\n' });
    expectRun(v, ['replace', '-f', stale], {
      code: 1,
      stderr: `Error from server (Conflict): error when replacing "${stale}": Operation cannot be fulfilled on configmaps "cfg": the object has been modified; please apply your changes to the latest version and try again\n`,
    });
    expectRun(v, ['get', 'configmap', 'cfg', '-n', ns, '-o', 'jsonpath={.data.key}'], { stdout: 'four' });
  });
}

// ---------------------------------------------------------------------------------------------
// delete

for (const v of VERSIONS) {
  const ns = nsOf(v);

  test(`kubectl ${v}: delete by name, and a missing object`, () => {
    expectRun(v, ['delete', 'configmap', 'gen-dir', '-n', ns], { stdout: 'configmap "gen-dir" deleted\n' });
    expectRun(v, ['get', 'configmap', 'gen-dir', '-n', ns], { code: 1, stderr: 'Error from server (NotFound): configmaps "gen-dir" not found\n' });
    expectRun(v, ['delete', 'configmap', 'gen-dir', '-n', ns], { code: 1, stderr: 'Error from server (NotFound): configmaps "gen-dir" not found\n' });
    expectRun(v, ['delete', 'configmap', 'gen-dir', '-n', ns, '--ignore-not-found'], {});
    // a pod no node has taken is deleted at once
    expectRun(v, ['create', '-n', ns, '-f', '-'], { stdout: 'pod/del-1 created\npod/del-2 created\nservice/del-2 created\n' }, POD('del-1') + '---\n' + POD('del-2') + '---\n' + SERVICE('del-2'));
    expectRun(v, ['delete', 'pod', 'del-1', '-n', ns], { stdout: 'pod "del-1" deleted\n' });
    expectRun(v, ['delete', 'pods/del-2', 'service/del-2', '-n', ns], { stdout: 'pod "del-2" deleted\nservice "del-2" deleted\n' });
    expectRun(v, ['get', 'pods/del-1', 'pods/del-2', 'service/del-2', '-n', ns, '--ignore-not-found', '-o', 'name'], {});
  });

  test(`kubectl ${v}: delete -f`, () => {
    const pod = join(c.home, `${tagOf(v)}-pod.yaml`);
    const deploy = join(c.home, `${tagOf(v)}-deploy.yaml`);
    const svc = join(c.home, `${tagOf(v)}-svc.yaml`);
    expectRun(v, ['delete', '-n', ns, '-f', pod, '-f', deploy, '-f', svc], { stdout: 'pod "web" deleted\ndeployment.apps "web" deleted\nservice "web" deleted\n' });
    expectRun(v, ['delete', '-n', ns, '-f', svc], { code: 1, stderr: `Error from server (NotFound): error when deleting "${svc}": services "web" not found\n` });
    expectRun(v, ['delete', '-n', ns, '-f', svc, '--ignore-not-found'], {});
  });

  test(`kubectl ${v}: delete -l`, () => {
    const labelled = (name: string, tier: string) => CONFIGMAP(name, name, `  labels:\n    tier: ${tier}\n`);
    expectRun(v, ['create', '-n', ns, '-f', '-'], { stdout: 'configmap/l1 created\nconfigmap/l2 created\nconfigmap/l3 created\n' }, [labelled('l1', 'front'), labelled('l2', 'front'), labelled('l3', 'back')].join('---\n'));
    expectRun(v, ['delete', 'configmaps', '-n', ns, '-l', 'tier=front'], { stdout: 'configmap "l1" deleted\nconfigmap "l2" deleted\n' });
    expectRun(v, ['delete', 'configmaps', '-n', ns, '-l', 'tier in (front)'], { stdout: 'No resources found\n' });
    expectRun(v, ['get', 'configmaps', '-n', ns, '-l', 'tier', '-o', 'name'], { stdout: 'configmap/l3\n' });
  });

  test(`kubectl ${v}: delete --all`, () => {
    expectRun(v, ['delete', 'secrets', '--all', '-n', ns], { stdout: 'secret "gen" deleted\nsecret "reg" deleted\nsecret "tls" deleted\n' });
    expectRun(v, ['get', 'secrets', '-n', ns], { stderr: `No resources found in ${ns} namespace.\n` });
    expectRun(v, ['delete', 'secrets', '--all', '-n', ns], { stdout: 'No resources found\n' });
  });
}

// ---------------------------------------------------------------------------------------------
// explain

/** the field lines of explain's plaintext output: name, type and -required- */
function fieldLines(out: string): string[] {
  return out
    .split('\n')
    .filter((l) => /^ {2,}\S+\t<.+>( -required-)?$/.test(l))
    .map((l) => l.trimEnd());
}

for (const v of VERSIONS) {
  test(`kubectl ${v}: explain pods`, () => {
    const r = expectRun(v, ['explain', 'pods'], { stdout: /^KIND:       Pod\nVERSION:    v1\n\nDESCRIPTION:\n(    .*\n)+/ });
    assert.deepEqual(fieldLines(r.stdout), ['  apiVersion\t<string>', '  kind\t<string>', '  metadata\t<ObjectMeta>', '  spec\t<PodSpec>', '  status\t<PodStatus>']);
    assert.match(r.stdout, /\nFIELDS:\n {2}apiVersion\t<string>\n/);
  });

  test(`kubectl ${v}: explain pods.spec.containers`, () => {
    const r = expectRun(v, ['explain', 'pods.spec.containers'], { stdout: /^KIND:       Pod\nVERSION:    v1\n\nFIELD: containers <\[\]Container>\n\n\n?DESCRIPTION:\n/ });
    assert.deepEqual(fieldLines(r.stdout), [
      '  args\t<[]string>',
      '  command\t<[]string>',
      '  env\t<[]EnvVar>',
      '  envFrom\t<[]EnvFromSource>',
      '  image\t<string>',
      '  imagePullPolicy\t<string>',
      '  lifecycle\t<Lifecycle>',
      '  livenessProbe\t<Probe>',
      '  name\t<string> -required-',
      '  ports\t<[]ContainerPort>',
      '  readinessProbe\t<Probe>',
      '  resizePolicy\t<[]ContainerResizePolicy>',
      '  resources\t<ResourceRequirements>',
      '  restartPolicy\t<string>',
      '  securityContext\t<SecurityContext>',
      '  startupProbe\t<Probe>',
      '  stdin\t<boolean>',
      '  stdinOnce\t<boolean>',
      '  terminationMessagePath\t<string>',
      '  terminationMessagePolicy\t<string>',
      '  tty\t<boolean>',
      '  volumeDevices\t<[]VolumeDevice>',
      '  volumeMounts\t<[]VolumeMount>',
      '  workingDir\t<string>',
    ]);
    // the enum line is printed from 1.28 on (1.27's template has no enums)
    if (v !== '1.27') assert.match(r.stdout, /\n {2}imagePullPolicy\t<string>\n {2}enum: Always, IfNotPresent, Never\n/);
  });

  test(`kubectl ${v}: explain deployments.spec --recursive`, () => {
    const r = expectRun(v, ['explain', 'deployments.spec', '--recursive'], {
      stdout: /^GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\nFIELD: spec <DeploymentSpec>\n\n\n?DESCRIPTION:\n/,
    });
    const lines = fieldLines(r.stdout);
    assert.deepEqual(lines.slice(0, 19), [
      '  minReadySeconds\t<integer>',
      '  paused\t<boolean>',
      '  progressDeadlineSeconds\t<integer>',
      '  replicas\t<integer>',
      '  revisionHistoryLimit\t<integer>',
      '  selector\t<LabelSelector> -required-',
      '    matchExpressions\t<[]LabelSelectorRequirement>',
      '      key\t<string> -required-',
      '      operator\t<string> -required-',
      '      values\t<[]string>',
      '    matchLabels\t<map[string]string>',
      '  strategy\t<DeploymentStrategy>',
      '    rollingUpdate\t<RollingUpdateDeployment>',
      '      maxSurge\t<IntOrString>',
      '      maxUnavailable\t<IntOrString>',
      '    type\t<string>',
      '  template\t<PodTemplateSpec> -required-',
      '    metadata\t<ObjectMeta>',
      '      annotations\t<map[string]string>',
    ]);
    for (const l of ['    spec\t<PodSpec>', '      containers\t<[]Container> -required-', '        image\t<string>', '        name\t<string> -required-', '      restartPolicy\t<string>']) assert.ok(lines.includes(l), l);
  });

  test(`kubectl ${v}: explain of a field that does not exist, and of an unknown type`, () => {
    expectRun(v, ['explain', 'pods.spec.foo'], { code: 1, stdout: /^(KIND:       Pod\nVERSION:    v1\n\n)?$/, stderr: 'error: field "foo" does not exist\n' });
    // explain reports the RESTMapper's error without kubectl's "error: " prefix
    expectRun(v, ['explain', 'foos'], { code: 1, stderr: 'the server doesn\'t have a resource type "foos"\n' });
  });
}

for (const v of ['1.33', '1.27'] as Version[]) {
  test(`kubectl ${v}: expose, cluster-info, api-versions, cordon and uncordon, apply --prune`, async () => {
    const ns = `more-${v.replace('.', '-')}`;
    expectRun(v, ['create', 'namespace', ns], { stdout: `namespace/${ns} created\n` });
    // expose: a Service with the Deployment's selector; a NodePort one gets its port allocated
    expectRun(v, ['create', 'deployment', 'web', '-n', ns, '--image=nginx', '--port=8080'], { stdout: 'deployment.apps/web created\n' });
    expectRun(v, ['expose', 'deployment', 'web', '-n', ns, '--port=80', '--target-port=8080'], { code: 0, stdout: 'service/web exposed\n' });
    const svc = (await c.raw('GET', `/api/v1/namespaces/${ns}/services/web`)).json();
    assert.deepEqual([svc.spec.type, svc.spec.selector, svc.spec.ports], ['ClusterIP', { app: 'web' }, [{ port: 80, protocol: 'TCP', targetPort: 8080 }]]);
    assert.match(svc.spec.clusterIP, /^\d+\.\d+\.\d+\.\d+$/);
    expectRun(v, ['expose', 'deployment', 'web', '-n', ns, '--name=web-np', '--type=NodePort', '--port=80'], { stdout: 'service/web-np exposed\n' });
    const np = (await c.raw('GET', `/api/v1/namespaces/${ns}/services/web-np`)).json();
    assert.ok(np.spec.ports[0].nodePort >= 30000 && np.spec.ports[0].nodePort <= 32767, JSON.stringify(np.spec.ports));
    // cluster-info: the control plane's address
    expectRun(v, ['cluster-info'], { code: 0, stdout: new RegExp(`Kubernetes control plane\\S* is running at \\S*https://127\\.0\\.0\\.1:${c.port}`) });
    // api-versions: every group version discovery serves
    const disc = (await c.raw('GET', '/apis')).json();
    const want = ['v1', ...disc.groups.flatMap((g: any) => g.versions.map((x: any) => x.groupVersion))].sort();
    assert.deepEqual(kubectl(v, ['api-versions']).stdout.trim().split('\n'), want);
    // cordon and uncordon set and clear spec.unschedulable
    const node = `cordon-${v.replace('.', '-')}`;
    expectRun(v, ['apply', '-f', '-'], { stdout: `node/${node} created\n` }, JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: node } }));
    expectRun(v, ['cordon', node], { code: 0, stdout: `node/${node} cordoned\n` });
    assert.equal((await c.raw('GET', `/api/v1/nodes/${node}`)).json().spec.unschedulable, true);
    expectRun(v, ['uncordon', node], { code: 0, stdout: `node/${node} uncordoned\n` });
    assert.equal((await c.raw('GET', `/api/v1/nodes/${node}`)).json().spec.unschedulable, undefined);
    expectRun(v, ['delete', 'node', node], { stdout: `node "${node}" deleted\n` });
    // apply --prune: what the set no longer holds is deleted
    const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n  labels: {set: pruned}\ndata: {k: v}\n`;
    const both = c.file(`prune-${v}-both.yaml`, `${cm('keep')}---\n${cm('drop')}`);
    const one = c.file(`prune-${v}-one.yaml`, cm('keep'));
    expectRun(v, ['apply', '-f', both, '-l', 'set=pruned', '--prune', '--prune-allowlist=core/v1/ConfigMap'], { stdout: 'configmap/keep created\nconfigmap/drop created\n' });
    expectRun(v, ['apply', '-f', one, '-l', 'set=pruned', '--prune', '--prune-allowlist=core/v1/ConfigMap'], { code: 0, stdout: `configmap/keep unchanged\nconfigmap/drop pruned\n` });
    assert.equal((await c.raw('GET', `/api/v1/namespaces/${ns}/configmaps/drop`)).status, 404);
    expectRun(v, ['delete', 'namespace', ns, '--wait=false'], { stdout: `namespace "${ns}" deleted\n` });
  });
}

// kubectl's generators and the commands that patch a workload's pod template, each checked in
// what the server stored: the objects must pass the server's validation as kubectl builds them
test('kubectl 1.33: create ingress, poddisruptionbudget, priorityclass, service nodeport; set env and set resources; replace --force', async () => {
  const v: Version = '1.33';
  const ns = 'generators';
  expectRun(v, ['create', 'namespace', ns], { stdout: `namespace/${ns} created\n` });
  expectRun(v, ['create', 'ingress', 'web', '-n', ns, '--class=nginx', '--rule=foo.com/bar*=svc1:8080,tls=my-cert', '--rule=/path=svc2:http', '--annotation=a=b'], { stdout: 'ingress.networking.k8s.io/web created\n' });
  const ing = (await c.raw('GET', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/web`)).json();
  assert.deepEqual(ing.spec, {
    ingressClassName: 'nginx',
    rules: [
      { host: 'foo.com', http: { paths: [{ path: '/bar', pathType: 'Prefix', backend: { service: { name: 'svc1', port: { number: 8080 } } } }] } },
      { http: { paths: [{ path: '/path', pathType: 'Exact', backend: { service: { name: 'svc2', port: { name: 'http' } } } }] } },
    ],
    tls: [{ hosts: ['foo.com'], secretName: 'my-cert' }],
  });
  assert.deepEqual(ing.metadata.annotations, { a: 'b' });
  expectRun(v, ['get', 'ingress', 'web', '-n', ns, '--no-headers'], { stdout: /^web\s+nginx\s+foo\.com\s+80, 443\s+\d+s\n$/ });
  expectRun(v, ['create', 'poddisruptionbudget', 'pdb1', '-n', ns, '--selector=app=web', '--min-available=1'], { stdout: 'poddisruptionbudget.policy/pdb1 created\n' });
  const pdb = (await c.raw('GET', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/pdb1`)).json();
  assert.deepEqual(pdb.spec, { minAvailable: 1, selector: { matchLabels: { app: 'web' } } });
  expectRun(v, ['create', 'priorityclass', 'gen-high', '--value=1000', '--description=high', '--preemption-policy=Never'], { stdout: 'priorityclass.scheduling.k8s.io/gen-high created\n' });
  const pc = (await c.raw('GET', '/apis/scheduling.k8s.io/v1/priorityclasses/gen-high')).json();
  // (globalDefault false is omitted: the type's omitempty)
  assert.deepEqual([pc.value, pc.description, pc.preemptionPolicy, pc.globalDefault], [1000, 'high', 'Never', undefined]);
  // a NodePort Service: its port allocated, or the one asked for; a port taken is refused
  expectRun(v, ['create', 'service', 'nodeport', 'np1', '-n', ns, '--tcp=5678:8080'], { stdout: 'service/np1 created\n' });
  const np1 = (await c.raw('GET', `/api/v1/namespaces/${ns}/services/np1`)).json();
  assert.equal(np1.spec.type, 'NodePort');
  assert.ok(np1.spec.ports[0].nodePort >= 30000 && np1.spec.ports[0].nodePort <= 32767, JSON.stringify(np1.spec.ports));
  expectRun(v, ['create', 'service', 'nodeport', 'np2', '-n', ns, '--tcp=80:80', '--node-port=30123'], { stdout: 'service/np2 created\n' });
  assert.equal((await c.raw('GET', `/api/v1/namespaces/${ns}/services/np2`)).json().spec.ports[0].nodePort, 30123);
  expectRun(v, ['create', 'service', 'nodeport', 'np3', '-n', ns, '--tcp=80:80', '--node-port=30123'], {
    code: 1,
    stderr: 'error: failed to create NodePort service: Service "np3" is invalid: spec.ports[0].nodePort: Invalid value: 30123: provided port is already allocated\n',
  });
  // set env and set resources: strategic merge patches of the pod template
  expectRun(v, ['create', 'deployment', 'web', '-n', ns, '--image=nginx'], { stdout: 'deployment.apps/web created\n' });
  expectRun(v, ['set', 'env', 'deployment/web', '-n', ns, 'FOO=bar', 'BAZ=1'], { stdout: 'deployment.apps/web env updated\n' });
  expectRun(v, ['set', 'env', 'deployment/web', '-n', ns, '--list'], { stdout: '# Deployment web, container nginx\nFOO=bar\nBAZ=1\n' });
  expectRun(v, ['set', 'resources', 'deployment', 'web', '-n', ns, '--limits=cpu=200m,memory=512Mi', '--requests=cpu=100m'], { stdout: 'deployment.apps/web resource requirements updated\n' });
  const ctr = (await c.raw('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`)).json().spec.template.spec.containers[0];
  assert.deepEqual([ctr.env, ctr.resources], [[{ name: 'FOO', value: 'bar' }, { name: 'BAZ', value: '1' }], { limits: { cpu: '200m', memory: '512Mi' }, requests: { cpu: '100m' } }]);
  // replace --force: deleted, then created again from the file
  expectRun(v, ['create', 'configmap', 'rf', '-n', ns, '--from-literal=a=1'], { stdout: 'configmap/rf created\n' });
  const before = (await c.raw('GET', `/api/v1/namespaces/${ns}/configmaps/rf`)).json();
  const file = c.file('replace-force.yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rf\n  namespace: ${ns}\ndata:\n  a: "2"\n`);
  expectRun(v, ['replace', '--force', '-f', file], { stdout: 'configmap "rf" deleted\nconfigmap/rf replaced\n' });
  const after = (await c.raw('GET', `/api/v1/namespaces/${ns}/configmaps/rf`)).json();
  assert.equal(after.data.a, '2');
  assert.notEqual(after.metadata.uid, before.metadata.uid);
  expectRun(v, ['delete', 'priorityclass', 'gen-high'], { stdout: 'priorityclass.scheduling.k8s.io "gen-high" deleted\n' });
  expectRun(v, ['delete', 'namespace', ns, '--wait=false'], { stdout: `namespace "${ns}" deleted\n` });
});
