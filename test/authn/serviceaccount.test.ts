import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, createSign, sign as cryptoSign, createHmac } from 'node:crypto';
import { writeFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StatusError } from '../../src/machinery/errors.js';
import {
  ServiceAccountTokenAuthenticator, LegacyServiceAccountTokenAuthenticator, PublicKeySet, newTokenSigner, signToken, legacyClaims, boundClaims, splitUsername, hasIssuer,
} from '../../src/apiserver/authn/serviceaccount.js';
import { createTokenRequest } from '../../src/apiserver/authn/tokenrequest.js';
import { parsePublicKeysPEM, parsePrivateKeyPEM, keyIDFromPublicKey, publicKeysFromFile, privateKeyFromFile } from '../../src/apiserver/authn/jose.js';
import { ensureServiceAccountKey } from '../../src/apiserver/authn/keys.js';
import { AuthenticationError } from '../../src/apiserver/authn/types.js';
import { Objects, decodeJWT, ecKey, jws, rsaKey } from './helpers.js';
import { tempDir } from '../tempdir.js';
import { goJSON } from '../../src/machinery/gostrings.js';

const ISS = 'https://kubernetes.default.svc.cluster.local';
const AUDS = [ISS];
const rsa = rsaKey();
const ec = ecKey();

function setup(opts: { key?: typeof rsa; issuers?: string[]; auds?: string[]; now?: () => number } = {}) {
  const key = opts.key ?? rsa;
  const objects = new Objects();
  const sa = objects.sa('default', 'builder');
  const signer = newTokenSigner((opts.issuers ?? [ISS])[0]!, key);
  const keys = new PublicKeySet([key]);
  const auth = new ServiceAccountTokenAuthenticator({ issuers: opts.issuers ?? [ISS], keys, implicitAudiences: opts.auds ?? AUDS, reader: objects.reader, now: opts.now });
  const trOpts = { signer, apiAudiences: opts.auds ?? AUDS, reader: objects.reader, now: opts.now };
  return { objects, sa, signer, keys, auth, trOpts };
}

async function rejects(p: Promise<unknown>, message: string | RegExp): Promise<void> {
  await assert.rejects(p, (e: Error) => {
    assert.ok(e instanceof Error);
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
}

describe('keys', () => {
  test('key ids are the base64url SHA-256 of the PKIX public key, the same for the private key', () => {
    const want = createHash('sha256').update(createPublicKey(rsa).export({ type: 'spki', format: 'der' })).digest('base64url');
    assert.equal(keyIDFromPublicKey(rsa), want);
    assert.equal(keyIDFromPublicKey(createPublicKey(rsa)), want);
  });
  test('public keys from PEM files as keyutil reads them: private, public, certificate blocks; PKCS#1 public is not read', () => {
    const blocks = [
      rsa.export({ type: 'pkcs1', format: 'pem' }),
      createPublicKey(ec).export({ type: 'spki', format: 'pem' }),
      ec.export({ type: 'sec1', format: 'pem' }),
      ec.export({ type: 'pkcs8', format: 'pem' }),
      '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n',
    ].join('');
    assert.equal(parsePublicKeysPEM(blocks).length, 4);
    assert.throws(() => parsePublicKeysPEM(createPublicKey(rsa).export({ type: 'pkcs1', format: 'pem' }) as string), { message: 'data does not contain any valid RSA or ECDSA public keys' });
    const dir = tempDir('keelson-sa-');
    writeFileSync(join(dir, 'bad.pem'), 'nothing');
    assert.throws(() => publicKeysFromFile(join(dir, 'bad.pem')), { message: `error reading public key file ${join(dir, 'bad.pem')}: data does not contain any valid RSA or ECDSA public keys` });
  });
  test('the signing key: EC PRIVATE KEY, RSA PRIVATE KEY or PRIVATE KEY, after other blocks', () => {
    const pem = '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n' + ec.export({ type: 'sec1', format: 'pem' });
    assert.equal(parsePrivateKeyPEM(pem).asymmetricKeyType, 'ec');
    assert.equal(parsePrivateKeyPEM(rsa.export({ type: 'pkcs8', format: 'pem' })).asymmetricKeyType, 'rsa');
    assert.throws(() => parsePrivateKeyPEM(createPublicKey(rsa).export({ type: 'spki', format: 'pem' })), { message: 'data does not contain a valid RSA or ECDSA private key' });
    const dir = tempDir('keelson-sa-');
    writeFileSync(join(dir, 'k.pem'), rsa.export({ type: 'pkcs1', format: 'pem' }));
    assert.equal(privateKeyFromFile(join(dir, 'k.pem')).asymmetricKeyType, 'rsa');
  });
  test('ensureServiceAccountKey creates sa.key (0600) and sa.pub once, then loads them', () => {
    const dir = tempDir('keelson-sa-');
    const a = ensureServiceAccountKey(dir);
    assert.ok(a.generated);
    assert.equal(statSync(a.keyPath).mode & 0o777, 0o600);
    assert.match(readFileSync(a.keyPath, 'utf8'), /^-----BEGIN EC PRIVATE KEY-----/);
    assert.match(readFileSync(a.pubPath, 'utf8'), /^-----BEGIN PUBLIC KEY-----/);
    const b = ensureServiceAccountKey(dir);
    assert.ok(!b.generated);
    assert.equal(keyIDFromPublicKey(b.publicKey), keyIDFromPublicKey(a.privateKey));
  });
});

describe('claims and encoding', () => {
  test('bound claims: go-jose order, aud always an array, omitted empty refs', () => {
    const c = boundClaims({ issuer: ISS, serviceAccount: { namespace: 'ns', name: 'sa', uid: 'u1' }, audiences: ['a'], expirationSeconds: 3600, pod: { name: 'p', uid: 'pu' }, node: { name: 'n' }, now: 1_700_000_000_500, jti: 'j' });
    assert.equal(
      goJSON(c),
      '{"aud":["a"],"exp":1700003600,"iat":1700000000,"iss":"https://kubernetes.default.svc.cluster.local","jti":"j","kubernetes.io":{"namespace":"ns","node":{"name":"n"},"pod":{"name":"p","uid":"pu"},"serviceaccount":{"name":"sa","uid":"u1"}},"nbf":1700000000,"sub":"system:serviceaccount:ns:sa"}',
    );
    assert.throws(() => boundClaims({ issuer: ISS, serviceAccount: { namespace: 'ns', name: 'sa', uid: 'u' }, audiences: [], expirationSeconds: 1, secret: { name: 's' }, pod: { name: 'p' } }), /only be bound to one object type/);
  });
  test('Go escapes HTML characters', () => {
    assert.equal(goJSON({ b: 'x<y>&z', a: 1 }), '{"a":1,"b":"x\\u003cy\\u003e\\u0026z"}');
  });
  test('splitUsername', () => {
    assert.deepEqual(splitUsername('system:serviceaccount:kube-system:default'), ['kube-system', 'default']);
    assert.equal(splitUsername('system:serviceaccount:Bad:x'), undefined);
    assert.equal(splitUsername('system:serviceaccount:a:b:c'), undefined);
    assert.equal(splitUsername('alice'), undefined);
  });
  test('hasIssuer reads iss as Go does (case-insensitive keys, JSON tokens refused)', () => {
    const tok = (p: object) => `x.${Buffer.from(JSON.stringify(p)).toString('base64url')}.y`;
    const iss = new Set([ISS]);
    assert.ok(hasIssuer(tok({ iss: ISS }), iss));
    assert.ok(hasIssuer(tok({ ISS: ISS }), iss));
    assert.ok(!hasIssuer(tok({ iss: 'other' }), iss));
    assert.ok(!hasIssuer(tok({ iss: 5 }), iss));
    assert.ok(!hasIssuer('{"iss":"x"}', iss));
    assert.ok(!hasIssuer('a.b', iss));
  });
});

describe('TokenRequest', () => {
  test('a token for the API audiences, an hour by default; the status carries token and expiry', async () => {
    const now = Date.parse('2025-03-01T10:00:00.250Z');
    const { trOpts, sa, auth } = setup({ now: () => now });
    const { object, warnings, credentialID } = await createTokenRequest(trOpts, 'default', 'builder', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
    assert.deepEqual(warnings, []);
    assert.equal(object.metadata.name, 'builder');
    assert.equal(object.metadata.namespace, 'default');
    assert.equal(object.metadata.creationTimestamp, '2025-03-01T10:00:00Z');
    assert.deepEqual(object.spec, { audiences: AUDS, expirationSeconds: 3600, boundObjectRef: null });
    assert.equal(object.status.expirationTimestamp, '2025-03-01T11:00:00Z');
    const { header, payload, rawPayload } = decodeJWT(object.status.token);
    assert.deepEqual(header, { alg: 'RS256', kid: keyIDFromPublicKey(rsa) });
    assert.deepEqual(Object.keys(payload), ['aud', 'exp', 'iat', 'iss', 'jti', 'kubernetes.io', 'nbf', 'sub']);
    assert.ok(rawPayload.startsWith('{"aud":["https://kubernetes.default.svc.cluster.local"],"exp":1740826800,"iat":1740823200,'));
    assert.deepEqual(payload['kubernetes.io'], { namespace: 'default', serviceaccount: { name: 'builder', uid: sa.metadata.uid } });
    assert.equal(payload.sub, 'system:serviceaccount:default:builder');
    assert.equal(credentialID, `JTI=${payload.jti}`);
    const r = await auth.authenticateToken(object.status.token);
    assert.deepEqual(r, {
      user: { name: 'system:serviceaccount:default:builder', uid: sa.metadata.uid, groups: ['system:serviceaccounts', 'system:serviceaccounts:default'], extra: { 'authentication.kubernetes.io/credential-id': [credentialID] } },
      audiences: AUDS,
    });
  });
  test('ECDSA signing keys sign ES256', async () => {
    const { trOpts, auth } = setup({ key: ec });
    const { object } = await createTokenRequest(trOpts, 'default', 'builder', { spec: { audiences: AUDS } });
    assert.equal(decodeJWT(object.status.token).header.alg, 'ES256');
    assert.equal((await auth.authenticateToken(object.status.token))!.user.name, 'system:serviceaccount:default:builder');
  });
  test('validation: the lifetime, the names, the service account', async () => {
    const { trOpts } = setup();
    const err = async (p: Promise<unknown>, code: number, message: string) =>
      assert.rejects(p, (e: StatusError) => (assert.ok(e instanceof StatusError), assert.equal(e.code, code), assert.equal(e.message, message), true));
    await err(createTokenRequest(trOpts, 'default', 'builder', { spec: { expirationSeconds: 599 } }), 422, 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes');
    await err(createTokenRequest(trOpts, 'default', 'builder', { spec: { expirationSeconds: 2 ** 32 + 1 } }), 422, 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds');
    await err(createTokenRequest(trOpts, 'default', 'builder', { metadata: { name: 'other' } }), 422, 'TokenRequest.authentication.k8s.io "builder" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified');
    await err(createTokenRequest(trOpts, 'default', 'builder', { metadata: { namespace: 'x' } }), 422, 'TokenRequest.authentication.k8s.io "builder" is invalid: metadata.namespace: Invalid value: "x": must match the service account namespace if specified');
    await err(createTokenRequest(trOpts, 'default', 'ghost', {}), 404, 'serviceaccounts "ghost" not found');
  });
  test('bound objects: pod (with its node), secret, node; mismatches', async () => {
    const { trOpts, objects, auth } = setup();
    const node = objects.put('nodes', '', { metadata: { name: 'n1' } });
    const pod = objects.put('pods', 'default', { metadata: { name: 'p1' }, spec: { serviceAccountName: 'builder', nodeName: 'n1' } });
    objects.put('pods', 'default', { metadata: { name: 'p2' }, spec: { serviceAccountName: 'other' } });
    objects.put('pods', 'default', { metadata: { name: 'p3' }, spec: { serviceAccountName: 'builder', nodeName: 'gone' } });
    const secret = objects.put('secrets', 'default', { metadata: { name: 's1' } });
    const mk = (ref: object) => createTokenRequest(trOpts, 'default', 'builder', { spec: { boundObjectRef: ref } });

    const pt = (await mk({ kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: pod.metadata.uid })).object.status.token;
    assert.deepEqual(decodeJWT(pt).payload['kubernetes.io'].pod, { name: 'p1', uid: pod.metadata.uid });
    assert.deepEqual(decodeJWT(pt).payload['kubernetes.io'].node, { name: 'n1', uid: node.metadata.uid });
    const pr = await auth.authenticateToken(pt);
    assert.deepEqual(pr!.user.extra, {
      'authentication.kubernetes.io/credential-id': [`JTI=${decodeJWT(pt).payload.jti}`],
      'authentication.kubernetes.io/node-name': ['n1'],
      'authentication.kubernetes.io/node-uid': [node.metadata.uid],
      'authentication.kubernetes.io/pod-name': ['p1'],
      'authentication.kubernetes.io/pod-uid': [pod.metadata.uid],
    });
    assert.deepEqual(decodeJWT((await mk({ kind: 'Pod', name: 'p3' })).object.status.token).payload['kubernetes.io'].node, { name: 'gone' });

    const st = (await mk({ kind: 'Secret', apiVersion: 'v1', name: 's1' })).object.status.token;
    assert.deepEqual(decodeJWT(st).payload['kubernetes.io'].secret, { name: 's1', uid: secret.metadata.uid });
    assert.ok(await auth.authenticateToken(st));
    const nt = (await mk({ kind: 'Node', apiVersion: 'v1', name: 'n1' })).object.status.token;
    assert.deepEqual((await auth.authenticateToken(nt))!.user.extra!['authentication.kubernetes.io/node-uid'], [node.metadata.uid]);

    const err = async (p: Promise<unknown>, code: number, message: string) =>
      assert.rejects(p, (e: StatusError) => (assert.equal(e.code, code), assert.equal(e.message, message), true));
    await err(mk({ kind: 'Pod', apiVersion: 'v1', name: 'p2' }), 400, 'cannot bind token for serviceaccount "builder" to pod running with different serviceaccount name.');
    await err(mk({ kind: 'Pod', apiVersion: 'v1', name: 'nope' }), 404, 'pods "nope" not found');
    await err(mk({ kind: 'Deployment', apiVersion: 'apps/v1', name: 'd' }), 400, 'cannot bind token to object of type apps/v1, Kind=Deployment');
    await err(mk({ kind: 'Secret', apiVersion: 'v1', name: 's1', uid: 'wrong' }), 409, 'Operation cannot be fulfilled on Secret "s1": the UID in the bound object reference (wrong) does not match the UID in record. The object might have been deleted and then recreated');
    await err(mk({ kind: 'Pod', apiVersion: 'v1' }), 400, 'Name parameter required.');
  });
  test('--service-account-max-token-expiration shortens with a warning', async () => {
    const { trOpts } = setup();
    const r = await createTokenRequest({ ...trOpts, maxExpirationSeconds: 7200 }, 'default', 'builder', { spec: { expirationSeconds: 86400 } });
    assert.deepEqual(r.warnings, ['requested expiration of 86400 seconds shortened to 7200 seconds']);
    const p = decodeJWT(r.object.status.token).payload;
    assert.equal(p.exp - p.iat, 7200);
    assert.equal(r.object.spec.expirationSeconds, 7200);
  });
  test('a projected pod token of 3607 s lasts a year and warns after 3607 s', async () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    const { trOpts, objects } = setup({ now: () => now });
    objects.put('pods', 'default', { metadata: { name: 'p1' }, spec: { serviceAccountName: 'builder' } });
    const r = await createTokenRequest(trOpts, 'default', 'builder', { spec: { expirationSeconds: 3607, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1' } } });
    const p = decodeJWT(r.object.status.token).payload;
    assert.equal(p.exp - p.iat, 365 * 24 * 3600);
    assert.equal(p['kubernetes.io'].warnafter, p.iat + 3607);
    assert.equal(r.object.status.expirationTimestamp, '2025-01-01T01:00:07Z');
    const other = await createTokenRequest(trOpts, 'default', 'builder', { spec: { expirationSeconds: 3607, audiences: ['vault'], boundObjectRef: { kind: 'Pod', name: 'p1' } } });
    const q = decodeJWT(other.object.status.token).payload;
    assert.equal(q.exp - q.iat, 3607, 'not for API audiences: not extended');
    const off = await createTokenRequest({ ...trOpts, extendExpiration: false }, 'default', 'builder', { spec: { expirationSeconds: 3607, boundObjectRef: { kind: 'Pod', name: 'p1' } } });
    assert.equal(decodeJWT(off.object.status.token).payload.exp - decodeJWT(off.object.status.token).payload.iat, 3607);
  });
});

describe('bound token validation', () => {
  test('expiry with one minute of leeway; not yet valid; issued in the future', async () => {
    let now = Date.parse('2025-01-01T00:00:00Z');
    const { trOpts, auth } = setup({ now: () => now });
    const { object } = await createTokenRequest(trOpts, 'default', 'builder', { spec: { expirationSeconds: 600 } });
    now += 600_000 + 59_000;
    assert.ok(await auth.authenticateToken(object.status.token), 'within the leeway');
    now += 2_000;
    await rejects(auth.authenticateToken(object.status.token), 'service account token has expired');
    now = Date.parse('2025-01-01T00:00:00Z') - 61_000;
    await rejects(auth.authenticateToken(object.status.token), 'service account token is not valid yet');
    const { signer } = setup();
    const c = boundClaims({ issuer: ISS, serviceAccount: { namespace: 'default', name: 'builder', uid: 'x' }, audiences: AUDS, expirationSeconds: 600, now: Date.parse('2025-01-01T00:00:00Z') });
    delete c.nbf;
    c.iat = Math.floor(Date.parse('2025-01-01T00:00:00Z') / 1000) + 3600;
    now = Date.parse('2025-01-01T00:00:00Z');
    await rejects(auth.authenticateToken(signToken(signer, c)), 'service account token is issued in the future');
  });
  test('audiences: a token for another audience is refused; a TokenReview may ask for it', async () => {
    const { trOpts, auth } = setup();
    const { object } = await createTokenRequest(trOpts, 'default', 'builder', { spec: { audiences: ['vault'] } });
    await rejects(auth.authenticateToken(object.status.token), 'token audiences ["vault"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]');
    assert.deepEqual((await auth.authenticateToken(object.status.token, ['vault', 'x']))!.audiences, ['vault']);
  });
  test('signature: another key, an unknown kid, alg none, HMAC with the public key', async () => {
    const { auth, objects, sa } = setup();
    const other = rsaKey();
    const claims = boundClaims({ issuer: ISS, serviceAccount: { namespace: 'default', name: 'builder', uid: sa.metadata.uid }, audiences: AUDS, expirationSeconds: 600 });
    void objects;
    await rejects(auth.authenticateToken(signToken(newTokenSigner(ISS, other), claims)), 'invalid signature, no keys found');
    const noKid = jws({ alg: 'RS256' }, goJSON(claims), (i) => cryptoSign('sha256', i, other));
    await rejects(auth.authenticateToken(noKid), 'go-jose/go-jose: error in cryptographic primitive');
    const none = jws({ alg: 'none' }, goJSON(claims), () => Buffer.alloc(0));
    await rejects(auth.authenticateToken(none), 'go-jose/go-jose: error in cryptographic primitive');
    const pubPEM = createPublicKey(rsa).export({ type: 'spki', format: 'pem' });
    const hs = jws({ alg: 'HS256' }, goJSON(claims), (i) => createHmac('sha256', pubPEM).update(i).digest());
    await rejects(auth.authenticateToken(hs), 'go-jose/go-jose: error in cryptographic primitive');
    const good = jws({ alg: 'RS256' }, goJSON(claims), (i) => createSign('sha256').update(i).sign(rsa));
    assert.ok(await auth.authenticateToken(good), 'the same claims signed with the right key, no kid');
    const tampered = good.split('.');
    tampered[1] = Buffer.from(goJSON({ ...claims, sub: 'system:serviceaccount:kube-system:admin' })).toString('base64url');
    await rejects(auth.authenticateToken(tampered.join('.')), 'go-jose/go-jose: error in cryptographic primitive');
  });
  test('not a token of this issuer: not mine', async () => {
    const { auth, signer, sa } = setup();
    const claims = boundClaims({ issuer: 'https://elsewhere', serviceAccount: { namespace: 'default', name: 'builder', uid: sa.metadata.uid }, audiences: AUDS, expirationSeconds: 600 });
    assert.equal(await auth.authenticateToken(signToken(signer, claims)), null);
    for (const junk of ['', 'abc', 'a.b', 'a.b.c', '{"iss":"x"}', 'e30.e30.e30', '....']) assert.equal(await auth.authenticateToken(junk), null, junk);
  });
  test('several issuers: tokens of each are accepted', async () => {
    const { objects, sa } = setup();
    const keys = new PublicKeySet([rsa]);
    const auth = new ServiceAccountTokenAuthenticator({ issuers: [ISS, 'https://old'], keys, implicitAudiences: AUDS, reader: objects.reader });
    for (const iss of [ISS, 'https://old']) {
      const c = boundClaims({ issuer: iss, serviceAccount: { namespace: 'default', name: 'builder', uid: sa.metadata.uid }, audiences: AUDS, expirationSeconds: 600 });
      assert.ok(await auth.authenticateToken(signToken(newTokenSigner(iss, rsa), c)));
    }
  });
  test('the service account and the bound objects must still exist with the same uid', async () => {
    const { trOpts, objects, auth, sa } = setup();
    const pod = objects.put('pods', 'default', { metadata: { name: 'p1' }, spec: { serviceAccountName: 'builder' } });
    const secret = objects.put('secrets', 'default', { metadata: { name: 's1' } });
    const node = objects.put('nodes', '', { metadata: { name: 'n1' } });
    const tok = async (ref?: object) => (await createTokenRequest(trOpts, 'default', 'builder', { spec: { boundObjectRef: ref } })).object.status.token as string;
    const plain = await tok();
    const podTok = await tok({ kind: 'Pod', name: 'p1' });
    const secTok = await tok({ kind: 'Secret', name: 's1' });
    const nodeTok = await tok({ kind: 'Node', name: 'n1' });

    pod.metadata.uid = 'new-pod-uid';
    await rejects(auth.authenticateToken(podTok), /^pod UID \(new-pod-uid\) does not match service account pod ref claim \(/);
    objects.delete('pods', 'default', 'p1');
    await rejects(auth.authenticateToken(podTok), 'service account token has been invalidated');
    secret.metadata.deletionTimestamp = new Date(Date.now() - 120_000).toISOString();
    await rejects(auth.authenticateToken(secTok), 'service account token has been invalidated');
    secret.metadata.deletionTimestamp = new Date(Date.now() - 10_000).toISOString();
    assert.ok(await auth.authenticateToken(secTok), 'deleted within the leeway still counts');
    node.metadata.uid = 'n2';
    await rejects(auth.authenticateToken(nodeTok), /^node UID \(n2\) does not match service account node ref claim/);

    const oldUID = sa.metadata.uid;
    sa.metadata.uid = 'recreated';
    await rejects(auth.authenticateToken(plain), `service account UID (recreated) does not match claim (${oldUID})`);
    sa.metadata.uid = oldUID;
    sa.metadata.deletionTimestamp = new Date(Date.now() - 120_000).toISOString();
    await rejects(auth.authenticateToken(plain), 'service account default/builder has been deleted');
    objects.delete('serviceaccounts', 'default', 'builder');
    await rejects(auth.authenticateToken(plain), 'serviceaccounts "builder" not found');
  });
  test('malformed claims are errors, never crashes', async () => {
    const { auth, signer } = setup();
    for (const payload of [{ iss: ISS, aud: 5 }, { iss: ISS, exp: 'soon' }, { iss: ISS, sub: 1 }, { iss: ISS, 'kubernetes.io': 'x' }, { iss: ISS, 'kubernetes.io': { serviceaccount: [] } }]) {
      const t = signToken(signer, payload);
      await assert.rejects(auth.authenticateToken(t), Error, JSON.stringify(payload));
    }
    const notJSON = jws({ alg: 'RS256', kid: signer.keyID }, `{"iss":"${ISS}",`, (i) => cryptoSign('sha256', i, rsa));
    assert.equal(await auth.authenticateToken(notJSON), null, 'the unverified payload is not JSON: not mine');
  });
});

describe('legacy tokens', () => {
  function legacySetup(lookup = true) {
    const objects = new Objects();
    const sa = objects.sa('default', 'old');
    const signer = newTokenSigner('kubernetes/serviceaccount', rsa);
    const token = signToken(signer, legacyClaims({ namespace: 'default', name: 'old', uid: sa.metadata.uid }, 'old-token'));
    const secret = objects.put('secrets', 'default', {
      metadata: { name: 'old-token', annotations: { 'kubernetes.io/service-account.name': 'old' } },
      type: 'kubernetes.io/service-account-token',
      data: { token: Buffer.from(token).toString('base64') },
    });
    const used: string[] = [];
    const auth = new LegacyServiceAccountTokenAuthenticator({ keys: new PublicKeySet([rsa]), implicitAudiences: AUDS, lookup, reader: objects.reader, markLegacyTokenUsed: (s, d) => used.push(`${s.metadata.name}@${d}`) });
    return { objects, sa, secret, token, auth, used };
  }
  test('a legacy token is its service account while the Secret holds it', async () => {
    const { auth, token, sa, used } = legacySetup();
    const r = await auth.authenticateToken(token);
    assert.deepEqual(r, { user: { name: 'system:serviceaccount:default:old', uid: sa.metadata.uid, groups: ['system:serviceaccounts', 'system:serviceaccounts:default'] }, audiences: AUDS });
    assert.equal(used.length, 1);
    assert.equal(decodeJWT(token).header.kid, keyIDFromPublicKey(rsa));
  });
  test('an auto-generated token warns', async () => {
    const { auth, token, sa } = legacySetup();
    sa.secrets = [{ name: 'old-token' }];
    assert.deepEqual((await auth.authenticateToken(token))!.warnings, ['Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens.']);
  });
  test('refusals', async () => {
    const { auth, token, objects, secret, sa } = legacySetup();
    secret.metadata.labels = { 'kubernetes.io/legacy-token-invalid-since': '2024-01-01' };
    await rejects(auth.authenticateToken(token), "the token in secret default/old-token for service account default/old has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the 'kubernetes.io/legacy-token-invalid-since' label from the secret to temporarily allow use of this token");
    delete secret.metadata.labels;
    secret.data.token = Buffer.from('other').toString('base64');
    await rejects(auth.authenticateToken(token), "Token does not match server's copy");
    secret.data.token = Buffer.from(token).toString('base64');
    const uid = sa.metadata.uid;
    sa.metadata.uid = 'x';
    await rejects(auth.authenticateToken(token), `ServiceAccount UID (x) does not match claim (${uid})`);
    sa.metadata.uid = uid;
    sa.metadata.deletionTimestamp = new Date().toISOString();
    await rejects(auth.authenticateToken(token), 'ServiceAccount default/old has been deleted');
    objects.delete('secrets', 'default', 'old-token');
    await rejects(auth.authenticateToken(token), 'Token has been invalidated');
  });
  test('claims must be complete and consistent', async () => {
    const { auth } = legacySetup();
    const signer = newTokenSigner('kubernetes/serviceaccount', rsa);
    const base = legacyClaims({ namespace: 'default', name: 'old', uid: 'u' }, 'old-token');
    await rejects(auth.authenticateToken(signToken(signer, { ...base, sub: '' })), 'sub claim is missing');
    await rejects(auth.authenticateToken(signToken(signer, { ...base, sub: 'system:serviceaccount:other:old' })), 'sub claim is invalid');
    await rejects(auth.authenticateToken(signToken(signer, { ...base, 'kubernetes.io/serviceaccount/secret.name': '' })), 'secretName claim is missing');
  });
  test('--service-account-lookup=false trusts the signature', async () => {
    const { auth, token, objects } = legacySetup(false);
    objects.delete('secrets', 'default', 'old-token');
    assert.equal((await auth.authenticateToken(token))!.user.name, 'system:serviceaccount:default:old');
  });
  test('legacy tokens are for the API audiences only', async () => {
    const { auth, token } = legacySetup();
    await rejects(auth.authenticateToken(token, ['vault']), 'token audiences ["https://kubernetes.default.svc.cluster.local"] is invalid for the target audiences ["vault"]');
  });
});

void AuthenticationError;
