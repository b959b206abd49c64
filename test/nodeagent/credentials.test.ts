// The registry keyring (src/nodeagent/credentials.ts): which credentials an image's repository
// finds, as the kubelet's credentialprovider matches them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DockerKeyring, credentialsFor, keyringFromSecrets, repositoryOf } from '../../src/nodeagent/credentials.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

test('repositories are normalized as the kubelet looks them up: Docker Hub\'s implied parts added, tag and digest dropped', () => {
  assert.equal(repositoryOf('busybox'), 'docker.io/library/busybox');
  assert.equal(repositoryOf('busybox:1.36'), 'docker.io/library/busybox');
  assert.equal(repositoryOf('team/app@sha256:' + 'a'.repeat(64)), 'docker.io/team/app');
  assert.equal(repositoryOf('index.docker.io/team/app:v1'), 'docker.io/team/app');
  assert.equal(repositoryOf('127.0.0.1:5000/team/app:v1'), '127.0.0.1:5000/team/app');
  assert.equal(repositoryOf('localhost/app'), 'localhost/app');
  assert.equal(repositoryOf('registry.example.com/a/b/c:tag'), 'registry.example.com/a/b/c');
});

test('locations match by host (each part a glob), the same port, and a path prefix; the most specific first', () => {
  const k = new DockerKeyring();
  k.add({
    'registry.example.com': { username: 'host' },
    'https://registry.example.com/team': { username: 'team' },
    '*.example.com': { username: 'glob' },
    'registry.example.com:5000': { username: 'port' },
    'http://other.example.org/v2/': { username: 'v2' },
  });
  const users = (repo: string) => k.lookup(repo).map((a) => a.username);
  assert.deepEqual(users('registry.example.com/team/app'), ['team', 'host', 'glob']);
  assert.deepEqual(users('registry.example.com/else/app'), ['host', 'glob']);
  assert.deepEqual(users('mirror.example.com/app'), ['glob']);
  assert.deepEqual(users('a.b.example.com/app'), [], 'a glob is one part of the host name');
  assert.deepEqual(users('registry.example.com:5000/app'), ['port']);
  assert.deepEqual(users('other.example.org/x'), ['v2'], '/v2/ is the host itself');
  assert.deepEqual(users('docker.io/library/busybox'), []);
});

test('"auth" takes the place of username and password; one that is no user:password pair makes the entry unusable', () => {
  const k = new DockerKeyring();
  k.add({ 'a.io': { username: 'plain', password: 'p', auth: b64('fromauth:secret') }, 'b.io': { username: 'x', auth: b64('no-colon') } });
  assert.deepEqual(k.lookup('a.io/app'), [{ username: 'fromauth', password: 'secret' }]);
  assert.deepEqual(k.lookup('b.io/app'), []);
});

test('Docker Hub: the https://index.docker.io/v1/ entry serves images without a registry host', () => {
  const k = new DockerKeyring();
  k.add({ 'https://index.docker.io/v1/': { auth: b64('hub:secret') } });
  assert.deepEqual(k.lookup(repositoryOf('busybox')), [{ username: 'hub', password: 'secret' }]);
  assert.deepEqual(k.lookup(repositoryOf('team/app')), [{ username: 'hub', password: 'secret' }]);
  assert.deepEqual(k.lookup(repositoryOf('quay.io/team/app')), []);
});

test('pull secrets: dockerconfigjson and dockercfg Secrets of their types; other Secrets, and a wrong type, add nothing; the pod\'s before the node\'s, then the plugins\'', async () => {
  const json = { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64(JSON.stringify({ auths: { 'r.example.com': { username: 'u', password: 'p', auth: b64('u:p') } } })) } };
  const cfg = { type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64(JSON.stringify({ 'r.example.com': { auth: b64('old:pw'), email: 'e@x' } })) } };
  const opaque = { type: 'Opaque', data: { '.dockerconfigjson': json.data['.dockerconfigjson'] } };
  const broken = { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('not json') } };
  const pod = keyringFromSecrets([json, cfg, opaque, broken]);
  assert.deepEqual(pod.lookup('r.example.com/app'), [{ username: 'u', password: 'p' }, { username: 'old', password: 'pw' }]);
  const node = new DockerKeyring();
  node.add({ 'r.example.com': { username: 'node', password: 'n' } });
  const plugins = { lookup: async (repo: string) => (repo.startsWith('r.example.com/') ? [{ username: 'plugin' }] : []) };
  assert.deepEqual((await credentialsFor('r.example.com/app:v1', pod, { keyring: node, plugins })).map((a) => a.username), ['u', 'old', 'node', 'plugin']);
  assert.deepEqual(await credentialsFor('elsewhere.io/app', pod, { keyring: node, plugins }), []);
});
