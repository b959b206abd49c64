import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicKey } from 'node:crypto';
import {
  buildAuthenticator, buildAuthenticatorFromFlags, defaultAuthenticationFlags, validateAuthenticationFlags, authenticationFlagWarnings, audienceValidationError, type AuthenticationOptions,
} from '../../src/apiserver/authn/chain.js';
import { CertPool } from '../../src/apiserver/authn/x509.js';
import { RequestHeaderAuthenticator } from '../../src/apiserver/authn/requestheader.js';
import { StaticTokenAuthenticator, parseTokenFile } from '../../src/apiserver/authn/tokenfile.js';
import { newTokenSigner, signToken, legacyClaims } from '../../src/apiserver/authn/serviceaccount.js';
import { createTokenRequest } from '../../src/apiserver/authn/tokenrequest.js';
import type { AuthnRequest } from '../../src/apiserver/authn/request.js';
import { syntheticRequest } from '../../src/apiserver/authn/request.js';
import { makeCert, fakeSocket, Objects, rsaKey, type TestCert } from './helpers.js';
import { tempDir } from '../tempdir.js';

const ISS = 'https://kubernetes.default.svc.cluster.local';
const key = rsaKey();

let clientCA: TestCert;
let proxyCA: TestCert;
let alice: TestCert; // client CA, CN=alice O=dev
let proxy: TestCert; // proxy CA, CN=front-proxy
let rogueProxy: TestCert; // proxy CA, CN=rogue
let stranger: TestCert; // unknown CA
before(async () => {
  clientCA = await makeCert({ subject: 'CN=client-ca', isCA: true });
  proxyCA = await makeCert({ subject: 'CN=proxy-ca', isCA: true });
  const other = await makeCert({ subject: 'CN=other', isCA: true });
  alice = await makeCert({ subject: 'CN=alice, O=dev', issuer: clientCA });
  proxy = await makeCert({ subject: 'CN=front-proxy', issuer: proxyCA });
  rogueProxy = await makeCert({ subject: 'CN=rogue', issuer: proxyCA });
  stranger = await makeCert({ subject: 'CN=mallory', issuer: other });
});

function req(headers: Record<string, string | string[]> = {}, cert?: TestCert): AuthnRequest {
  return { ...syntheticRequest(headers), socket: cert ? fakeSocket([cert.der]) : fakeSocket([]) };
}

function setup(extra: Partial<AuthenticationOptions> = {}) {
  const objects = new Objects();
  const sa = objects.sa('default', 'builder');
  const errors: string[] = [];
  const signer = newTokenSigner(ISS, key);
  const auth = buildAuthenticator({
    clientCA: new CertPool([clientCA.cert]),
    requestHeader: { pool: new CertPool([proxyCA.cert]), allowedNames: ['front-proxy'], usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'], uidHeaders: ['X-Remote-Uid'] },
    tokenFile: new StaticTokenAuthenticator(parseTokenFile('static-token,carol,c-uid,"ops,dev"\n', 'tokens.csv')),
    serviceAccounts: { issuers: [ISS], publicKeys: [createPublicKey(key)], reader: objects.reader },
    onError: (e) => errors.push(e.message),
    ...extra,
  });
  const mint = async (spec: object = {}) => (await createTokenRequest({ signer, apiAudiences: [ISS], reader: objects.reader }, 'default', 'builder', { spec })).object.status.token as string;
  return { auth, objects, sa, errors, mint, signer };
}

describe('buildAuthenticator', () => {
  test('no credentials: anonymous, for the API audiences; or refused when anonymous auth is off', async () => {
    const { auth } = setup();
    assert.deepEqual(await auth(req()), { user: { name: 'system:anonymous', groups: ['system:unauthenticated'] }, audiences: [ISS] });
    const off = setup({ anonymous: false });
    assert.equal(await off.auth(req()), null);
    assert.deepEqual(auth.apiAudiences, [ISS], 'the API audiences default to the issuers');
  });
  test('client certificates: the CN in the O groups plus system:authenticated', async () => {
    const { auth } = setup();
    const r = await auth(req({}, alice));
    assert.equal(r!.user.name, 'alice');
    assert.deepEqual(r!.user.groups, ['dev', 'system:authenticated']);
    assert.equal(r!.audiences, undefined);
  });
  test('an untrusted certificate is refused, not taken for anonymous', async () => {
    const { auth, errors } = setup();
    assert.equal(await auth(req({}, stranger)), null);
    assert.match(errors[0]!, /x509: certificate signed by unknown authority/);
  });
  test('bearer tokens: static and service account; lower-case scheme', async () => {
    const { auth, mint, sa } = setup();
    const s = await auth(req({ authorization: 'Bearer static-token' }));
    assert.deepEqual(s, { user: { name: 'carol', uid: 'c-uid', groups: ['ops', 'dev', 'system:authenticated'] }, audiences: [ISS] });
    const t = await mint();
    const r = await auth(req({ authorization: `bearer ${t}` }));
    assert.equal(r!.user.name, 'system:serviceaccount:default:builder');
    assert.equal(r!.user.uid, sa.metadata.uid);
    assert.deepEqual(r!.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
    assert.deepEqual(r!.audiences, [ISS]);
  });
  test('bad bearer tokens of every kind are refused (401), even with anonymous on', async () => {
    const { auth, mint, errors, signer } = setup();
    const expiredSigner = async () => {
      const objects = new Objects();
      objects.sa('default', 'builder');
      return mint({ audiences: ['vault'] });
    };
    const wrongKey = signToken(newTokenSigner(ISS, rsaKey()), { iss: ISS, sub: 'system:serviceaccount:default:builder', aud: [ISS] });
    const cases: [string, string][] = [
      ['unknown-token', 'invalid bearer token'],
      [await expiredSigner(), '[invalid bearer token, token audiences ["vault"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]]'],
      [wrongKey, '[invalid bearer token, invalid signature, no keys found]'],
      [signToken(signer, { iss: ISS, exp: 1, sub: 'x', aud: [ISS] }), '[invalid bearer token, service account token has expired]'],
      ['a.b.c', 'invalid bearer token'],
      ['x'.repeat(100_000), 'invalid bearer token'],
    ];
    for (const [token, message] of cases) {
      errors.length = 0;
      assert.equal(await auth(req({ authorization: `Bearer ${token}` })), null, token.slice(0, 40));
      assert.deepEqual(errors, [message]);
    }
  });
  test('malformed Authorization headers are no credentials: anonymous (with a warning for extra space)', async () => {
    const { auth } = setup();
    for (const h of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Token abc', '   ']) assert.equal((await auth(req({ authorization: h })))!.user.name, 'system:anonymous', JSON.stringify(h));
    const r = await auth(req({ authorization: 'Bearer  static-token' }));
    assert.equal(r!.user.name, 'system:anonymous');
    assert.deepEqual(r!.warnings, ['the provided Authorization header contains extra space before the bearer token, and is ignored']);
    assert.equal((await auth(req({ authorization: '  Bearer static-token  ' })))!.user.name, 'carol', 'surrounding space is trimmed');
    assert.equal((await auth(req({ authorization: 'Bearer static-token trailing' })))!.user.name, 'carol', 'a third part is ignored');
  });
  test('a valid client certificate wins over a bad token', async () => {
    const { auth } = setup();
    assert.equal((await auth(req({ authorization: 'Bearer nope' }, alice)))!.user.name, 'alice');
  });
  test('front proxy: headers believed from an allowed proxy certificate only', async () => {
    const { auth, errors } = setup();
    const h = { 'X-Remote-User': 'dana', 'X-Remote-Group': ['g1', 'g2'], 'X-Remote-Extra-Scopes': 'read', 'X-Remote-Extra-Acme.com%2Fteam': 't', 'X-Remote-Uid': 'd-1' };
    const r = await auth(req(h, proxy));
    assert.deepEqual(r, { user: { name: 'dana', uid: 'd-1', groups: ['g1', 'g2', 'system:authenticated'], extra: { scopes: ['read'], 'acme.com/team': ['t'] } }, audiences: [ISS] });
    // a regular client certificate sending the headers is itself
    assert.equal((await auth(req(h, alice)))!.user.name, 'alice');
    // a proxy CA certificate with a CN not allowed is refused
    assert.equal(await auth(req(h, rogueProxy)), null);
    assert.ok(errors.some((e) => e.includes('x509: subject with cn=rogue is not in the allowed list')));
    // an allowed proxy without a user header: no identity from it
    assert.equal(await auth(req({}, proxy)), null, 'the proxy certificate is not a client certificate of the client CA');
  });

  test('front proxy: a request without a username header is not verified against the front-proxy CA', () => {
    const rh = new RequestHeaderAuthenticator({ pool: new CertPool([proxyCA.cert]), allowedNames: [], usernameHeaders: ['X-Remote-User'], uidHeaders: [], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: [] });
    const reads: boolean[] = [];
    const counting = (cert: TestCert) => {
      const s = fakeSocket([cert.der]);
      return { getPeerCertificate: (detailed?: boolean) => (reads.push(!!detailed), s.getPeerCertificate(detailed)) };
    };
    // (a group header alone names nobody)
    assert.equal(rh.authenticate({ ...syntheticRequest({ 'X-Remote-Group': 'g' }), socket: counting(alice) }), null);
    assert.equal(rh.authenticate({ ...syntheticRequest({}), socket: counting(stranger) }), null);
    assert.deepEqual(reads, [], 'no certificate read');
    // with one, the connection's certificate decides
    assert.throws(() => rh.authenticate({ ...syntheticRequest({ 'X-Remote-User': 'dana' }), socket: counting(stranger) }));
    assert.equal(rh.authenticate({ ...syntheticRequest({ 'X-Remote-User': 'dana' }), socket: counting(proxy) })!.user.name, 'dana');
    assert.equal(reads.length, 2);
  });
  test('websocket bearer protocol', async () => {
    const { auth } = setup();
    const enc = Buffer.from('static-token').toString('base64url');
    const ws = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-protocol': `base64url.bearer.authorization.k8s.io.${enc}, v5.channel.k8s.io` };
    assert.equal((await auth(req(ws)))!.user.name, 'carol');
    assert.equal(await auth(req({ ...ws, 'sec-websocket-protocol': `base64url.bearer.authorization.k8s.io.${enc}` })), null, 'missing additional subprotocol');
    assert.equal(await auth(req({ ...ws, 'sec-websocket-protocol': 'base64url.bearer.authorization.k8s.io.!!!, v5.channel.k8s.io' })), null);
    assert.equal((await auth(req({ ...ws, connection: 'keep-alive' })))!.user.name, 'system:anonymous', 'not a websocket request');
  });
  test('token results are cached 10 s by default; a deleted service account is noticed after', async () => {
    let now = Date.now();
    const { auth, mint, objects } = setup({ now: () => now });
    const t = await mint();
    assert.ok(await auth(req({ authorization: `Bearer ${t}` })));
    objects.delete('serviceaccounts', 'default', 'builder');
    assert.ok(await auth(req({ authorization: `Bearer ${t}` })), 'still cached');
    now += 10_001;
    assert.equal(await auth(req({ authorization: `Bearer ${t}` })), null);
    const nocache = setup({ tokenSuccessCacheTTLMs: 0 });
    const t2 = await nocache.mint();
    assert.ok(await nocache.auth(req({ authorization: `Bearer ${t2}` })));
    nocache.objects.delete('serviceaccounts', 'default', 'builder');
    assert.equal(await nocache.auth(req({ authorization: `Bearer ${t2}` })), null);
  });
  test('no authenticator at all: anonymous only, or nothing', async () => {
    // as in kube-apiserver: with no token authenticator a bearer token is no credential
    assert.equal((await buildAuthenticator({})(req({ authorization: 'Bearer x' })))!.user.name, 'system:anonymous');
    assert.equal((await buildAuthenticator({})(req()))!.user.name, 'system:anonymous');
    assert.equal(await buildAuthenticator({ anonymous: false })(req()), null);
  });
  test('loopback tokens', async () => {
    const auth = buildAuthenticator({ loopbackTokens: new Map([['loop', { name: 'system:apiserver', uid: 'x', groups: ['system:authenticated', 'system:masters'] }]]) });
    assert.equal((await auth(req({ authorization: 'Bearer loop' })))!.user.name, 'system:apiserver');
  });
  test('never throws, whatever the request', async () => {
    const { auth } = setup();
    const weird: AuthnRequest[] = [
      { headers: {} },
      { headers: { authorization: ['Bearer a', 'Bearer b'] } },
      { headers: {}, socket: { getPeerCertificate: () => { throw new Error('boom'); } } },
      { headers: {}, socket: { getPeerCertificate: () => ({ raw: Buffer.from('not a certificate') }) } },
      { headers: { authorization: 'Bearer ' + '.'.repeat(5) } },
      { headers: { authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMuY2x1c3Rlci5sb2NhbCJ9.AAAA' } },
    ];
    for (const r of weird) await auth(r);
  });
});

describe('TokenReview (authenticateToken)', () => {
  test('a valid service account token', async () => {
    const { auth, mint, sa } = setup();
    const t = await mint();
    const s = await auth.authenticateToken(t);
    assert.equal(s.authenticated, true);
    assert.equal(s.error, undefined);
    assert.deepEqual(s.audiences, [ISS]);
    assert.deepEqual(s.user.username, 'system:serviceaccount:default:builder');
    assert.equal(s.user.uid, sa.metadata.uid);
    assert.deepEqual(s.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
    assert.deepEqual(Object.keys(s.user.extra!), ['authentication.kubernetes.io/credential-id']);
  });
  test('refused tokens: status.error, no user', async () => {
    const { auth, signer } = setup();
    assert.deepEqual(await auth.authenticateToken('nope'), { user: {}, error: 'invalid bearer token' });
    assert.deepEqual(await auth.authenticateToken(signToken(signer, { iss: ISS, exp: 1 })), { user: {}, error: '[invalid bearer token, service account token has expired]' });
  });
  test('spec.audiences: a token for that audience; a static token is for API audiences only', async () => {
    const { auth, mint } = setup();
    const t = await mint({ audiences: ['vault'] });
    assert.deepEqual((await auth.authenticateToken(t, ['vault'])).audiences, ['vault']);
    assert.equal((await auth.authenticateToken(t)).authenticated, undefined);
    const s = await auth.authenticateToken('static-token', ['vault']);
    assert.equal(s.authenticated, undefined);
    assert.deepEqual((await auth.authenticateToken('static-token')).user.username, 'carol');
  });
  test('without API audiences, a static token has no audiences and answers for none asked', async () => {
    const auth = buildAuthenticator({ tokenFile: new StaticTokenAuthenticator(parseTokenFile('t,u,1\n', 'f')) });
    assert.deepEqual(await auth.authenticateToken('t'), { authenticated: true, user: { username: 'u', uid: '1', groups: ['system:authenticated'] } });
    assert.deepEqual(await auth.authenticateToken('t', ['vault']), { user: {}, error: 'invalid bearer token' });
    assert.equal(audienceValidationError().message, 'Internal error occurred: error validating audiences');
  });
  test('legacy tokens review as their service account', async () => {
    const { auth, objects, sa } = setup();
    const legacy = newTokenSigner('kubernetes/serviceaccount', key);
    const token = signToken(legacy, legacyClaims({ namespace: 'default', name: 'builder', uid: sa.metadata.uid }, 'builder-token'));
    objects.put('secrets', 'default', { metadata: { name: 'builder-token' }, type: 'kubernetes.io/service-account-token', data: { token: Buffer.from(token).toString('base64') } });
    const s = await auth.authenticateToken(token);
    assert.equal(s.user.username, 'system:serviceaccount:default:builder');
    objects.delete('secrets', 'default', 'builder-token');
    assert.deepEqual(await setup().auth.authenticateToken(token), { user: {}, error: '[invalid bearer token, Token has been invalidated]' });
  });
});

describe('flags', () => {
  test('defaults', () => {
    const f = defaultAuthenticationFlags();
    assert.equal(f.anonymousAuth, true);
    assert.equal(f.serviceAccountLookup, true);
    assert.deepEqual(f.requestheaderUsernameHeaders, ['X-Remote-User']);
    assert.deepEqual(validateAuthenticationFlags(f), []);
  });
  test('kube-apiserver\'s validation messages', () => {
    const f = { ...defaultAuthenticationFlags(), serviceAccountIssuers: ['https://a', 'https://a', ''], requestheaderUsernameHeaders: [' '], requestheaderUIDHeaders: ['X-Uid'], serviceAccountMaxTokenExpiration: 60_000 };
    assert.deepEqual(validateAuthenticationFlags(f), [
      'service-account-issuer "https://a" is already specified',
      'service-account-issuer should not be an empty string',
      'the service-account-max-token-expiration must be between 1 hour and 2^32 seconds',
      'empty value in "requestheader-username-headers"',
      '--requestheader-uid-headers requires the "RemoteRequestHeaderUID" feature to be enabled',
    ]);
    assert.deepEqual(validateAuthenticationFlags({ ...defaultAuthenticationFlags(), requestheaderUIDHeaders: ['X-Uid'] }, { RemoteRequestHeaderUID: true }), [
      '--requestheader-uid-headers is set without specifying the standard X-Remote-Uid header - API aggregation will not work',
    ]);
    assert.deepEqual(authenticationFlagWarnings({ ...defaultAuthenticationFlags(), requestheaderUsernameHeaders: ['X-User'] }), [
      '--requestheader-username-headers is set without specifying the standard X-Remote-User header - API aggregation will not work',
    ]);
  });
  test('overlapping client and request-header CAs need allowed names', () => {
    const dir = tempDir('keelson-authn-');
    writeFileSync(join(dir, 'ca.crt'), clientCA.pem);
    const f = { ...defaultAuthenticationFlags(), clientCAFile: join(dir, 'ca.crt'), requestheaderClientCAFile: join(dir, 'ca.crt') };
    assert.match(validateAuthenticationFlags(f)[0]!, /^--requestheader-client-ca-file and --client-ca-file contain overlapping certificates/);
    assert.deepEqual(validateAuthenticationFlags({ ...f, requestheaderAllowedNames: ['front-proxy'] }), []);
  });
  test('buildAuthenticatorFromFlags reads the files', async () => {
    const dir = tempDir('keelson-authn-');
    writeFileSync(join(dir, 'ca.crt'), clientCA.pem);
    writeFileSync(join(dir, 'proxy-ca.crt'), proxyCA.pem);
    writeFileSync(join(dir, 'tokens.csv'), 'tok,erin,e1,"a,b"\n');
    writeFileSync(join(dir, 'sa.pub'), createPublicKey(key).export({ type: 'spki', format: 'pem' }));
    const objects = new Objects();
    objects.sa('default', 'builder');
    const f = {
      ...defaultAuthenticationFlags(),
      clientCAFile: join(dir, 'ca.crt'),
      tokenAuthFile: join(dir, 'tokens.csv'),
      serviceAccountKeyFiles: [join(dir, 'sa.pub')],
      serviceAccountIssuers: [ISS],
      requestheaderClientCAFile: join(dir, 'proxy-ca.crt'),
      requestheaderAllowedNames: ['front-proxy'],
      anonymousAuth: false,
    };
    const auth = buildAuthenticatorFromFlags(f, { reader: objects.reader });
    assert.equal((await auth(req({}, alice)))!.user.name, 'alice');
    assert.equal((await auth(req({ authorization: 'Bearer tok' })))!.user.name, 'erin');
    assert.equal((await auth(req({ 'x-remote-user': 'fay' }, proxy)))!.user.name, 'fay');
    assert.equal(await auth(req()), null);
    const token = (await createTokenRequest({ signer: newTokenSigner(ISS, key), apiAudiences: [ISS], reader: objects.reader }, 'default', 'builder', {})).object.status.token;
    assert.equal((await auth(req({ authorization: `Bearer ${token}` })))!.user.name, 'system:serviceaccount:default:builder');
    writeFileSync(join(dir, 'bad.csv'), 'a,b\n');
    assert.throws(() => buildAuthenticatorFromFlags({ ...f, tokenAuthFile: join(dir, 'bad.csv') }, { reader: objects.reader }), /must have at least 3 columns/);
    assert.throws(() => buildAuthenticatorFromFlags({ ...f, clientCAFile: join(dir, 'tokens.csv') }, { reader: objects.reader }), /data does not contain any valid RSA or ECDSA certificates/);
  });
});
