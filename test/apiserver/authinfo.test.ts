// The data of kube-system/extension-apiserver-authentication: what is stored combined with the
// server's own, as kube-apiserver's cluster authentication trust controller combines them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { authenticationInfoData } from '../../src/apiserver/authinfo.js';
import { makeCert } from '../authn/helpers.js';

const der = (pem: string) => new X509Certificate(pem).raw.toString('base64');
const certsOf = (bundle: string) => bundle.split(/(?<=-----END CERTIFICATE-----\n)/).filter((x) => x.trim()).map(der);

test('client CAs only: one key, the certificates PEM encoded', async () => {
  const a = await makeCert({ subject: 'CN=a', isCA: true });
  const data = authenticationInfoData(undefined, { clientCA: a.pem });
  assert.deepEqual(Object.keys(data), ['client-ca-file']);
  assert.deepEqual(certsOf(data['client-ca-file']!), [der(a.pem)]);
  assert.match(data['client-ca-file']!, /^-----BEGIN CERTIFICATE-----\n([A-Za-z0-9+/=]{64}\n)+[A-Za-z0-9+/=]{1,64}\n-----END CERTIFICATE-----\n$/);
});

test('stored and own are combined: certificates of both once, expired ones dropped, lists of both with each name once', async () => {
  const a = await makeCert({ subject: 'CN=a', isCA: true });
  const b = await makeCert({ subject: 'CN=b', isCA: true });
  const old = await makeCert({ subject: 'CN=old', isCA: true, notBefore: new Date(Date.now() - 7200_000), notAfter: new Date(Date.now() - 600_000) });
  const proxy = await makeCert({ subject: 'CN=proxy', isCA: true });
  const existing = {
    'client-ca-file': a.pem + old.pem,
    'requestheader-client-ca-file': proxy.pem,
    'requestheader-username-headers': '["X-Other-User"]',
    'requestheader-allowed-names': 'not json',
  };
  const data = authenticationInfoData(existing, {
    clientCA: b.pem + a.pem,
    requestHeader: { clientCA: proxy.pem, usernameHeaders: ['X-Remote-User', 'X-Other-User'], uidHeaders: [], groupHeaders: ['X-Remote-Group'], extraHeadersPrefix: [], allowedNames: ['front-proxy'] },
  });
  assert.deepEqual(certsOf(data['client-ca-file']!), [der(a.pem), der(b.pem)]);
  assert.deepEqual(certsOf(data['requestheader-client-ca-file']!), [der(proxy.pem)]);
  assert.equal(data['requestheader-username-headers'], '["X-Other-User","X-Remote-User"]');
  assert.equal(data['requestheader-group-headers'], '["X-Remote-Group"]');
  assert.equal(data['requestheader-uid-headers'], '[]');
  assert.equal(data['requestheader-extra-headers-prefix'], '[]');
  assert.equal(data['requestheader-allowed-names'], '["front-proxy"]');
  // written again from what it gives, nothing changes
  assert.deepEqual(authenticationInfoData(data, { clientCA: b.pem }), data);
});

test('no front proxy certificate anywhere: no requestheader keys', async () => {
  const a = await makeCert({ subject: 'CN=a', isCA: true });
  const data = authenticationInfoData({ 'requestheader-username-headers': '["X"]' }, { clientCA: a.pem });
  assert.deepEqual(Object.keys(data), ['client-ca-file']);
});
