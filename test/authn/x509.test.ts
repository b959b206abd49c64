import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { CertPool, X509Authenticator, commonNameUser, parseCertsPEM, verifyClientCertificate, peerCertificates } from '../../src/apiserver/authn/x509.js';
import { parseCertificate, serialDecimal } from '../../src/apiserver/authn/der.js';
import { AuthenticationError } from '../../src/apiserver/authn/types.js';
import { makeCert, fakeSocket, noCertSocket, SERVER_AUTH, CLIENT_AUTH, type TestCert } from './helpers.js';

const OID_UID = '0.9.2342.19200300.100.1.1';

let ca: TestCert;
let otherCA: TestCert;
let inter: TestCert;
before(async () => {
  ca = await makeCert({ subject: 'CN=test-ca', isCA: true });
  otherCA = await makeCert({ subject: 'CN=other-ca', isCA: true });
  inter = await makeCert({ subject: 'CN=intermediate', isCA: true, issuer: ca });
});

describe('commonNameUser', () => {
  test('CN is the user, every O a group in order, the fingerprint the credential id', async () => {
    const c = await makeCert({ subject: 'CN=jane, O=dev, O=ops', issuer: ca });
    const u = commonNameUser(c.der)!;
    assert.equal(u.name, 'jane');
    assert.deepEqual(new Set(u.groups), new Set(['dev', 'ops']));
    assert.deepEqual(u.extra, { 'authentication.kubernetes.io/credential-id': [`X509SHA256=${createHash('sha256').update(c.der).digest('hex')}`] });
    assert.equal(u.uid, undefined);
  });
  test('no CN: not this authenticator', async () => {
    const c = await makeCert({ subject: 'O=dev', issuer: ca });
    assert.equal(commonNameUser(c.der), null);
  });
  test('the UID attribute is the uid; several UIDs or an empty one is an error', async () => {
    const one = await makeCert({ subject: [{ '2.5.4.3': ['bob'] }, { [OID_UID]: ['bob-uid'] }], issuer: ca });
    assert.equal(commonNameUser(one.der)!.uid, 'bob-uid');
    assert.equal(commonNameUser(one.der, false)!.uid, undefined, 'gate off: UID not read');
    const two = await makeCert({ subject: [{ '2.5.4.3': ['bob'] }, { [OID_UID]: ['a'] }, { [OID_UID]: ['b'] }], issuer: ca });
    assert.throws(() => commonNameUser(two.der), { message: 'expected 1 UID, but found multiple: [a b]' });
    const empty = await makeCert({ subject: [{ '2.5.4.3': ['bob'] }, { [OID_UID]: [''] }], issuer: ca });
    assert.throws(() => commonNameUser(empty.der), { message: 'UID cannot be an empty string' });
  });
});

describe('verifyClientCertificate', () => {
  test('a leaf signed by a pool CA verifies; the chain ends at the root', async () => {
    const c = await makeCert({ subject: 'CN=u', issuer: ca });
    const v = verifyClientCertificate(c.der, [], new CertPool([ca.cert]));
    assert.equal(v.chain.length, 2);
    assert.ok(v.validUntil <= Date.parse(c.cert.validTo));
  });
  test('through an intermediate the client sent', async () => {
    const c = await makeCert({ subject: 'CN=u', issuer: inter });
    assert.equal(verifyClientCertificate(c.der, [inter.der], new CertPool([ca.cert])).chain.length, 3);
    assert.throws(() => verifyClientCertificate(c.der, [], new CertPool([ca.cert])), { message: 'x509: certificate signed by unknown authority' });
  });
  test('untrusted, self-signed, expired, not yet valid', async () => {
    const c = await makeCert({ subject: 'CN=u', issuer: otherCA });
    assert.throws(() => verifyClientCertificate(c.der, [], new CertPool([ca.cert])), { message: 'x509: certificate signed by unknown authority' });
    const self = await makeCert({ subject: 'CN=self' });
    assert.throws(() => verifyClientCertificate(self.der, [], new CertPool([ca.cert])), /unknown authority/);
    const expired = await makeCert({ subject: 'CN=u', issuer: ca, notBefore: new Date('2020-01-01T00:00:00Z'), notAfter: new Date('2021-01-01T00:00:00Z') });
    assert.throws(() => verifyClientCertificate(expired.der, [], new CertPool([ca.cert]), Date.parse('2024-01-02T03:04:05Z')), {
      message: 'x509: certificate has expired or is not yet valid: current time 2024-01-02T03:04:05Z is after 2021-01-01T00:00:00Z',
    });
    const future = await makeCert({ subject: 'CN=u', issuer: ca, notBefore: new Date(Date.now() + 86400_000), notAfter: new Date(Date.now() + 2 * 86400_000) });
    assert.throws(() => verifyClientCertificate(future.der, [], new CertPool([ca.cert])), /is before/);
  });
  test('extended key usage: server auth only is refused; none or client auth is fine', async () => {
    const server = await makeCert({ subject: 'CN=u', issuer: ca, eku: [SERVER_AUTH] });
    assert.throws(() => verifyClientCertificate(server.der, [], new CertPool([ca.cert])), { message: 'x509: certificate specifies an incompatible key usage' });
    const none = await makeCert({ subject: 'CN=u', issuer: ca, eku: [] });
    assert.ok(verifyClientCertificate(none.der, [], new CertPool([ca.cert])));
    const both = await makeCert({ subject: 'CN=u', issuer: ca, eku: [SERVER_AUTH, CLIENT_AUTH] });
    assert.ok(verifyClientCertificate(both.der, [], new CertPool([ca.cert])));
  });
  test('an intermediate that is not a CA cannot sign', async () => {
    const notCA = await makeCert({ subject: 'CN=leafy', issuer: ca, eku: [] });
    const c = await makeCert({ subject: 'CN=u', issuer: notCA });
    assert.throws(() => verifyClientCertificate(c.der, [notCA.der], new CertPool([ca.cert])), /not authorized to sign|unknown authority/);
  });
});

describe('X509Authenticator', () => {
  test('no TLS or no certificate: not mine', () => {
    const a = new X509Authenticator(new CertPool([]));
    assert.equal(a.authenticate({}), null);
    assert.equal(a.authenticate({ socket: noCertSocket() }), null);
  });
  test('a valid certificate is its user; the result is cached per connection', async () => {
    const c = await makeCert({ subject: 'CN=alice, O=system:masters', issuer: ca });
    const a = new X509Authenticator(new CertPool([ca.cert]));
    const sock = fakeSocket([c.der, ca.der]);
    let calls = 0;
    const orig = sock.getPeerCertificate;
    sock.getPeerCertificate = (d) => (calls++, orig(d));
    const r1 = a.authenticate({ socket: sock })!;
    const afterFirst = calls;
    assert.equal(afterFirst, 2, 'the leaf alone (for the kept leaves), then the chain');
    const r2 = a.authenticate({ socket: sock })!;
    assert.equal(r1.user.name, 'alice');
    assert.deepEqual(r1.user.groups, ['system:masters']);
    assert.deepEqual(r2.user, r1.user);
    assert.equal(calls, afterFirst, 'the connection\'s certificates are not read again');
    r2.user.groups.push('mutated');
    assert.deepEqual(a.authenticate({ socket: sock })!.user.groups, ['system:masters'], 'callers get copies');
  });
  test('an untrusted or expired certificate is an error naming the certificate', async () => {
    const c = await makeCert({ subject: 'CN=mallory', issuer: otherCA });
    const a = new X509Authenticator(new CertPool([ca.cert]));
    const p = parseCertificate(c.der);
    assert.throws(
      () => a.authenticate({ socket: fakeSocket([c.der]) }),
      (e: Error) => e instanceof AuthenticationError && e.message === `verifying certificate SN=${serialDecimal(p.serial)}, SKID=${p.subjectKeyId!.toString('hex').toUpperCase().match(/../g)!.join(':')}, AKID=${p.authorityKeyId!.toString('hex').toUpperCase().match(/../g)!.join(':')} failed: x509: certificate signed by unknown authority`,
    );
    const exp = await makeCert({ subject: 'CN=old', issuer: ca, notBefore: new Date('2020-01-01'), notAfter: new Date('2021-01-01') });
    assert.throws(() => a.authenticate({ socket: fakeSocket([exp.der]) }), /certificate has expired or is not yet valid/);
  });
  test('expiry of a cached connection is noticed', async () => {
    let now = Date.now();
    const c = await makeCert({ subject: 'CN=short', issuer: ca, notAfter: new Date(now + 5_000) });
    const a = new X509Authenticator(new CertPool([ca.cert]), { now: () => now });
    const sock = fakeSocket([c.der]);
    assert.equal(a.authenticate({ socket: sock })!.user.name, 'short');
    now += 10_000;
    assert.throws(() => a.authenticate({ socket: sock }), /expired/);
  });
});

/** a fake TLS socket counting the reads of the detailed chain (the costly ones; the leaf alone is cheap) */
function tlsLikeSocket(chain: Buffer[]): { socket: ReturnType<typeof fakeSocket>; reads: () => number } {
  const socket = fakeSocket(chain);
  let reads = 0;
  const orig = socket.getPeerCertificate;
  socket.getPeerCertificate = (d?: boolean) => {
    if (d) reads++;
    return orig(d);
  };
  return { socket, reads: () => reads };
}

describe('X509Authenticator across connections', () => {
  test('a leaf signed by a pool CA is verified once for every connection that presents it', async () => {
    const c = await makeCert({ subject: 'CN=dave, O=devs', issuer: ca });
    const a = new X509Authenticator(new CertPool([ca.cert]));
    const first = tlsLikeSocket([c.der, ca.der]);
    const second = tlsLikeSocket([c.der]);
    const r1 = a.authenticate({ socket: first.socket })!;
    const r2 = a.authenticate({ socket: second.socket })!;
    assert.equal(first.reads(), 1);
    assert.equal(second.reads(), 0, 'the second connection is not verified again');
    assert.deepEqual(r2.user, r1.user);
    assert.equal(r2.user.name, 'dave');
    assert.deepEqual(r2.user.groups, ['devs']);
    assert.deepEqual(r2.user.extra, { 'authentication.kubernetes.io/credential-id': [`X509SHA256=${createHash('sha256').update(c.der).digest('hex')}`] });
    r2.user.groups.push('mutated');
    assert.deepEqual(a.authenticate({ socket: tlsLikeSocket([c.der]).socket })!.user.groups, ['devs'], 'callers get copies');
    // another leaf of the same subject is its own entry
    const c2 = await makeCert({ subject: 'CN=dave, O=devs', issuer: ca });
    const third = tlsLikeSocket([c2.der]);
    assert.equal(a.authenticate({ socket: third.socket })!.user.name, 'dave');
    assert.equal(third.reads(), 1);
  });
  test('a leaf verified through an intermediate is verified on each connection', async () => {
    const c = await makeCert({ subject: 'CN=erin', issuer: inter });
    const a = new X509Authenticator(new CertPool([ca.cert]));
    const first = tlsLikeSocket([c.der, inter.der]);
    const second = tlsLikeSocket([c.der, inter.der]);
    assert.equal(a.authenticate({ socket: first.socket })!.user.name, 'erin');
    assert.equal(a.authenticate({ socket: second.socket })!.user.name, 'erin');
    assert.equal(second.reads(), 1);
    // without its intermediate the same leaf does not verify
    assert.throws(() => a.authenticate({ socket: tlsLikeSocket([c.der]).socket }), /certificate signed by unknown authority/);
  });
  test('failures are not kept, and a kept leaf is dropped when it expires', async () => {
    let now = Date.now();
    const bad = await makeCert({ subject: 'CN=mallory', issuer: otherCA });
    const a = new X509Authenticator(new CertPool([ca.cert]), { now: () => now });
    for (let i = 0; i < 2; i++) {
      const s = tlsLikeSocket([bad.der]);
      assert.throws(() => a.authenticate({ socket: s.socket }), /unknown authority/);
      assert.equal(s.reads(), 1);
    }
    const short = await makeCert({ subject: 'CN=short', issuer: ca, notAfter: new Date(now + 5_000) });
    assert.equal(a.authenticate({ socket: tlsLikeSocket([short.der]).socket })!.user.name, 'short');
    now += 10_000;
    const late = tlsLikeSocket([short.der]);
    assert.throws(() => a.authenticate({ socket: late.socket }), /certificate has expired or is not yet valid/);
    assert.equal(late.reads(), 1);
  });
});

describe('real TLS', () => {
  test('two connections with one client certificate: the second is not verified again', async () => {
    const serverCert = await makeCert({ subject: 'CN=localhost', issuer: ca, eku: [SERVER_AUTH] });
    const client = await makeCert({ subject: 'CN=frank, O=ops', issuer: ca });
    const a = new X509Authenticator(new CertPool(parseCertsPEM(ca.pem)));
    const seen: { user: string | undefined; reads: number }[] = [];
    const srv = createServer({ cert: serverCert.pem, key: serverCert.keyPEM, ca: ca.pem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
      const sock = req.socket as unknown as { getPeerCertificate: (d?: boolean) => unknown };
      const orig = sock.getPeerCertificate.bind(sock);
      let reads = 0;
      sock.getPeerCertificate = (d?: boolean) => {
        if (d) reads++;
        return orig(d);
      };
      seen.push({ user: a.authenticate(req)?.user.name, reads });
      res.end('ok');
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as AddressInfo).port;
    try {
      for (let i = 0; i < 2; i++) {
        await new Promise<void>((resolve, reject) => {
          // agent: false, a new connection each time
          const req = request({ host: '127.0.0.1', port, path: '/', ca: ca.pem, cert: client.pem, key: client.keyPEM, servername: 'localhost', agent: false }, (res) => {
            res.resume();
            res.on('end', resolve);
          });
          req.on('error', reject);
          req.end();
        });
      }
    } finally {
      srv.close();
    }
    assert.deepEqual(seen, [
      { user: 'frank', reads: 1 },
      { user: 'frank', reads: 0 },
    ]);
  });

  test('the peer chain of a Node TLS socket, with an intermediate, authenticates', async () => {
    const serverCert = await makeCert({ subject: 'CN=localhost', issuer: ca, eku: [SERVER_AUTH] });
    const client = await makeCert({ subject: 'CN=carol, O=team', issuer: inter });
    const pool = new CertPool(parseCertsPEM(ca.pem));
    const a = new X509Authenticator(pool);
    const results: unknown[] = [];
    const srv = createServer({ cert: serverCert.pem, key: serverCert.keyPEM, ca: ca.pem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
      try {
        results.push(a.authenticate(req)?.user.name);
        results.push(peerCertificates(req.socket)!.length);
      } catch (e) {
        results.push((e as Error).message);
      }
      res.end('ok');
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as AddressInfo).port;
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/', ca: ca.pem, cert: client.pem + inter.pem, key: client.keyPEM, servername: 'localhost' }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
    srv.close();
    assert.equal(results[0], 'carol');
    assert.ok((results[1] as number) >= 2);
  });
});
