// Image credential provider plugins (src/nodeagent/credentialplugins.ts): the config's tokenAttributes
// (KubeletServiceAccountTokenForCredentialProviders, alpha in 1.33) as the kubelet 1.33 validates
// them, and a pod's pull through such a plugin: its service account's annotations and a bound
// token in the request, the answers cached per service account. The plugin is a real process (a
// small Node script) that records each request it is given.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CredentialPlugins, loadCredentialProviders, type ServiceAccountAccess } from '../../src/nodeagent/credentialplugins.js';

let dir: string;
let bin: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-credplugins-'));
  bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  // the plugin: appends the request to requests.jsonl, answers credentials named after the token it
  // was given (none: "anonymous"), cached as CACHE_KEY_TYPE says
  const script = [
    '#!/usr/bin/env node',
    "const fs = require('fs');",
    "let input = '';",
    "process.stdin.on('data', (d) => (input += d));",
    "process.stdin.on('end', () => {",
    `  fs.appendFileSync(${JSON.stringify(join(dir, 'requests.jsonl'))}, input + '\\n');`,
    '  const req = JSON.parse(input);',
    "  const user = req.serviceAccountToken ? 'tok-' + req.serviceAccountToken : 'anonymous';",
    "  process.stdout.write(JSON.stringify({ kind: 'CredentialProviderResponse', apiVersion: req.apiVersion, cacheKeyType: process.env.CACHE_KEY_TYPE || 'Registry', auth: { 'registry.example.com': { username: user, password: 'p' } } }));",
    '});',
  ].join('\n');
  writeFileSync(join(bin, 'sa-helper'), script, { mode: 0o755 });
});

after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** a config file of one provider (YAML lines after the common ones), its path */
function config(providerLines: string[], apiVersion = 'kubelet.config.k8s.io/v1'): string {
  const f = join(dir, `config-${n++}.yaml`);
  writeFileSync(f, [`apiVersion: ${apiVersion}`, 'kind: CredentialProviderConfig', 'providers:', '- name: sa-helper', '  matchImages: ["registry.example.com"]', '  defaultCacheDuration: 10m', ...providerLines].join('\n') + '\n');
  return f;
}

const V1 = '  apiVersion: credentialprovider.kubelet.k8s.io/v1';
const refused = (f: string, gate: boolean) => {
  try {
    loadCredentialProviders(f, bin, { saTokenForCredentialProviders: gate });
  } catch (e) {
    return (e as Error).message;
  }
  return '';
};

test('tokenAttributes with the gate off: refused, as before', () => {
  const f = config([V1, '  tokenAttributes:', '    serviceAccountTokenAudience: reg', '    requireServiceAccount: true']);
  assert.equal(refused(f, false), 'failed to validate credential provider config: providers.tokenAttributes: Forbidden: tokenAttributes is not supported when KubeletServiceAccountTokenForCredentialProviders feature gate is disabled');
  assert.equal(refused(f, true), '');
  const [p] = loadCredentialProviders(f, bin, { saTokenForCredentialProviders: true });
  assert.deepEqual(p!.tokenAttributes, { serviceAccountTokenAudience: 'reg', requireServiceAccount: true, requiredServiceAccountAnnotationKeys: [], optionalServiceAccountAnnotationKeys: [] });
});

test('tokenAttributes validation: the kubelet 1.33 messages', () => {
  const ta = (...lines: string[]) => config([V1, '  tokenAttributes:', ...lines.map((l) => `    ${l}`)]);
  assert.equal(
    refused(ta('requiredServiceAccountAnnotationKeys: ["a.io/x"]'), true),
    'failed to validate credential provider config: [providers.tokenAttributes.serviceAccountTokenAudience: Required value: serviceAccountTokenAudience is required, providers.tokenAttributes.requireServiceAccount: Required value: requireServiceAccount is required]',
  );
  assert.equal(
    refused(config(['  apiVersion: credentialprovider.kubelet.k8s.io/v1beta1', '  tokenAttributes:', '    serviceAccountTokenAudience: reg', '    requireServiceAccount: true']), true),
    'failed to validate credential provider config: providers.tokenAttributes: Forbidden: tokenAttributes is only supported for credentialprovider.kubelet.k8s.io/v1 API version',
  );
  assert.equal(
    refused(ta('serviceAccountTokenAudience: reg', 'requireServiceAccount: false', 'requiredServiceAccountAnnotationKeys: ["a.io/x"]'), true),
    'failed to validate credential provider config: providers.tokenAttributes.requiredServiceAccountAnnotationKeys: Forbidden: requireServiceAccount cannot be false when requiredServiceAccountAnnotationKeys is set',
  );
  assert.equal(
    refused(ta('serviceAccountTokenAudience: reg', 'requireServiceAccount: true', 'requiredServiceAccountAnnotationKeys: ["a.io/x", "a.io/x", "Upper.IO/Fine", "bad/key/x"]'), true),
    'failed to validate credential provider config: [providers.tokenAttributes.requiredServiceAccountAnnotationKeys: Duplicate value: "a.io/x", ' +
      'providers.tokenAttributes.requiredServiceAccountAnnotationKeys: Invalid value: "bad/key/x": a qualified name must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\') with an optional DNS subdomain prefix and \'/\' (e.g. \'example.com/MyName\')]',
  );
  assert.equal(
    refused(ta('serviceAccountTokenAudience: reg', 'requireServiceAccount: true', 'requiredServiceAccountAnnotationKeys: ["a.io/b", "a.io/a", "a.io/r"]', 'optionalServiceAccountAnnotationKeys: ["a.io/b", "a.io/a", "a.io/o"]'), true),
    'failed to validate credential provider config: providers.tokenAttributes: Invalid value: []string{"a.io/a", "a.io/b"}: annotation keys cannot be both required and optional',
  );
});

test('strict decoding: 1.33 has no cacheType, and only kubelet.config.k8s.io/v1 has tokenAttributes', () => {
  const f = config([V1, '  tokenAttributes:', '    serviceAccountTokenAudience: reg', '    requireServiceAccount: true', '    cacheType: Token']);
  assert.equal(refused(f, true), `error decoding config "${f}": strict decoding error: unknown field "providers[0].tokenAttributes.cacheType"`);
  const g = config([V1, '  tokenAttributes:', '    serviceAccountTokenAudience: reg', '    requireServiceAccount: true'], 'kubelet.config.k8s.io/v1beta1');
  assert.equal(refused(g, true), `error decoding config "${g}": strict decoding error: unknown field "providers[0].tokenAttributes"`);
  const h = config([V1, '  typo: 1', '  env:', '  - name: A', '    value: b', '    extra: c']);
  assert.equal(refused(h, false), `error decoding config "${h}": strict decoding error: unknown field "providers[0].typo", unknown field "providers[0].env[0].extra"`);
  const i = config([V1, '  tokenAttributes:', '    serviceAccountTokenAudience: reg', '    requireServiceAccount: "yes"']);
  assert.match(refused(i, true), /^error decoding config ".*": json: cannot unmarshal string into Go struct field ServiceAccountTokenAttributes\.providers\.tokenAttributes\.requireServiceAccount of type bool$/);
});

interface Seen {
  sa: string[];
  tokens: { namespace: string; name: string; audience: string; pod: { name: string; uid: string } }[];
}

function access(sas: Record<string, any>, seen: Seen, tokenFails = false): ServiceAccountAccess {
  return {
    async getServiceAccount(namespace, name) {
      seen.sa.push(`${namespace}/${name}`);
      const sa = sas[`${namespace}/${name}`];
      if (!sa) throw new Error(`serviceaccounts "${name}" not found`);
      return sa;
    },
    async getToken(namespace, name, audience, pod) {
      seen.tokens.push({ namespace, name, audience, pod });
      if (tokenFails) throw new Error('serviceaccounts "x" is forbidden: audience "reg" not found in pod spec volume');
      return `${namespace}.${name}.${pod.name}`;
    },
  };
}

function requests(): any[] {
  const f = join(dir, 'requests.jsonl');
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

function logger() {
  const lines: string[] = [];
  return {
    lines,
    log: {
      info: (m: string) => lines.push(`I ${m}`),
      warn: (m: string) => lines.push(`W ${m}`),
      error: (e: unknown, m: string) => lines.push(`E ${m}: ${(e as Error).message}`),
      v: (level: number) => ({ enabled: true, info: (m: string) => lines.push(`V${level} ${m}`) }),
    },
  };
}

const SAS = {
  'apps/builder': { metadata: { namespace: 'apps', name: 'builder', uid: 'uid-builder', annotations: { 'reg.io/role': 'pull', 'reg.io/team': 'a', other: 'x' } } },
  'apps/deployer': { metadata: { namespace: 'apps', name: 'deployer', uid: 'uid-deployer', annotations: { 'reg.io/role': 'push' } } },
  'apps/plain': { metadata: { namespace: 'apps', name: 'plain', uid: 'uid-plain' } },
};
const pod = (name: string, sa: string) => ({ namespace: 'apps', name, uid: `uid-${name}`, serviceAccountName: sa });

test('a pod\'s pull: the service account\'s annotations and a token bound to the pod in the request; cached per service account', async () => {
  rmSync(join(dir, 'requests.jsonl'), { force: true });
  const f = config([
    V1,
    '  tokenAttributes:',
    '    serviceAccountTokenAudience: reg-audience',
    '    requireServiceAccount: true',
    '    requiredServiceAccountAnnotationKeys: ["reg.io/role"]',
    '    optionalServiceAccountAnnotationKeys: ["reg.io/team", "reg.io/absent"]',
  ]);
  const providers = loadCredentialProviders(f, bin, { saTokenForCredentialProviders: true });
  const errors: string[] = [];
  const l = logger();
  const plugins = new CredentialPlugins(providers, bin, (p, e) => errors.push(`${p}: ${e.message}`), l.log);
  const seen: Seen = { sa: [], tokens: [] };
  plugins.useServiceAccounts(access(SAS, seen));

  const got = await plugins.lookup('registry.example.com/team/app', pod('web-1', 'builder'));
  assert.deepEqual(got, [{ username: 'tok-apps.builder.web-1', password: 'p' }]);
  assert.deepEqual(seen.tokens, [{ namespace: 'apps', name: 'builder', audience: 'reg-audience', pod: { name: 'web-1', uid: 'uid-web-1' } }]);
  assert.deepEqual(requests(), [
    {
      kind: 'CredentialProviderRequest',
      apiVersion: 'credentialprovider.kubelet.k8s.io/v1',
      image: 'registry.example.com/team/app',
      serviceAccountToken: 'apps.builder.web-1',
      serviceAccountAnnotations: { 'reg.io/role': 'pull', 'reg.io/team': 'a' },
    },
  ]);

  // another pod of the same service account: the cached answer (the token is still requested)
  assert.deepEqual(await plugins.lookup('registry.example.com/other/app', pod('web-2', 'builder')), [{ username: 'tok-apps.builder.web-1', password: 'p' }]);
  assert.equal(requests().length, 1);
  assert.equal(seen.tokens.length, 2);

  // another service account never shares the cached credentials
  assert.deepEqual(await plugins.lookup('registry.example.com/team/app', pod('job-1', 'deployer')), [{ username: 'tok-apps.deployer.job-1', password: 'p' }]);
  assert.equal(requests().length, 2);
  assert.deepEqual(requests()[1].serviceAccountAnnotations, { 'reg.io/role': 'push' });

  // a service account without the required annotation: the plugin is not run, quietly (-v5)
  assert.deepEqual(await plugins.lookup('registry.example.com/team/app', pod('p-1', 'plain')), []);
  assert.equal(requests().length, 2);
  assert.ok(l.lines.includes('V5 Failed to get service account data apps/plain: required annotation reg.io/role not found'), l.lines.join('\n'));

  // a pod without a service account name: not run either
  assert.deepEqual(await plugins.lookup('registry.example.com/team/app', { namespace: 'apps', name: 'static', uid: 'u', serviceAccountName: '' }), []);
  assert.ok(l.lines.includes('V5 Service account name is empty for pod apps/static'), l.lines.join('\n'));

  // a service account that cannot be read: an error, not run
  assert.deepEqual(await plugins.lookup('registry.example.com/team/app', pod('x', 'missing')), []);
  assert.ok(l.lines.includes('E Failed to get service account apps/missing: serviceaccounts "missing" not found'), l.lines.join('\n'));
  assert.equal(requests().length, 2);
  assert.deepEqual(errors, []);
});

test('a token the API refuses: the plugin is not run; without the API (standalone) neither', async () => {
  rmSync(join(dir, 'requests.jsonl'), { force: true });
  const f = config([V1, '  tokenAttributes:', '    serviceAccountTokenAudience: reg', '    requireServiceAccount: true']);
  const providers = loadCredentialProviders(f, bin, { saTokenForCredentialProviders: true });
  const l = logger();
  const plugins = new CredentialPlugins(providers, bin, () => {}, l.log);
  const seen: Seen = { sa: [], tokens: [] };
  plugins.useServiceAccounts(access(SAS, seen, true));
  assert.deepEqual(await plugins.lookup('registry.example.com/a', pod('w', 'builder')), []);
  assert.ok(l.lines.includes('E Error getting service account token apps/builder: serviceaccounts "x" is forbidden: audience "reg" not found in pod spec volume'), l.lines.join('\n'));
  const standalone = new CredentialPlugins(providers, bin, () => {}, l.log);
  assert.deepEqual(await standalone.lookup('registry.example.com/a', pod('w', 'builder')), []);
  assert.equal(requests().length, 0);
});

test('requireServiceAccount false: a pod without a service account is served without a token; plugins without tokenAttributes are unchanged', async () => {
  rmSync(join(dir, 'requests.jsonl'), { force: true });
  const f = config([V1, '  tokenAttributes:', '    serviceAccountTokenAudience: reg', '    requireServiceAccount: false']);
  const plugins = new CredentialPlugins(loadCredentialProviders(f, bin, { saTokenForCredentialProviders: true }), bin, () => {});
  const seen: Seen = { sa: [], tokens: [] };
  plugins.useServiceAccounts(access(SAS, seen));
  assert.deepEqual(await plugins.lookup('registry.example.com/a', { namespace: 'apps', name: 's', uid: 'u', serviceAccountName: '' }), [{ username: 'anonymous', password: 'p' }]);
  assert.deepEqual(requests(), [{ kind: 'CredentialProviderRequest', apiVersion: 'credentialprovider.kubelet.k8s.io/v1', image: 'registry.example.com/a' }]);
  // with a service account: its token, and a cache of its own (the token-less answer is not reused)
  assert.deepEqual(await plugins.lookup('registry.example.com/a', pod('w', 'plain')), [{ username: 'tok-apps.plain.w', password: 'p' }]);
  assert.equal(requests().length, 2);
  assert.deepEqual(seen.sa, ['apps/plain']);

  rmSync(join(dir, 'requests.jsonl'), { force: true });
  const g = config([V1]);
  const classic = new CredentialPlugins(loadCredentialProviders(g, bin, { saTokenForCredentialProviders: true }), bin, () => {});
  const seen2: Seen = { sa: [], tokens: [] };
  classic.useServiceAccounts(access(SAS, seen2));
  assert.deepEqual(await classic.lookup('registry.example.com/a', pod('w', 'builder')), [{ username: 'anonymous', password: 'p' }]);
  assert.deepEqual(await classic.lookup('registry.example.com/b', pod('w2', 'deployer')), [{ username: 'anonymous', password: 'p' }]);
  assert.deepEqual(requests(), [{ kind: 'CredentialProviderRequest', apiVersion: 'credentialprovider.kubelet.k8s.io/v1', image: 'registry.example.com/a' }], 'one run, shared by every pod');
  assert.deepEqual(seen2, { sa: [], tokens: [] });
});
