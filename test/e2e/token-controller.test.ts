// The controller manager's serviceaccount-token-controller: a kubernetes.io/service-account-token
// Secret gets its account's legacy token, the CA and the namespace; the token authenticates as the
// account; a token Secret without its account, and an account's Secrets when it goes, are deleted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
});
after(async () => {
  await c?.stop();
});

const NS = '/api/v1/namespaces/default';
const tokenSecret = (name: string, sa: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, annotations: { 'kubernetes.io/service-account.name': sa } },
  type: 'kubernetes.io/service-account-token',
});

test('a token Secret is filled in: token, ca.crt, namespace and the account\'s uid; the token authenticates as the account', async () => {
  const sa = (await c.raw('POST', `${NS}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'tok-a' } } })).json();
  assert.equal((await c.raw('POST', `${NS}/secrets`, { body: tokenSecret('tok-a-secret', 'tok-a') })).status, 201);
  const filled = await until('filled', async () => {
    const s = (await c.raw('GET', `${NS}/secrets/tok-a-secret`)).json();
    return s.data?.token ? s : undefined;
  });
  assert.deepEqual(Object.keys(filled.data).sort(), ['ca.crt', 'namespace', 'token']);
  assert.equal(Buffer.from(filled.data.namespace, 'base64').toString(), 'default');
  assert.match(Buffer.from(filled.data['ca.crt'], 'base64').toString(), /^-----BEGIN CERTIFICATE-----/);
  assert.equal(filled.metadata.annotations['kubernetes.io/service-account.uid'], sa.metadata.uid);
  const token = Buffer.from(filled.data.token, 'base64').toString();
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
  assert.deepEqual(claims, {
    iss: 'kubernetes/serviceaccount',
    'kubernetes.io/serviceaccount/namespace': 'default',
    'kubernetes.io/serviceaccount/secret.name': 'tok-a-secret',
    'kubernetes.io/serviceaccount/service-account.name': 'tok-a',
    'kubernetes.io/serviceaccount/service-account.uid': sa.metadata.uid,
    sub: 'system:serviceaccount:default:tok-a',
  });
  const who = c.kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], { env: { KUBECONFIG: c.tokenKubeconfig('tok-a', token) } });
  assert.equal(who.code, 0, who.stderr);
  assert.equal(who.stdout, 'system:serviceaccount:default:tok-a');
});

test('a token Secret of an account that does not exist is deleted; an account\'s token Secrets go with it', async () => {
  assert.equal((await c.raw('POST', `${NS}/secrets`, { body: tokenSecret('tok-orphan', 'nobody') })).status, 201);
  await until('the orphan deleted', async () => ((await c.raw('GET', `${NS}/secrets/tok-orphan`)).status === 404 ? true : undefined));
  assert.equal((await c.raw('POST', `${NS}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'tok-b' } } })).status, 201);
  assert.equal((await c.raw('POST', `${NS}/secrets`, { body: tokenSecret('tok-b-secret', 'tok-b') })).status, 201);
  await until('filled', async () => ((await c.raw('GET', `${NS}/secrets/tok-b-secret`)).json().data?.token ? true : undefined));
  assert.equal((await c.raw('DELETE', `${NS}/serviceaccounts/tok-b`)).status, 200);
  await until('deleted with its account', async () => ((await c.raw('GET', `${NS}/secrets/tok-b-secret`)).status === 404 ? true : undefined));
});
