// The secure port's TLS options as kube-apiserver parses them: --tls-min-version,
// --tls-cipher-suites (Go's names, Go's insecure list, Go's server order), --tls-sni-cert-key
// (names from certificates, precedence, wildcard selection), the serving key pair checks.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCA, issueServingCert, issueClientCert, type CertKey } from '../../src/apiserver/pki.js';
import {
  canonicalIP,
  certificateNames,
  checkKeyPair,
  defaultCiphers,
  effectiveCiphers,
  http2CipherError,
  http2MaxStreams,
  insecureTLSCipherNames,
  loadCertKeyFiles,
  loadSNICertKeys,
  parseCipherSuites,
  parseTLSMinVersion,
  preferredTLSCipherNames,
  prepareServing,
  selectSNI,
  sniNameTable,
  tlsPossibleVersions,
} from '../../src/apiserver/tls.js';

describe('--tls-min-version', () => {
  test('Go names map to Node versions; empty is TLS 1.2', () => {
    assert.deepEqual(tlsPossibleVersions(), ['VersionTLS10', 'VersionTLS11', 'VersionTLS12', 'VersionTLS13']);
    assert.equal(parseTLSMinVersion(''), 'TLSv1.2');
    assert.equal(parseTLSMinVersion('VersionTLS10'), 'TLSv1');
    assert.equal(parseTLSMinVersion('VersionTLS11'), 'TLSv1.1');
    assert.equal(parseTLSMinVersion('VersionTLS12'), 'TLSv1.2');
    assert.equal(parseTLSMinVersion('VersionTLS13'), 'TLSv1.3');
  });
  test('an unknown version is component-base\'s error', () => {
    assert.throws(() => parseTLSMinVersion('VersionTLS14'), { message: 'unknown tls version "VersionTLS14"' });
    assert.throws(() => parseTLSMinVersion('TLSv1.2'), { message: 'unknown tls version "TLSv1.2"' });
    assert.throws(() => parseTLSMinVersion('__proto__'), { message: 'unknown tls version "__proto__"' });
  });
});

describe('--tls-cipher-suites', () => {
  test('preferred and insecure names are Go 1.24\'s lists, sorted and disjoint', () => {
    const pref = preferredTLSCipherNames();
    const insecure = insecureTLSCipherNames();
    assert.deepEqual(pref, [...pref].sort());
    assert.deepEqual(insecure, [...insecure].sort());
    assert.equal(pref.length, 15);
    assert.equal(insecure.length, 12);
    for (const n of insecure) assert.ok(!pref.includes(n), n);
    // RSA key exchange, 3DES, RC4 and CBC-SHA256 are insecure; ECDHE CBC-SHA is not; the legacy ChaCha names are kept
    for (const n of ['TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_RSA_WITH_RC4_128_SHA']) {
      assert.ok(insecure.includes(n), n);
    }
    for (const n of ['TLS_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256']) {
      assert.ok(pref.includes(n), n);
    }
  });
  test('an empty list is Go\'s defaults', () => {
    assert.equal(parseCipherSuites([]), undefined);
    assert.equal(
      defaultCiphers(),
      'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES256-SHA:TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256',
    );
    assert.equal(effectiveCiphers(undefined, 'TLSv1.2'), defaultCiphers());
  });
  test('suites are offered in Go\'s server order whatever order they are given in; TLS 1.3 suites are always on', () => {
    const s = parseCipherSuites(['TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305'])!;
    assert.equal(s.ciphers, 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES256-SHA:TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256');
    assert.deepEqual(s.insecure, []);
    // only TLS 1.3 names: TLS 1.2 has no suite left (as in Go, where the list does not apply to TLS 1.3)
    assert.equal(parseCipherSuites(['TLS_AES_256_GCM_SHA384'])!.ciphers, 'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256');
  });
  test('insecure suites are reported; suites this OpenSSL lacks are left out, and a list of only those fails', () => {
    const s = parseCipherSuites(['TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_RC4_128_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256'], ['aes128-gcm-sha256', 'ecdhe-ecdsa-aes128-gcm-sha256'])!;
    assert.deepEqual(s.insecure, ['TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_RC4_128_SHA']);
    assert.deepEqual(s.unavailable, ['TLS_RSA_WITH_RC4_128_SHA']);
    assert.ok(s.ciphers.startsWith('ECDHE-ECDSA-AES128-GCM-SHA256:AES128-GCM-SHA256:TLS_'));
    assert.throws(() => parseCipherSuites(['TLS_RSA_WITH_RC4_128_SHA'], ['aes128-gcm-sha256']), /none of the cipher suites in --tls-cipher-suites can be negotiated: TLS_RSA_WITH_RC4_128_SHA/);
  });
  test('HTTP/2 needs ECDHE with AES-128-GCM among TLS 1.2 suites, as Go\'s HTTP/2 server checks', () => {
    const want = 'http2: TLSConfig.CipherSuites is missing an HTTP/2-required AES_128_GCM_SHA256 cipher (need at least one of TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)';
    assert.equal(http2CipherError(['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'], 'TLSv1.2'), want);
    assert.equal(http2CipherError(['TLS_AES_128_GCM_SHA256'], 'TLSv1.2'), want);
    assert.equal(http2CipherError(['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'], 'TLSv1.3'), undefined);
    assert.equal(http2CipherError(['TLS_RSA_WITH_RC4_128_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'], 'TLSv1'), undefined);
    assert.equal(http2CipherError([], 'TLSv1.2'), undefined);
  });
  test('an unknown name is component-base\'s error', () => {
    assert.throws(() => parseCipherSuites(['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'ECDHE-RSA-AES128-GCM-SHA256']), {
      message: "Cipher suite ECDHE-RSA-AES128-GCM-SHA256 not supported or doesn't exist",
    });
  });
  test('TLS 1.0 and 1.1 lower OpenSSL\'s security level so that they can be negotiated', () => {
    assert.match(effectiveCiphers(undefined, 'TLSv1'), /:@SECLEVEL=0$/);
    assert.match(effectiveCiphers(parseCipherSuites(['TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA']), 'TLSv1.1'), /^ECDHE-RSA-AES128-SHA:.*@SECLEVEL=0$/);
    assert.doesNotMatch(effectiveCiphers(undefined, 'TLSv1.3'), /SECLEVEL/);
  });
  test('--http2-max-streams-per-connection: 0 is 100', () => {
    assert.equal(http2MaxStreams(0), 100);
    assert.equal(http2MaxStreams(-1), 100);
    assert.equal(http2MaxStreams(7), 7);
  });
});

describe('--tls-sni-cert-key', () => {
  let ca: CertKey;
  let foo: CertKey;
  let bar: CertKey;
  let ipCN: CertKey;
  let dir: string;
  before(async () => {
    ca = await createCA('sni-test-ca');
    foo = await issueServingCert(ca, 'foo.example.com', { dns: ['www.foo.example.com', '*.apps.example.com'], ips: ['10.0.0.1'] });
    bar = await issueServingCert(ca, '10.1.1.1', { dns: ['bar.example.com', 'www.foo.example.com'], ips: [] });
    ipCN = await issueClientCert(ca, 'system:admin');
    dir = mkdtempSync(join(tmpdir(), 'keelson-tls-test-'));
  });

  test('names of a certificate: a domain-like CN, then DNS SANs; never an IP', () => {
    assert.deepEqual(certificateNames(foo.certPEM), ['foo.example.com', 'www.foo.example.com', '*.apps.example.com']);
    assert.deepEqual(certificateNames(bar.certPEM), ['bar.example.com', 'www.foo.example.com']);
    assert.deepEqual(certificateNames(ipCN.certPEM), []);
  });

  test('earlier pairs win a name; explicit patterns win over names taken from certificates', () => {
    const t = sniNameTable([
      { cert: foo.certPEM, key: foo.keyPEM, names: [] },
      { cert: bar.certPEM, key: bar.keyPEM, names: [] },
    ]);
    assert.equal(t.get('www.foo.example.com'), 0);
    assert.equal(t.get('bar.example.com'), 1);
    const t2 = sniNameTable([
      { cert: foo.certPEM, key: foo.keyPEM, names: [] },
      { cert: bar.certPEM, key: bar.keyPEM, names: ['www.foo.example.com', '*.Example.ORG'] },
    ]);
    assert.equal(t2.get('www.foo.example.com'), 1);
    assert.equal(t2.get('*.example.org'), 1);
    assert.equal(t2.get('bar.example.com'), undefined, 'explicit names replace the certificate\'s');
  });

  test('selection: exact name, else the first label as a wildcard, case and a trailing dot ignored', () => {
    const t = sniNameTable([
      { cert: foo.certPEM, key: foo.keyPEM, names: [] },
      { cert: bar.certPEM, key: bar.keyPEM, names: [] },
    ]);
    assert.equal(selectSNI(t, 'foo.example.com'), 0);
    assert.equal(selectSNI(t, 'BAR.example.com.'), 1);
    assert.equal(selectSNI(t, 'x.apps.example.com'), 0);
    assert.equal(selectSNI(t, 'y.x.apps.example.com'), undefined, 'a wildcard covers one label');
    assert.equal(selectSNI(t, 'apps.example.com'), undefined);
    assert.equal(selectSNI(t, 'unknown.test'), undefined);
    assert.equal(selectSNI(t, ''), undefined);
    assert.equal(selectSNI(new Map([['*', 3]]), 'localhost'), 3);
  });

  test('IP patterns: canonical forms, and their contexts for clients without SNI', () => {
    assert.equal(canonicalIP('::ffff:127.0.0.1'), '127.0.0.1');
    assert.equal(canonicalIP('0:0:0:0:0:0:0:1'), '::1');
    assert.equal(canonicalIP('FE80:0:0:0:0:0:0:1'), 'fe80::1');
    assert.equal(canonicalIP('10.0.0.1'), '10.0.0.1');
    const p = prepareServing({ cert: foo.certPEM, key: foo.keyPEM, sniCertKeys: [{ cert: bar.certPEM, key: bar.keyPEM, names: ['10.0.0.9', '::1', 'bar.test'] }] });
    assert.deepEqual([...p.ipContexts.keys()].sort(), ['10.0.0.9', '::1']);
    assert.ok(p.defaultContext);
    assert.equal(prepareServing({ cert: foo.certPEM, key: foo.keyPEM }).ipContexts.size, 0);
  });

  test('key pairs are checked with Go\'s words', () => {
    assert.doesNotThrow(() => checkKeyPair(foo.certPEM, foo.keyPEM));
    assert.throws(() => checkKeyPair(foo.certPEM, bar.keyPEM), { message: 'tls: private key does not match public key' });
    assert.throws(() => checkKeyPair('junk', foo.keyPEM), { message: 'tls: failed to find any PEM data in certificate input' });
    assert.throws(() => checkKeyPair(foo.certPEM, 'junk'), { message: 'tls: failed to find any PEM data in key input' });
  });

  test('files: missing names, missing files, empty files and mismatched pairs are start-up errors', () => {
    const c = join(dir, 'foo.crt');
    const k = join(dir, 'foo.key');
    const e = join(dir, 'empty.crt');
    writeFileSync(c, foo.certPEM);
    writeFileSync(k, foo.keyPEM);
    writeFileSync(e, '');
    assert.deepEqual(loadCertKeyFiles('serving-cert', c, k).cert.toString(), foo.certPEM);
    assert.throws(() => loadCertKeyFiles('serving-cert', c, ''), { message: 'missing filename for serving cert' });
    assert.throws(() => loadCertKeyFiles('serving-cert', join(dir, 'nope.crt'), k), { message: `open ${join(dir, 'nope.crt')}: no such file or directory` });
    assert.throws(() => loadCertKeyFiles('serving-cert', e, k), { message: `missing content for serving cert "serving-cert::${e}::${k}"` });
    const sni = loadSNICertKeys([{ certFile: c, keyFile: k, names: ['a.test'] }]);
    assert.deepEqual(sni[0]!.names, ['a.test']);
    writeFileSync(join(dir, 'bar.key'), bar.keyPEM);
    assert.throws(() => loadSNICertKeys([{ certFile: c, keyFile: join(dir, 'bar.key'), names: [] }]), {
      message: 'failed to load SNI cert and key: tls: private key does not match public key',
    });
  });

  test('prepareServing: the options a listener needs, and errors before anything listens', () => {
    const p = prepareServing({ cert: foo.certPEM, key: foo.keyPEM, sniCertKeys: [{ cert: bar.certPEM, key: bar.keyPEM, names: [] }], cipherSuites: ['TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256'] });
    assert.equal(p.tls.minVersion, 'TLSv1.2');
    assert.equal(p.http2, true);
    assert.equal(p.maxStreams, 100);
    assert.equal(p.sniContexts.length, 1);
    assert.equal(selectSNI(p.sniTable, 'bar.example.com'), 0);
    assert.deepEqual(p.insecureCiphers, ['TLS_RSA_WITH_AES_128_GCM_SHA256']);
    assert.equal(prepareServing({ cert: foo.certPEM, key: foo.keyPEM, disableHTTP2: true, http2MaxStreamsPerConnection: 5, minVersion: 'VersionTLS13' }).maxStreams, 5);
    assert.throws(() => prepareServing({ cert: foo.certPEM, key: foo.keyPEM, minVersion: 'VersionTLS9' }), /unknown tls version/);
    assert.throws(() => prepareServing({ cert: foo.certPEM, key: bar.keyPEM }), /private key does not match/);
    assert.throws(() => prepareServing({ cert: foo.certPEM, key: foo.keyPEM, cipherSuites: ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'] }), /^Error: error configuring http2: http2: TLSConfig.CipherSuites is missing/);
    assert.doesNotThrow(() => prepareServing({ cert: foo.certPEM, key: foo.keyPEM, cipherSuites: ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'], disableHTTP2: true }));
    rmSync(dir, { recursive: true, force: true });
  });
});
