// Tests for src/client/kubeconfig.ts (kept under test/cli/ with the other command-line plumbing).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYAML } from 'yaml';
import {
  writeKubeconfig, kubeconfigYAML, loadKubeconfig, loadRawConfig, kubeconfigPrecedence, parseKubeconfig, tlsOptions, authHeaders,
  normalizeServer, ExecCredentialProvider, KubeconfigError,
} from '../../src/client/kubeconfig.js';
import { tempDir } from '../tempdir.js';

const haveKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
const CA = '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nCERT\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN EC PRIVATE KEY-----\nKEY\n-----END EC PRIVATE KEY-----\n';

function tmp(): string {
  return tempDir('keelson-kubeconfig-');
}

function b64(s: string): string {
  return Buffer.from(s).toString('base64');
}

/** A kubeconfig document from compact parts. */
function doc(parts: {
  current?: string;
  clusters?: Record<string, Record<string, unknown>>;
  users?: Record<string, Record<string, unknown>>;
  contexts?: Record<string, Record<string, unknown>>;
}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': parts.current ?? '',
    clusters: Object.entries(parts.clusters ?? {}).map(([name, cluster]) => ({ name, cluster })),
    users: Object.entries(parts.users ?? {}).map(([name, user]) => ({ name, user })),
    contexts: Object.entries(parts.contexts ?? {}).map(([name, context]) => ({ name, context })),
  });
}

function kubectl(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('kubectl', args, { env: { ...process.env, HOME: tmp(), ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

async function rejectsWith(p: Promise<unknown>, message: string | RegExp): Promise<void> {
  await assert.rejects(p, (e: Error) => {
    assert.ok(e instanceof KubeconfigError, `${e.constructor.name}: ${e.message}`);
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
}

describe('writing', () => {
  test('writeKubeconfig embeds the data, as kubeadm writes admin.conf, with mode 0600', async () => {
    const dir = tmp();
    const path = join(dir, 'sub', 'admin.conf');
    writeKubeconfig(path, { server: 'https://127.0.0.1:6443', caPEM: CA, clientCertPEM: CERT, clientKeyPEM: KEY, clusterName: 'keelson', userName: 'admin', contextName: 'admin@keelson', namespace: 'kube-system' });
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const y = parseYAML(readFileSync(path, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(y, {
      apiVersion: 'v1',
      clusters: [{ cluster: { 'certificate-authority-data': b64(CA), server: 'https://127.0.0.1:6443' }, name: 'keelson' }],
      contexts: [{ context: { cluster: 'keelson', namespace: 'kube-system', user: 'admin' }, name: 'admin@keelson' }],
      'current-context': 'admin@keelson',
      kind: 'Config',
      preferences: {},
      users: [{ name: 'admin', user: { 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY) } }],
    });
    const conn = await loadKubeconfig({ explicitPath: path });
    assert.equal(conn.server, 'https://127.0.0.1:6443');
    assert.equal(conn.ca, CA);
    assert.equal(conn.cert, CERT);
    assert.equal(conn.key, KEY);
    assert.equal(conn.namespace, 'kube-system');
    assert.equal(conn.namespaceExplicit, true);
    assert.equal(conn.contextName, 'admin@keelson');
    // defaults follow kubeadm's names
    assert.match(kubeconfigYAML({ server: 'https://x' }), /current-context: kubernetes-admin@kubernetes/);
  });

  test('names YAML would read as other types or structure are quoted, and read back as written', () => {
    const text = kubeconfigYAML({ server: 'https://[::1]:6443', clusterName: 'true', userName: '123', contextName: 'a: b #c', namespace: "it's", token: '-x', insecureSkipTLSVerify: true });
    assert.deepEqual(parseYAML(text), {
      apiVersion: 'v1',
      clusters: [{ cluster: { 'insecure-skip-tls-verify': true, server: 'https://[::1]:6443' }, name: 'true' }],
      contexts: [{ context: { cluster: 'true', namespace: "it's", user: '123' }, name: 'a: b #c' }],
      'current-context': 'a: b #c',
      kind: 'Config',
      preferences: {},
      users: [{ name: '123', user: { token: '-x' } }],
    });
    // kubeadm's layout: sequences not indented under their key
    assert.match(text, /^clusters:\n- cluster:\n {4}insecure-skip-tls-verify: true\n/m);
  });

  test('kubectl reads what we write', { skip: !haveKubectl && 'kubectl not installed' }, async () => {
    const path = join(tmp(), 'config');
    writeKubeconfig(path, { server: 'https://10.0.0.1:6443', caPEM: CA, token: 'abc', userName: 'bot', namespace: 'team-a' });
    const out = JSON.parse(await kubectl(['config', 'view', '--raw', '-o', 'json', '--kubeconfig', path], {})) as {
      clusters: { cluster: { server: string; 'certificate-authority-data': string } }[]; users: { user: { token: string } }[];
      contexts: { context: { namespace: string } }[]; 'current-context': string;
    };
    assert.equal(out.clusters[0]!.cluster.server, 'https://10.0.0.1:6443');
    assert.equal(out.clusters[0]!.cluster['certificate-authority-data'], b64(CA));
    assert.equal(out.users[0]!.user.token, 'abc');
    assert.equal(out.contexts[0]!.context.namespace, 'team-a');
    assert.equal(out['current-context'], 'bot@kubernetes');
  });
});

describe('loading rules', () => {
  function mergeFixture() {
    const dir = tmp();
    const f1 = join(dir, 'one');
    const f2 = join(dir, 'two');
    const f3 = join(dir, 'three');
    writeFileSync(f1, doc({
      clusters: { shared: { server: 'https://one:6443' }, onlyOne: { server: 'https://only-one:6443' } },
      users: { alice: { token: 'alice-from-one' } },
      contexts: { ctxA: { cluster: 'shared', user: 'alice' } },
    }));
    writeFileSync(f2, doc({
      current: 'ctxB',
      clusters: { shared: { server: 'https://two:6443' }, onlyTwo: { server: 'https://only-two:6443' } },
      users: { alice: { token: 'alice-from-two' }, bob: { token: 'bob' } },
      contexts: { ctxA: { cluster: 'onlyTwo', user: 'bob' }, ctxB: { cluster: 'shared', user: 'alice', namespace: 'b-ns' } },
    }));
    writeFileSync(f3, doc({ current: 'ctxA', contexts: { ctxC: { cluster: 'onlyOne', user: 'bob' } } }));
    return { dir, f1, f2, f3, env: [f1, join(dir, 'missing'), f2, f3, f1].join(':') };
  }

  test('KUBECONFIG files merge: first definition of a name wins, first current-context wins, missing files are skipped', async () => {
    const { f1, f2, f3, env } = mergeFixture();
    assert.deepEqual(kubeconfigPrecedence({ kubeconfigEnv: env }), [f1, env.split(':')[1], f2, f3]);
    const raw = loadRawConfig({ kubeconfigEnv: env });
    assert.deepEqual(raw.files, [f1, f2, f3]);
    assert.equal(raw.missing.length, 1);
    assert.equal(raw.config.currentContext, 'ctxB');
    assert.equal(raw.config.clusters.shared!.server, 'https://one:6443');
    assert.deepEqual(Object.keys(raw.config.contexts).sort(), ['ctxA', 'ctxB', 'ctxC']);
    assert.deepEqual(raw.config.contexts.ctxA, { cluster: 'shared', user: 'alice', namespace: undefined, locationOfOrigin: f1 });
    const conn = await loadKubeconfig({ kubeconfigEnv: env });
    assert.equal(conn.contextName, 'ctxB');
    assert.equal(conn.server, 'https://one:6443');
    assert.equal(conn.token, 'alice-from-one');
    assert.equal(conn.namespace, 'b-ns');
  });

  test('the same merge as kubectl computes it', { skip: !haveKubectl && 'kubectl not installed' }, async () => {
    const { env } = mergeFixture();
    for (const ctx of ['', 'ctxA', 'ctxC']) {
      const args = ['config', 'view', '--minify', '--raw', '-o', 'json', ...(ctx ? ['--context', ctx] : [])];
      const k = JSON.parse(await kubectl(args, { KUBECONFIG: env })) as { clusters: { cluster: { server: string } }[]; users: { user: { token: string } }[] };
      const ours = await loadKubeconfig({ kubeconfigEnv: env, context: ctx || undefined });
      assert.equal(ours.server, k.clusters[0]!.cluster.server, ctx);
      assert.equal(ours.token, k.users[0]!.user.token, ctx);
    }
  });

  test('an explicit path is the only file read and must exist; ~/.kube/config is the fallback', async () => {
    const { f2, f3, env, dir } = mergeFixture();
    // with an explicit path, KUBECONFIG is ignored: ctxC's cluster and user are not in f3
    await rejectsWith(loadKubeconfig({ explicitPath: f3, kubeconfigEnv: env, context: 'ctxC' }),
      'invalid configuration: [cluster "onlyOne" was not found for context "ctxC", user "bob" was not found for context "ctxC"]');
    await rejectsWith(loadKubeconfig({ explicitPath: f3 }), 'context was not found for specified context: ctxA');
    await rejectsWith(loadKubeconfig({ explicitPath: join(dir, 'nope') }), `stat ${join(dir, 'nope')}: no such file or directory`);
    const home = tmp();
    mkdirSync(join(home, '.kube'));
    writeFileSync(join(home, '.kube', 'config'), readFileSync(f2));
    const viaHome = await loadKubeconfig({ kubeconfigEnv: '', homeDir: home });
    assert.equal(viaHome.server, 'https://two:6443');
    await rejectsWith(loadKubeconfig({ kubeconfigEnv: '', homeDir: tmp(), inCluster: { host: '', port: '' } }),
      'invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable');
  });

  test('file references are relative to the kubeconfig that holds them', async () => {
    const dir = tmp();
    mkdirSync(join(dir, 'conf', 'certs'), { recursive: true });
    mkdirSync(join(dir, 'pki'));
    writeFileSync(join(dir, 'pki', 'ca.crt'), CA);
    writeFileSync(join(dir, 'conf', 'certs', 'admin.crt'), CERT);
    writeFileSync(join(dir, 'conf', 'certs', 'admin.key'), KEY);
    writeFileSync(join(dir, 'conf', 'token'), 'file-token\n');
    writeFileSync(join(dir, 'conf', 'config'), doc({
      current: 'a',
      clusters: { c: { server: 'https://x:6443', 'certificate-authority': '../pki/ca.crt' } },
      users: { u: { 'client-certificate': 'certs/admin.crt', 'client-key': join(dir, 'conf', 'certs', 'admin.key') }, t: { tokenFile: 'token' } },
      contexts: { a: { cluster: 'c', user: 'u' }, b: { cluster: 'c', user: 't' } },
    }));
    const raw = loadRawConfig({ explicitPath: join(dir, 'conf', 'config') });
    assert.equal(raw.config.clusters.c!.certificateAuthority, join(dir, 'pki', 'ca.crt'));
    assert.equal(raw.config.users.u!.clientCertificate, join(dir, 'conf', 'certs', 'admin.crt'));
    const a = await loadKubeconfig({ explicitPath: join(dir, 'conf', 'config') });
    assert.deepEqual([a.ca, a.cert, a.key], [CA, CERT, KEY]);
    const b = await loadKubeconfig({ explicitPath: join(dir, 'conf', 'config'), context: 'b' });
    assert.equal(b.token, 'file-token');
    assert.equal(b.tokenFile, join(dir, 'conf', 'token'));
    assert.equal(b.namespace, 'default');
    assert.equal(b.namespaceExplicit, false);
  });
});

describe('overrides and validation', () => {
  function fixture(): string {
    const path = join(tmp(), 'config');
    writeFileSync(path, doc({
      current: 'main',
      clusters: { prod: { server: 'https://prod:6443', 'certificate-authority-data': b64(CA), 'tls-server-name': 'api.prod' }, dev: { server: 'dev.local:8443', 'insecure-skip-tls-verify': true } },
      users: { admin: { 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY) }, bot: { token: 'bot-token', as: 'jane', 'as-groups': ['devs'] }, basic: { username: 'u', password: 'p' } },
      contexts: { main: { cluster: 'prod', user: 'admin', namespace: 'apps' }, dev: { cluster: 'dev', user: 'bot' } },
    }));
    return path;
  }

  test('--context, --cluster, --user, --namespace, --server, --token, --insecure-skip-tls-verify', async () => {
    const path = fixture();
    const main = await loadKubeconfig({ explicitPath: path });
    assert.deepEqual([main.server, main.tlsServerName, main.namespace, main.userName], ['https://prod:6443', 'api.prod', 'apps', 'admin']);
    const dev = await loadKubeconfig({ explicitPath: path, context: 'dev' });
    assert.equal(dev.server, 'https://dev.local:8443'); // no scheme: https since TLS is configured
    assert.equal(dev.insecureSkipTLSVerify, true);
    assert.deepEqual(dev.impersonate, { user: 'jane', uid: undefined, groups: ['devs'], extra: undefined });
    const mixed = await loadKubeconfig({ explicitPath: path, cluster: 'dev', user: 'bot', namespace: 'other' });
    assert.deepEqual([mixed.contextName, mixed.clusterName, mixed.userName, mixed.namespace], ['main', 'dev', 'bot', 'other']);
    const insecure = await loadKubeconfig({ explicitPath: path, insecureSkipTLSVerify: true, server: 'https://10.0.0.9:6443', token: 'override' });
    assert.equal(insecure.ca, undefined);
    assert.equal(insecure.insecureSkipTLSVerify, true);
    assert.equal(insecure.server, 'https://10.0.0.9:6443');
    assert.equal(insecure.token, 'override');
    assert.deepEqual(tlsOptions(insecure), { rejectUnauthorized: false, cert: CERT, key: KEY, servername: 'api.prod' });
    assert.deepEqual(tlsOptions(main), { rejectUnauthorized: true, ca: CA, cert: CERT, key: KEY, servername: 'api.prod' });
    assert.deepEqual(authHeaders(dev), { Authorization: 'Bearer bot-token', 'Impersonate-User': 'jane', 'Impersonate-Group': ['devs'] });
    const basic = await loadKubeconfig({ explicitPath: path, user: 'basic' });
    assert.deepEqual(authHeaders(basic), { Authorization: 'Basic ' + b64('u:p') });
  });

  test('client-go messages for unusable configurations', async () => {
    const path = fixture();
    await rejectsWith(loadKubeconfig({ explicitPath: path, context: 'nope' }), 'context was not found for specified context: nope');
    await rejectsWith(loadKubeconfig({ explicitPath: path, user: 'ghost' }), 'invalid configuration: auth info "ghost" does not exist');
    await rejectsWith(loadKubeconfig({ explicitPath: path, cluster: 'ghost' }), 'invalid configuration: cluster "ghost" does not exist');
    await rejectsWith(loadKubeconfig({ explicitPath: path, user: 'basic', token: 't' }), 'invalid configuration: more than one authentication method found for basic; found [token basicAuth], only one is allowed');
    const bad = join(tmp(), 'bad');
    writeFileSync(bad, doc({
      current: 'x',
      clusters: { c: { server: 'https://c', 'certificate-authority': '/nonexistent/ca.crt' }, i: { server: 'https://i', 'insecure-skip-tls-verify': true, 'certificate-authority-data': b64(CA) } },
      users: { u: { 'client-certificate-data': b64(CERT) } },
      contexts: { x: { cluster: 'c', user: 'u' }, y: { cluster: 'i', user: 'v' }, z: { cluster: 'c', user: 'w' } },
    }));
    await rejectsWith(loadKubeconfig({ explicitPath: bad }), 'invalid configuration: client-key-data or client-key must be specified for u to use the clientCert authentication method.');
    await rejectsWith(loadKubeconfig({ explicitPath: bad, context: 'y' }), 'invalid configuration: user "v" was not found for context "y"');
    await rejectsWith(loadKubeconfig({ explicitPath: bad, context: 'y', user: 'u', clientKey: '/k' }), 'specifying a root certificates file with the insecure flag is not allowed');
    await rejectsWith(loadKubeconfig({ explicitPath: bad, context: 'x', clientKey: '/dev/null' }), 'unable to read certificate-authority /nonexistent/ca.crt for c due to open /nonexistent/ca.crt: no such file or directory');
    assert.throws(() => parseKubeconfig('clusters: 3', 'f'), { message: 'error loading config file "f": clusters must be a list' });
    assert.equal(normalizeServer('10.0.0.1:6443', false), 'http://10.0.0.1:6443');
    assert.equal(normalizeServer('https://h:1/', true), 'https://h:1');
  });

  test('in-cluster service account settings when nothing is configured', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'token'), 'sa-token\n');
    writeFileSync(join(dir, 'ca.crt'), CA);
    writeFileSync(join(dir, 'namespace'), 'kube-system');
    const conn = await loadKubeconfig({
      kubeconfigEnv: join(dir, 'absent'),
      inCluster: { host: '10.96.0.1', port: '443', tokenFile: join(dir, 'token'), caFile: join(dir, 'ca.crt'), namespaceFile: join(dir, 'namespace') },
    });
    assert.deepEqual([conn.server, conn.token, conn.ca, conn.namespace, conn.tokenFile], ['https://10.96.0.1:443', 'sa-token', CA, 'kube-system', join(dir, 'token')]);
  });
});

describe('exec credential plugins', () => {
  /** Writes the plugin script the kubeconfigs below run; its behaviour is chosen by its first argument. */
  function plugin(dir: string): string {
    const path = join(dir, 'plugin.cjs');
    writeFileSync(path, `#!/usr/bin/env node
const fs = require('fs');
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
if (process.env.COUNTER_FILE) fs.appendFileSync(process.env.COUNTER_FILE, 'x');
const mode = process.argv[2];
const out = (o) => process.stdout.write(JSON.stringify(o));
switch (mode) {
  case 'token': out({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: { token: 'tok-' + process.env.SUFFIX + ':' + JSON.stringify(info.spec), expirationTimestamp: process.env.EXPIRES || undefined } }); break;
  case 'cert': out({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: { clientCertificateData: 'C', clientKeyData: 'K' } }); break;
  case 'certonly': out({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: { clientCertificateData: 'C' } }); break;
  case 'wrongversion': out({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { token: 'x' } }); break;
  case 'nostatus': out({ apiVersion: info.apiVersion, kind: 'ExecCredential' }); break;
  case 'empty': out({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: {} }); break;
  case 'garbage': process.stdout.write('not json'); break;
  case 'fail': process.exit(3);
}
`);
    chmodSync(path, 0o755);
    return path;
  }

  function kubeconfigWithExec(dir: string, exec: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
    const path = join(dir, 'config');
    writeFileSync(path, doc({
      current: 'c',
      clusters: { k: { server: 'https://k:6443', 'certificate-authority-data': b64(CA), ...cluster } },
      users: { u: { exec } },
      contexts: { c: { cluster: 'k', user: 'u' } },
    }));
    return path;
  }

  test('v1: runs the command (relative to the kubeconfig), passes env and KUBERNETES_EXEC_INFO, uses the token', async () => {
    const dir = tmp();
    plugin(dir);
    const path = kubeconfigWithExec(dir, {
      apiVersion: 'client.authentication.k8s.io/v1', command: './plugin.cjs', args: ['token'], env: [{ name: 'SUFFIX', value: 'one' }], interactiveMode: 'Never', provideClusterInfo: true,
    }, { extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { audience: 'keelson' } }] });
    const conn = await loadKubeconfig({ explicitPath: path });
    assert.ok(conn.token?.startsWith('tok-one:'));
    const spec = JSON.parse(conn.token!.slice('tok-one:'.length)) as { interactive: boolean; cluster: Record<string, unknown> };
    assert.deepEqual(spec, { interactive: false, cluster: { server: 'https://k:6443', 'certificate-authority-data': b64(CA), config: { audience: 'keelson' } } });
    assert.ok(conn.execProvider);
  });

  test('v1beta1 defaults interactiveMode; v1 requires it', async () => {
    const dir = tmp();
    const cmd = plugin(dir);
    const beta = kubeconfigWithExec(dir, { apiVersion: 'client.authentication.k8s.io/v1beta1', command: cmd, args: ['token'], env: [{ name: 'SUFFIX', value: 'b' }] });
    const conn = await loadKubeconfig({ explicitPath: beta });
    assert.equal(conn.token, 'tok-b:{"interactive":false}');
    const v1 = kubeconfigWithExec(tmp(), { apiVersion: 'client.authentication.k8s.io/v1', command: cmd, args: ['token'] });
    await rejectsWith(loadKubeconfig({ explicitPath: v1 }), 'exec plugin cannot support interactive mode: unknown interactiveMode: ""');
  });

  test('client certificates from the plugin', async () => {
    const dir = tmp();
    const cmd = plugin(dir);
    const conn = await loadKubeconfig({ explicitPath: kubeconfigWithExec(dir, { apiVersion: 'client.authentication.k8s.io/v1', command: cmd, args: ['cert'], interactiveMode: 'Never' }) });
    assert.deepEqual([conn.cert, conn.key, conn.token], ['C', 'K', undefined]);
  });

  test('plugin failures read as client-go reports them', async () => {
    const dir = tmp();
    const cmd = plugin(dir);
    const cases: [string, string | RegExp][] = [
      ['wrongversion', 'exec plugin is configured to use API version client.authentication.k8s.io/v1, plugin returned version client.authentication.k8s.io/v1beta1'],
      ['nostatus', "exec plugin didn't return a status field"],
      ['empty', "exec plugin didn't return a token or cert/key pair"],
      ['certonly', 'exec plugin returned only certificate or key, not both'],
      ['garbage', /^decoding stdout: /],
      ['fail', `exec: executable ${cmd} failed with exit code 3`],
    ];
    for (const [mode, msg] of cases) {
      const path = kubeconfigWithExec(tmp(), { apiVersion: 'client.authentication.k8s.io/v1', command: cmd, args: [mode], interactiveMode: 'Never' });
      await rejectsWith(loadKubeconfig({ explicitPath: path }), msg);
    }
    const missing = kubeconfigWithExec(tmp(), { apiVersion: 'client.authentication.k8s.io/v1', command: 'keelson-no-such-plugin', interactiveMode: 'Never', installHint: 'brew install it' });
    await rejectsWith(loadKubeconfig({ explicitPath: missing }), /^exec: executable keelson-no-such-plugin not found\n[\s\S]*\n\nbrew install it$/);
    const badVersion = kubeconfigWithExec(tmp(), { apiVersion: 'client.authentication.k8s.io/v2', command: cmd });
    await rejectsWith(loadKubeconfig({ explicitPath: badVersion }), 'exec plugin: invalid apiVersion "client.authentication.k8s.io/v2"');
    const noCommand = kubeconfigWithExec(tmp(), { apiVersion: 'client.authentication.k8s.io/v1' });
    await rejectsWith(loadKubeconfig({ explicitPath: noCommand }), 'invalid configuration: command must be specified for u to use exec authentication plugin');
  });

  test('credentials are cached until their expirationTimestamp', async () => {
    const dir = tmp();
    const cmd = plugin(dir);
    const counter = join(dir, 'count');
    writeFileSync(counter, '');
    let now = Date.parse('2026-01-01T00:00:00Z');
    const env = { ...process.env, COUNTER_FILE: counter, SUFFIX: 's', EXPIRES: '2026-01-01T00:10:00Z' };
    const p = new ExecCredentialProvider({ apiVersion: 'client.authentication.k8s.io/v1', command: cmd, args: ['token'], interactiveMode: 'Never' }, { server: 'https://k' }, env, () => now);
    const a = await p.get();
    await p.get();
    assert.equal(readFileSync(counter, 'utf8'), 'x');
    assert.equal(a.expiresAt, Date.parse('2026-01-01T00:10:00Z'));
    now += 11 * 60 * 1000;
    await p.get();
    assert.equal(readFileSync(counter, 'utf8'), 'xx');
    await Promise.all([p.refresh(), p.refresh()]);
    assert.equal(readFileSync(counter, 'utf8'), 'xxx');
  });
});
