// `keelson patch` against `kubectl patch` (1.33) for the ways of reaching and authenticating to
// the server: kubeconfig loading (--kubeconfig, the $KUBECONFIG list merged in order,
// ~/.kube/config, --context, --cluster, --user), exec credential plugins, bearer tokens, client
// certificates given by flag, --certificate-authority and --tls-server-name, -f URL, the kuberc
// preferences, and `options`. Same method as patch.test.ts: recreate the objects, run kubectl,
// recreate, run keelson, compare stdout, stderr and exit code (kubectl is right).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync, existsSync, chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import YAML from 'yaml';
import { startCluster, KEELSON, kubectlBinary, type Cluster, type RunResult } from './harness.js';

let c: Cluster;
const NS = 'patch-conn';
let dir: string;
let web: http.Server;
let webURL: string;

/** Runs a command without blocking this process (its HTTP server answers -f URL requests). */
function run(bin: 'kubectl' | 'keelson', args: string[], env: Record<string, string> = {}, command = 'patch'): Promise<RunResult> {
  const e = { PATH: process.env.PATH ?? '', HOME: c.home, KUBECONFIG: c.kubeconfig, ...env };
  const cmd = bin === 'kubectl' ? kubectlBinary('1.33') : process.execPath;
  const argv = bin === 'kubectl' ? [command, ...args] : [KEELSON, command, ...args];
  return new Promise((resolve) => {
    const p = spawn(cmd, argv, { env: e, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), 60_000);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

function normalize(s: string, bin: 'kubectl' | 'keelson'): string {
  let out = s
    .replace(/^([IWEF])\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ [^\]\s]+\] /gm, '$1 <klog>] ')
    .replace(/^(\s*(?:- )?)(resourceVersion|uid|creationTimestamp|time): .*$/gm, '$1$2: <v>');
  if (bin === 'kubectl') out = out.replace(/\bkubectl(?:\.1\.33)? (patch|options|get)\b/g, 'keelson $1').replace(/"kubectl options"/g, '"keelson options"');
  return out;
}

async function recreateCM(name: string): Promise<void> {
  const p = `/api/v1/namespaces/${NS}/configmaps`;
  await c.raw('DELETE', `${p}/${name}`);
  const r = await c.raw('POST', `${p}?fieldManager=e2e-setup`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { a: '1' } } });
  assert.equal(r.status, 201, r.text);
}

async function differential(args: string[], env: Record<string, string> = {}, command = 'patch'): Promise<void> {
  await recreateCM('c1');
  const a = await run('kubectl', args, env, command);
  await recreateCM('c1');
  const b = await run('keelson', args, env, command);
  assert.deepEqual(
    { code: b.code, stdout: normalize(b.stdout, 'keelson'), stderr: normalize(b.stderr, 'keelson') },
    { code: a.code, stdout: normalize(a.stdout, 'kubectl'), stderr: normalize(a.stderr, 'kubectl') },
    `${command} ${args.join(' ')}`,
  );
}

/** A kubeconfig document built from the cluster's, with the given changes. */
function kubeconfig(name: string, edit: (kc: any) => void): string {
  const kc = structuredClone(baseConfig);
  edit(kc);
  const p = join(dir, name);
  writeFileSync(p, YAML.stringify(kc));
  return p;
}

let baseConfig: any;
const PATCH = ['cm', 'c1', '-n', NS, '-p', '{"data":{"b":"2"}}'];

before(async () => {
  c = await startCluster();
  dir = join(c.home, 'conn');
  mkdirSync(dir, { recursive: true });
  const ns = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  assert.equal(ns.status, 201, ns.text);
  baseConfig = YAML.parse((await import('node:fs')).readFileSync(c.kubeconfig, 'utf8'));
  const creds = c.credentials;
  writeFileSync(join(dir, 'ca.crt'), creds.ca);
  writeFileSync(join(dir, 'admin.crt'), creds.cert);
  writeFileSync(join(dir, 'admin.key'), creds.key);
  // an exec credential plugin handing out the admin certificate
  const plugin = join(dir, 'plugin.mjs');
  writeFileSync(
    plugin,
    `#!/usr/bin/env node\nconst fs = await import('node:fs');\nconst info = JSON.parse(process.env.KUBERNETES_EXEC_INFO || '{}');\nif (process.env.FAIL_PLUGIN) { process.stderr.write('plugin says no\\n'); process.exit(3); }\nprocess.stdout.write(JSON.stringify({ kind: 'ExecCredential', apiVersion: info.apiVersion || 'client.authentication.k8s.io/v1', status: { clientCertificateData: fs.readFileSync(${JSON.stringify(join(dir, 'admin.crt'))}, 'utf8'), clientKeyData: fs.readFileSync(${JSON.stringify(join(dir, 'admin.key'))}, 'utf8') } }));\n`,
  );
  chmodSync(plugin, 0o755);
  // a manifest server for -f URL
  writeFileSync(join(dir, 'c1.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\n  namespace: ${NS}\n`);
  web = http.createServer((req, res) => {
    if (req.url === '/c1.yaml') {
      res.writeHead(200, { 'content-type': 'application/yaml' });
      res.end(`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\n  namespace: ${NS}\n`);
      return;
    }
    res.writeHead(404);
    res.end('no');
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', () => r()));
  webURL = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
});

after(async () => {
  web?.close();
  await c?.stop();
});

const user = () => baseConfig.users[0].name as string;
const cluster = () => baseConfig.clusters[0].name as string;
const context = () => baseConfig.contexts[0].name as string;

test('--kubeconfig', () => differential([...PATCH, '--kubeconfig', c.kubeconfig], { KUBECONFIG: '' }));

test('~/.kube/config', async () => {
  const home = join(dir, 'home');
  mkdirSync(join(home, '.kube'), { recursive: true });
  writeFileSync(join(home, '.kube', 'config'), YAML.stringify(baseConfig));
  await differential(PATCH, { KUBECONFIG: '', HOME: home });
});

test('$KUBECONFIG list merged in order', async () => {
  // the first file names the context and cluster; the second supplies the user; a third,
  // missing, is skipped; a fourth tries to redefine the cluster and loses
  const a = kubeconfig('kc-a.yaml', (kc) => {
    kc.users = [];
  });
  const b = kubeconfig('kc-b.yaml', (kc) => {
    kc.clusters = [];
    kc.contexts = [];
    delete kc['current-context'];
  });
  const d = kubeconfig('kc-d.yaml', (kc) => {
    kc.clusters[0].cluster.server = 'https://127.0.0.1:1';
    kc.users = [];
  });
  await differential(PATCH, { KUBECONFIG: [a, b, join(dir, 'missing.yaml'), d].join(':') });
});

test('--context picks a context and its namespace', async () => {
  const p = kubeconfig('kc-ctx.yaml', (kc) => {
    kc.contexts.push({ name: 'in-ns', context: { cluster: cluster(), user: user(), namespace: NS } });
  });
  await differential(['cm', 'c1', '-p', '{"data":{"b":"2"}}', '--context', 'in-ns'], { KUBECONFIG: p });
});

test('--cluster and --user select entries', async () => {
  const p = kubeconfig('kc-cu.yaml', (kc) => {
    kc.clusters.push({ name: 'other', cluster: { ...kc.clusters[0].cluster } });
    kc.clusters[0].cluster.server = 'https://127.0.0.1:1';
    kc.users.push({ name: 'other-user', user: { ...kc.users[0].user } });
    kc.users[0].user = {};
  });
  await differential([...PATCH, '--cluster', 'other', '--user', 'other-user'], { KUBECONFIG: p });
});

test('exec credential plugin', async () => {
  const p = kubeconfig('kc-exec.yaml', (kc) => {
    kc.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: join(dir, 'plugin.mjs'), interactiveMode: 'Never' } };
  });
  await differential(PATCH, { KUBECONFIG: p });
});

test('exec credential plugin that fails', async () => {
  const p = kubeconfig('kc-exec-fail.yaml', (kc) => {
    kc.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: join(dir, 'plugin.mjs'), interactiveMode: 'Never' } };
  });
  await differential(PATCH, { KUBECONFIG: p, FAIL_PLUGIN: '1' });
});

test('exec credential plugin that is not there', async () => {
  const p = kubeconfig('kc-exec-missing.yaml', (kc) => {
    kc.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: join(dir, 'no-such-plugin'), interactiveMode: 'Never' } };
  });
  await differential(PATCH, { KUBECONFIG: p });
});

test('a server name the certificate does not cover', () => differential([...PATCH, '--tls-server-name', 'wrong.example']));

test('a CA that did not sign the server certificate', async () => {
  const p = kubeconfig('kc-other-ca.yaml', (kc) => {
    // the client certificate as CA: a valid PEM certificate that signed nothing the server shows
    kc.clusters[0].cluster['certificate-authority-data'] = kc.users[0].user['client-certificate-data'];
  });
  await differential(PATCH, { KUBECONFIG: p });
});

test('a server without a scheme is plain HTTP', () => differential([...PATCH, '-s', `127.0.0.1:${c.port}`]));

test('--as-group without --as', () => differential([...PATCH, '--as-group', 'g1']));

test('--as-uid without --as, no -n', () => differential(['cm', 'c1', '-p', '{}', '--as-uid', 'u1']));

test('client certificate and key by flag, CA by flag', async () => {
  const p = kubeconfig('kc-nocreds.yaml', (kc) => {
    kc.users[0].user = {};
    delete kc.clusters[0].cluster['certificate-authority-data'];
  });
  await differential([...PATCH, '--client-certificate', join(dir, 'admin.crt'), '--client-key', join(dir, 'admin.key'), '--certificate-authority', join(dir, 'ca.crt')], { KUBECONFIG: p });
});

test('-s and --tls-server-name', async () => {
  await differential([...PATCH, '-s', `https://127.0.0.1:${c.port}`, '--tls-server-name', 'localhost']);
});

test('a bearer token the server does not know', async () => {
  const p = kubeconfig('kc-token.yaml', (kc) => {
    kc.users[0].user = { token: 'not-a-token' };
  });
  await differential(PATCH, { KUBECONFIG: p });
});

test('--token overrides the certificate', () => differential([...PATCH, '--token', 'not-a-token']));

test('basic auth', async () => {
  const p = kubeconfig('kc-basic.yaml', (kc) => {
    kc.users[0].user = {};
  });
  await differential([...PATCH, '--username', 'admin', '--password', 'secret'], { KUBECONFIG: p });
});

test('-f URL', () => differential(['-f', `${webURL}/c1.yaml`, '-p', '{"data":{"u":"1"}}']));

test('-f URL not found', () => differential(['-f', `${webURL}/nope.yaml`, '-p', '{}']));

test('kuberc overrides (KUBECTL_KUBERC=true)', async () => {
  const rc = join(dir, 'kuberc');
  writeFileSync(rc, 'apiVersion: kubectl.config.k8s.io/v1alpha1\nkind: Preference\noverrides:\n- command: patch\n  flags:\n  - name: output\n    default: name\n');
  await differential([...PATCH, '--kuberc', rc], { KUBECTL_KUBERC: 'true' });
  await differential([...PATCH, '--kuberc', rc, '-o', 'jsonpath={.data.b}'], { KUBECTL_KUBERC: 'true' });
  await differential([...PATCH, '--kuberc', join(dir, 'missing-kuberc')], { KUBECTL_KUBERC: 'true' });
});

test('--kuberc is not a flag unless KUBECTL_KUBERC=true', () => differential([...PATCH, '--kuberc', 'x']));

test('options', () => differential([], {}, 'options'));

// keelson-only checks: what kubectl cannot show against this server

test('--match-server-version accepts the same build', async () => {
  await recreateCM('c1');
  const r = await run('keelson', [...PATCH, '--match-server-version']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'configmap/c1 patched\n');
});

test('--profile cpu writes a profile', async () => {
  await recreateCM('c1');
  const out = join(dir, 'cpu.prof');
  const r = await run('keelson', [...PATCH, '--profile', 'cpu', '--profile-output', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(existsSync(out) && statSync(out).size > 0);
});

test('-v=6 logs each request', async () => {
  await recreateCM('c1');
  const r = await run('keelson', [...PATCH, '-v=6']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /"Response" verb="PATCH" url="https:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\/patch-conn\/configmaps\/c1\?fieldManager=kubectl-patch" status="200 OK" milliseconds=\d+/);
});

test('storage-driver options are accepted and ignored', async () => {
  await recreateCM('c1');
  const r = await run('keelson', [...PATCH, '--storage-driver-db', 'x', '--storage-driver-secure', '--storage-driver-buffer-duration', '2m']);
  assert.equal(r.code, 0, r.stderr);
});
