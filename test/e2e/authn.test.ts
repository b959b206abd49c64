// Authentication end to end (issue 5): a real `keelson server` started with kube-apiserver's
// authentication flags, driven with kubectl and raw HTTPS: client certificates of an extra CA,
// static tokens, service account tokens from `kubectl create token` (and forged, expired,
// wrongly signed or mis-addressed ones), legacy Secret tokens, a front proxy, impersonation,
// TokenReview, and anonymous requests with --anonymous-auth=false.
//
// Needs the flags wired into `keelson server` (see the report of issue 5): until then the
// cluster refuses to start on an unknown flag and every test here fails at `before`.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicKey, generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { startCluster, type Cluster, type RawResponse } from './harness.js';
import { makeCert, type TestCert } from '../authn/helpers.js';
import { boundClaims, legacyClaims, newTokenSigner, signToken } from '../../src/apiserver/authn/serviceaccount.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';

let c: Cluster;
let dir: string;
let saKey: KeyObject;
let extraCA: TestCert;
let proxyCA: TestCert;
let erin: TestCert;
let expiredErin: TestCert;
let frontProxy: TestCert;
let stranger: TestCert;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-authn-e2e-'));
  extraCA = await makeCert({ subject: 'CN=extra-client-ca', isCA: true });
  proxyCA = await makeCert({ subject: 'CN=front-proxy-ca', isCA: true });
  const otherCA = await makeCert({ subject: 'CN=nobody-trusts-me', isCA: true });
  erin = await makeCert({ subject: 'CN=erin, O=dev, O=qa', issuer: extraCA });
  expiredErin = await makeCert({ subject: 'CN=erin', issuer: extraCA, notBefore: new Date('2020-01-01'), notAfter: new Date('2021-01-01') });
  frontProxy = await makeCert({ subject: 'CN=front-proxy', issuer: proxyCA });
  stranger = await makeCert({ subject: 'CN=mallory, O=system:masters', issuer: otherCA });
  writeFileSync(join(dir, 'extra-ca.crt'), extraCA.pem);
  writeFileSync(join(dir, 'proxy-ca.crt'), proxyCA.pem);
  writeFileSync(join(dir, 'tokens.csv'), 'static-secret,carol,carol-uid,"ops,dev"\n');
  saKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  writeFileSync(join(dir, 'sa.key'), saKey.export({ type: 'pkcs1', format: 'pem' }));
  writeFileSync(join(dir, 'sa.pub'), createPublicKey(saKey).export({ type: 'spki', format: 'pem' }));
  c = await startCluster({
    args: [
      '--client-ca-file', join(dir, 'extra-ca.crt'),
      '--token-auth-file', join(dir, 'tokens.csv'),
      '--service-account-issuer', ISSUER,
      '--service-account-key-file', join(dir, 'sa.pub'),
      '--service-account-signing-key-file', join(dir, 'sa.key'),
      '--service-account-max-token-expiration', '48h',
      '--requestheader-client-ca-file', join(dir, 'proxy-ca.crt'),
      '--requestheader-allowed-names', 'front-proxy',
      '--requestheader-username-headers', 'X-Remote-User',
      '--requestheader-group-headers', 'X-Remote-Group',
      '--requestheader-extra-headers-prefix', 'X-Remote-Extra-',
    ],
  });
  const r = c.kubectl(['create', 'serviceaccount', 'builder']);
  assert.equal(r.code, 0, r.stderr);
});

after(async () => {
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** an HTTPS request with the given client certificate and headers (no admin credentials) */
function rawAs(method: string, path: string, opts: { cert?: TestCert; headers?: Record<string, string | string[]>; body?: object; agent?: https.Agent; reused?: boolean[] } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const body = opts.body ? JSON.stringify(opts.body) : undefined;
    const headers: Record<string, string | string[] | number> = { ...(opts.headers ?? {}) };
    if (body) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = https.request(
      opts.agent
        ? { host: '127.0.0.1', port: c.port, method, path, headers, servername: 'localhost', agent: opts.agent }
        : { host: '127.0.0.1', port: c.port, method, path, headers, ca: c.credentials.ca, servername: 'localhost', cert: opts.cert?.pem, key: opts.cert?.keyPEM, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const b = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers as RawResponse['headers'], headersDistinct: res.headersDistinct as RawResponse['headersDistinct'], body: b, text: b.toString('utf8'), json: () => JSON.parse(b.toString('utf8')) });
        });
      },
    );
    req.on('error', reject);
    req.on('socket', () => opts.reused?.push(req.reusedSocket));
    if (body) req.write(body);
    req.end();
  });
}

const SSR = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const ssrBody = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };

/** who the server takes a request with these credentials for (SelfSubjectReview) */
async function whoami(opts: { cert?: TestCert; headers?: Record<string, string | string[]>; agent?: https.Agent; reused?: boolean[] }): Promise<{ status: number; user?: any; text: string }> {
  const r = await rawAs('POST', SSR, { ...opts, body: ssrBody });
  return { status: r.status, user: r.status === 201 ? r.json().status.userInfo : undefined, text: r.text };
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

function expect401(r: { status: number; text: string }, what: string): void {
  assert.equal(r.status, 401, `${what}: ${r.text}`);
  const s = JSON.parse(r.text);
  assert.equal(s.kind, 'Status');
  assert.equal(s.reason, 'Unauthorized');
  assert.equal(s.message, 'Unauthorized');
}

/** a kubeconfig for a bearer token user, for kubectl */
function tokenKubeconfig(name: string, token: string): string {
  return c.tokenKubeconfig(name, token);
}

function createToken(args: string[] = []): { code: number; token: string; stderr: string } {
  const r = c.kubectl(['create', 'token', 'builder', ...args]);
  return { code: r.code, token: r.stdout.trim(), stderr: r.stderr };
}

describe('client certificates (--client-ca-file)', () => {
  test('a certificate of the extra CA: CN the user, O the groups', async () => {
    const w = await whoami({ cert: erin });
    assert.equal(w.status, 201, w.text);
    assert.equal(w.user.username, 'erin');
    assert.deepEqual(w.user.groups, ['dev', 'qa', 'system:authenticated']);
    assert.match(w.user.extra['authentication.kubernetes.io/credential-id'][0], /^X509SHA256=[0-9a-f]{64}$/);
  });
  test('the admin certificate of the cluster CA still works', () => {
    const r = c.kubectl(['auth', 'whoami', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).status.userInfo.username, 'kubernetes-admin');
  });
  test('expired and untrusted certificates are refused (401)', async () => {
    expect401(await whoami({ cert: expiredErin }), 'expired');
    expect401(await whoami({ cert: stranger }), 'untrusted');
  });
  // A leaf signed directly by a client CA is verified once for every connection that presents it
  // (authn/x509.ts keeps the result by the leaf's bytes): across new connections, each must still
  // be its own certificate's user, refusals must stay refusals, and a kept leaf must stop working
  // when it expires.
  test('across new connections each certificate stays its own user, refused ones stay refused, and a kept one ends at its expiry', async () => {
    const frank = await makeCert({ subject: 'CN=frank, O=ops', issuer: extraCA });
    const soon = await makeCert({ subject: 'CN=brief', issuer: extraCA, notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 4_000) });
    for (let round = 0; round < 3; round++) {
      const e = await whoami({ cert: erin });
      assert.equal(e.status, 201, e.text);
      assert.equal(e.user.username, 'erin');
      assert.deepEqual(e.user.groups, ['dev', 'qa', 'system:authenticated']);
      const f = await whoami({ cert: frank });
      assert.equal(f.status, 201, f.text);
      assert.equal(f.user.username, 'frank');
      assert.deepEqual(f.user.groups, ['ops', 'system:authenticated']);
      assert.notEqual(e.user.extra['authentication.kubernetes.io/credential-id'][0], f.user.extra['authentication.kubernetes.io/credential-id'][0]);
      expect401(await whoami({ cert: expiredErin }), `expired, round ${round}`);
      expect401(await whoami({ cert: stranger }), `untrusted, round ${round}`);
    }
    const b = await whoami({ cert: soon });
    assert.equal(b.status, 201, b.text);
    assert.equal(b.user.username, 'brief');
    const left = Date.parse(soon.cert.validTo) - Date.now();
    await new Promise((r) => setTimeout(r, Math.max(0, left) + 1_500));
    expect401(await whoami({ cert: soon }), 'the kept certificate after its expiry');
  });
});

describe('static tokens (--token-auth-file)', () => {
  test('kubectl with the token', () => {
    const r = c.kubectl(['auth', 'whoami', '-o', 'json'], { env: { KUBECONFIG: tokenKubeconfig('carol', 'static-secret') } });
    assert.equal(r.code, 0, r.stderr);
    const u = JSON.parse(r.stdout).status.userInfo;
    assert.deepEqual(u, { username: 'carol', uid: 'carol-uid', groups: ['ops', 'dev', 'system:authenticated'] });
  });
  test('an unknown token is 401, and kubectl says so', async () => {
    expect401(await whoami({ headers: bearer('not-a-token') }), 'unknown');
    const r = c.kubectl(['get', 'pods'], { env: { KUBECONFIG: tokenKubeconfig('nobody', 'not-a-token') } });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /error: You must be logged in to the server/);
  });
});

describe('service account tokens', () => {
  test('kubectl create token: a token that authenticates as the service account', async () => {
    const t = createToken();
    assert.equal(t.code, 0, t.stderr);
    const [h, p] = t.token.split('.');
    const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    assert.equal(header.alg, 'RS256');
    assert.equal(payload.iss, ISSUER);
    assert.deepEqual(payload.aud, [ISSUER]);
    assert.equal(payload.exp - payload.iat, 3600);
    assert.equal(payload.sub, 'system:serviceaccount:default:builder');
    const sa = (await c.raw('GET', '/api/v1/namespaces/default/serviceaccounts/builder')).json();
    assert.deepEqual(payload['kubernetes.io'], { namespace: 'default', serviceaccount: { name: 'builder', uid: sa.metadata.uid } });
    const r = c.kubectl(['auth', 'whoami', '-o', 'json'], { env: { KUBECONFIG: tokenKubeconfig('builder', t.token) } });
    assert.equal(r.code, 0, r.stderr);
    const u = JSON.parse(r.stdout).status.userInfo;
    assert.equal(u.username, 'system:serviceaccount:default:builder');
    assert.equal(u.uid, sa.metadata.uid);
    assert.deepEqual(u.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
    assert.deepEqual(u.extra, { 'authentication.kubernetes.io/credential-id': [`JTI=${payload.jti}`] });
  });
  test('durations: too short is refused with Kubernetes\' message; over the maximum is shortened', () => {
    const short = createToken(['--duration', '5m']);
    assert.notEqual(short.code, 0);
    assert.match(short.stderr, /spec\.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes/);
    const long = createToken(['--duration', '72h']);
    assert.equal(long.code, 0, long.stderr);
    const p = JSON.parse(Buffer.from(long.token.split('.')[1]!, 'base64url').toString());
    assert.equal(p.exp - p.iat, 48 * 3600);
  });
  test('a token for another audience, an expired one, a forged one, a wrong signer: 401', async () => {
    const vault = createToken(['--audience', 'vault']);
    assert.equal(vault.code, 0, vault.stderr);
    expect401(await whoami({ headers: bearer(vault.token) }), 'other audience');
    const sa = (await c.raw('GET', '/api/v1/namespaces/default/serviceaccounts/builder')).json();
    const claims = (now: number) => boundClaims({ issuer: ISSUER, serviceAccount: { namespace: 'default', name: 'builder', uid: sa.metadata.uid }, audiences: [ISSUER], expirationSeconds: 600, now });
    const signer = newTokenSigner(ISSUER, saKey);
    assert.equal((await whoami({ headers: bearer(signToken(signer, claims(Date.now()))) })).status, 201, 'a token the test signs with the cluster key is good');
    expect401(await whoami({ headers: bearer(signToken(signer, claims(Date.now() - 3600_000))) }), 'expired');
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    expect401(await whoami({ headers: bearer(signToken(newTokenSigner(ISSUER, other), claims(Date.now()))) }), 'wrong signer');
    const good = signToken(signer, claims(Date.now())).split('.');
    good[1] = Buffer.from(JSON.stringify({ ...claims(Date.now()), sub: 'system:serviceaccount:kube-system:admin' })).toString('base64url');
    expect401(await whoami({ headers: bearer(good.join('.')) }), 'tampered');
  });
  test('TokenReview reports users and errors', async () => {
    const t = createToken();
    const ok = await c.raw('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: t.token } } });
    assert.equal(ok.status, 201, ok.text);
    const s = ok.json().status;
    assert.equal(s.authenticated, true);
    assert.equal(s.user.username, 'system:serviceaccount:default:builder');
    assert.deepEqual(s.audiences, [ISSUER]);
    const bad = await c.raw('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'garbage' } } });
    assert.equal(bad.status, 201, bad.text);
    assert.deepEqual(bad.json().status, { user: {}, error: 'invalid bearer token' });
    const vault = createToken(['--audience', 'vault']);
    const aud = await c.raw('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: vault.token, audiences: ['vault'] } } });
    assert.deepEqual(aud.json().status.audiences, ['vault']);
  });
  test('a pod-bound token stops working when the pod is gone', async () => {
    const pod = c.kubectl(['run', 'bound', '--image', 'registry.k8s.io/pause:3.10', '--overrides', JSON.stringify({ spec: { serviceAccountName: 'builder', schedulerName: 'none' } })]);
    assert.equal(pod.code, 0, pod.stderr);
    const t = createToken(['--bound-object-kind', 'Pod', '--bound-object-name', 'bound']);
    assert.equal(t.code, 0, t.stderr);
    const w = await whoami({ headers: bearer(t.token) });
    assert.equal(w.status, 201, w.text);
    assert.equal(w.user.extra['authentication.kubernetes.io/pod-name'][0], 'bound');
    assert.equal(c.kubectl(['delete', 'pod', 'bound', '--grace-period=0', '--force', '--wait=false']).code, 0);
    // results are cached for 10 s, as in Kubernetes
    const deadline = Date.now() + 20_000;
    for (;;) {
      const r = await whoami({ headers: bearer(t.token) });
      if (r.status === 401) break;
      assert.ok(Date.now() < deadline, 'the pod-bound token still works 20 s after the pod was deleted');
      await new Promise((res) => setTimeout(res, 500));
    }
  });
  test('legacy Secret tokens: valid while the Secret holds them', async () => {
    // a token as the token controller writes it, signed here with the cluster's signing key
    const sa = (await c.raw('GET', '/api/v1/namespaces/default/serviceaccounts/builder')).json();
    const token = signToken(newTokenSigner('kubernetes/serviceaccount', saKey), legacyClaims({ namespace: 'default', name: 'builder', uid: sa.metadata.uid }, 'builder-token'));
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'builder-token', annotations: { 'kubernetes.io/service-account.name': 'builder', 'kubernetes.io/service-account.uid': sa.metadata.uid } },
      type: 'kubernetes.io/service-account-token',
      data: { token: Buffer.from(token).toString('base64') },
    };
    const r = await c.raw('POST', '/api/v1/namespaces/default/secrets', { body: secret });
    assert.equal(r.status, 201, r.text);
    const w = await whoami({ headers: bearer(token) });
    assert.equal(w.status, 201, w.text);
    assert.deepEqual(w.user, { username: 'system:serviceaccount:default:builder', uid: sa.metadata.uid, groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'] });
    assert.equal((await c.raw('DELETE', '/api/v1/namespaces/default/secrets/builder-token')).status, 200);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const again = await whoami({ headers: bearer(token) });
      if (again.status === 401) break;
      assert.ok(Date.now() < deadline, 'the legacy token still works 20 s after its Secret was deleted');
      await new Promise((res) => setTimeout(res, 500));
    }
  });
});

describe('malformed credentials', () => {
  test('Authorization headers that are not bearer tokens carry no credentials', async () => {
    for (const h of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer  static-secret']) {
      const w = await whoami({ headers: { authorization: h }, cert: erin });
      assert.equal(w.status, 201, `${h}: ${w.text}`);
      assert.equal(w.user.username, 'erin', 'the client certificate identifies the request');
    }
  });
  test('junk tokens never crash the server', async () => {
    for (const t of ['a.b.c', 'eyJ.eyJ.eyJ', '....', 'x'.repeat(8000), '{"iss":"x"}']) expect401(await whoami({ headers: bearer(t) }), t.slice(0, 20));
    assert.equal((await c.raw('GET', '/readyz')).status, 200);
  });
});

describe('front proxy (--requestheader-*)', () => {
  test('identity headers from the allowed proxy certificate', async () => {
    const w = await whoami({ cert: frontProxy, headers: { 'X-Remote-User': 'dana', 'X-Remote-Group': ['g1', 'g2'], 'X-Remote-Extra-Scopes': 'read' } });
    assert.equal(w.status, 201, w.text);
    assert.deepEqual(w.user, { username: 'dana', groups: ['g1', 'g2', 'system:authenticated'], extra: { scopes: ['read'] } });
  });
  test('the same headers from any other client are ignored or refused', async () => {
    const w = await whoami({ cert: erin, headers: { 'X-Remote-User': 'dana', 'X-Remote-Group': 'system:masters' } });
    assert.equal(w.user.username, 'erin');
    expect401(await whoami({ cert: stranger, headers: { 'X-Remote-User': 'dana' } }), 'untrusted proxy');
  });
});

describe('kube-system/extension-apiserver-authentication', () => {
  // what aggregated API servers and the controller manager read to authenticate as this server
  // does: written at start by the cluster authentication trust controller
  const der = (pem: string) => new X509Certificate(pem).raw.toString('base64');
  const certsOf = (bundle: string) => bundle.split(/(?<=-----END CERTIFICATE-----\n)/).filter((x) => x.trim()).map(der);

  test('the client CAs (the cluster CA and --client-ca-file) and the front proxy flags, as kube-apiserver writes them', async () => {
    const r = await c.raw('GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication');
    assert.equal(r.status, 200, r.text);
    const data = r.json().data;
    assert.deepEqual(Object.keys(data), [
      'client-ca-file',
      'requestheader-allowed-names',
      'requestheader-client-ca-file',
      'requestheader-extra-headers-prefix',
      'requestheader-group-headers',
      'requestheader-uid-headers',
      'requestheader-username-headers',
    ]);
    assert.deepEqual(certsOf(data['client-ca-file']), [der(c.credentials.ca.toString()), der(extraCA.pem)]);
    assert.deepEqual(certsOf(data['requestheader-client-ca-file']), [der(proxyCA.pem)]);
    assert.equal(data['requestheader-allowed-names'], '["front-proxy"]');
    assert.equal(data['requestheader-username-headers'], '["X-Remote-User"]');
    assert.equal(data['requestheader-group-headers'], '["X-Remote-Group"]');
    assert.equal(data['requestheader-extra-headers-prefix'], '["X-Remote-Extra-"]');
    assert.equal(data['requestheader-uid-headers'], '[]');
  });
});

describe('one keep-alive connection', () => {
  // the server keeps a connection's authentication (its certificate) between requests: a request
  // that carries credentials in its headers must still be authenticated by them, and the next
  // one without them by the certificate again
  const agentFor = (cert?: TestCert) => new https.Agent({ keepAlive: true, maxSockets: 1, ca: c.credentials.ca, cert: cert?.pem, key: cert?.keyPEM });
  /** who each request was taken for, in turn, on one connection */
  async function sequence(cert: TestCert | undefined, headerList: Record<string, string>[]): Promise<string[]> {
    const agent = agentFor(cert);
    const reused: boolean[] = [];
    try {
      const seen: string[] = [];
      for (const headers of headerList) {
        const w = await whoami({ agent, headers, reused });
        seen.push(w.status === 201 ? w.user.username : w.status === 403 && w.text.includes('User \\"system:anonymous\\"') ? 'anonymous (403)' : String(w.status));
      }
      assert.ok(reused.slice(1).every(Boolean), `the requests did not share one connection: ${reused}`);
      return seen;
    } finally {
      agent.destroy();
    }
  }
  test('without a client certificate: each request is authenticated by its own token, or is anonymous', async () => {
    const seen = await sequence(undefined, [{}, bearer('static-secret'), {}, { authorization: 'Bearer not-a-token' }, {}, bearer('static-secret')]);
    assert.deepEqual(seen, ['anonymous (403)', 'carol', 'anonymous (403)', '401', 'anonymous (403)', 'carol']);
  });
  test('with a client certificate: the certificate, also when a token comes along (x509 comes first, as in kube-apiserver)', async () => {
    const seen = await sequence(erin, [{}, bearer('static-secret'), {}, { authorization: 'Bearer not-a-token' }, {}]);
    assert.deepEqual(seen, ['erin', 'erin', 'erin', 'erin', 'erin']);
  });
  test('a front proxy\'s connection: identity headers, then none (its certificate is no client certificate), then headers again', async () => {
    const agent = agentFor(frontProxy);
    const reused: boolean[] = [];
    try {
      const withHeaders = { 'X-Remote-User': 'dana', 'X-Remote-Group': 'g1' };
      const a = await whoami({ agent, headers: withHeaders, reused });
      assert.equal(a.user?.username, 'dana', a.text);
      expect401(await whoami({ agent, reused }), 'the proxy without identity headers');
      const b = await whoami({ agent, headers: { 'X-Remote-User': 'eve' }, reused });
      assert.equal(b.user?.username, 'eve', b.text);
      assert.ok(reused.slice(1).every(Boolean), `the requests did not share one connection: ${reused}`);
    } finally {
      agent.destroy();
    }
  });
});

describe('impersonation', () => {
  test('kubectl --as/--as-group/--as-uid', () => {
    const r = c.kubectl(['auth', 'whoami', '-o', 'json', '--as', 'jane', '--as-group', 'dev', '--as-uid', 'j-1']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).status.userInfo, { username: 'jane', uid: 'j-1', groups: ['dev', 'system:authenticated'] });
    const sa = c.kubectl(['auth', 'whoami', '-o', 'json', '--as', 'system:serviceaccount:kube-system:default']);
    assert.equal(sa.code, 0, sa.stderr);
    assert.deepEqual(JSON.parse(sa.stdout).status.userInfo.groups, ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated']);
  });
  test('groups without a user: 500 in plain text', async () => {
    const r = await c.raw('GET', '/api/v1/namespaces', { headers: { 'Impersonate-Group': 'system:masters' } });
    assert.equal(r.status, 500);
    assert.match(String(r.headers['content-type']), /^text\/plain/);
    assert.equal(r.text, 'Internal Server Error: "/api/v1/namespaces": requested [{Group  system:masters    }] without impersonating a user\n');
  });
});

describe('anonymous requests', () => {
  test('with --anonymous-auth (default) a request without credentials is system:anonymous or refused as it is with AlwaysAllow', async () => {
    const w = await whoami({});
    if (w.status === 401) {
      // kube-apiserver turns anonymous auth off with the AlwaysAllow authorizer
      assert.match(c.logs, /AnonymousAuth is not allowed with the AlwaysAllow authorizer/);
    } else if (w.status === 201) {
      assert.deepEqual(w.user, { username: 'system:anonymous', groups: ['system:unauthenticated'] });
    } else {
      assert.equal(w.status, 403, w.text);
      assert.match(w.text, /User \\"system:anonymous\\" cannot create resource \\"selfsubjectreviews\\"/);
    }
  });
  test('--anonymous-auth=false: 401; generated service account keys sign and verify tokens', async () => {
    const c2 = await startCluster({ args: ['--anonymous-auth=false'] });
    try {
      const r = await c2.rawNoAuth('POST', SSR, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(ssrBody) });
      assert.equal(r.status, 401, r.text);
      assert.equal(c2.kubectl(['create', 'serviceaccount', 'ci']).code, 0);
      const t = c2.kubectl(['create', 'token', 'ci']);
      assert.equal(t.code, 0, t.stderr);
      const w = await c2.rawNoAuth('POST', SSR, { headers: { 'content-type': 'application/json', authorization: `Bearer ${t.stdout.trim()}` }, body: JSON.stringify(ssrBody) });
      assert.equal(w.status, 201, w.text);
      assert.equal(w.json().status.userInfo.username, 'system:serviceaccount:default:ci');
    } finally {
      await c2.stop();
    }
  });
});
