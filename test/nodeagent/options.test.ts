import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Command, FeatureGate, type Writer } from '../../src/cli/flags.js';
import { declareKubeletFlags, applyKubeletFlagsOver, resolveKubeletCommandLine, CONFIG_FLAG_DEPRECATED } from '../../src/cli/kubeletflags.js';
import {
  defaultKubeletConfiguration, defaultFlagKubeletConfiguration, defaultKubeletFlags, loadKubeletConfigFile, mergeKubeletDropins,
  validateKubeletConfiguration, validateKubeletFlags, validateKeelsonSupport, checkKubeletStartup, configzJSON, parseTaints,
  parseReservedMemory, parseNodeIPs, parseEvictionThresholds, parseCPUSet, dropinFiles, reservedResources, KUBELET_FEATURES,
  DEFAULT_EVICTION_HARD, cloneKubeletConfiguration, type KubeletConfiguration, type KubeletFlags, type ResolvedKubelet,
} from '../../src/nodeagent/options.js';
import { tempDir } from '../tempdir.js';

const HEAD = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';

function errOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  assert.fail('expected an error');
}

function sink(): Writer & { text: string } {
  const w = { text: '', write(s: string) { w.text += s; return true; } };
  return w;
}

/** `keelson kubelet <args>` up to the resolution of its options */
async function kubelet(args: string[], o: { cgroupV1?: boolean } = {}): Promise<{ code: number; out: string; err: string; resolved?: ResolvedKubelet; cfg: KubeletConfiguration; f: KubeletFlags }> {
  const gate = new FeatureGate(KUBELET_FEATURES);
  const cfg = defaultFlagKubeletConfiguration(gate);
  const f = defaultKubeletFlags();
  let resolved: ResolvedKubelet | undefined;
  const cmd = new Command({
    use: 'kubelet',
    silenceUsage: true,
    run: ({ flags }) => {
      resolved = resolveKubeletCommandLine(flags, cfg, f, gate, { cgroupV1: o.cgroupV1 ?? false });
    },
  });
  declareKubeletFlags(cmd, cfg, f, gate);
  const out = sink();
  const err = sink();
  const code = await cmd.execute(args, { stdout: out, stderr: err });
  return { code, out: out.text, err: err.text, resolved, cfg, f };
}

function file(dir: string, name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe('defaults', () => {
  test('without --config: the flags\' (legacy) defaults', () => {
    const c = defaultFlagKubeletConfiguration();
    assert.equal(c.authentication.anonymous.enabled, true);
    assert.equal(c.authentication.webhook.enabled, false);
    assert.equal(c.authorization.mode, 'AlwaysAllow');
    assert.equal(c.readOnlyPort, 10255);
    assert.deepEqual(c.evictionHard, {});
    assert.equal(c.port, 10250);
    assert.equal(c.address, '0.0.0.0');
    assert.equal(c.syncFrequency, 60_000);
    assert.equal(c.eventRecordQPS, 50);
    assert.equal(c.eventBurst, 100);
    assert.equal(c.kubeAPIQPS, 50);
    assert.equal(c.containerLogMaxSize, '10Mi');
    assert.equal(c.containerLogMaxFiles, 5);
    assert.deepEqual(c.enforceNodeAllocatable, ['pods']);
    assert.equal(c.containerRuntimeEndpoint, 'unix:///run/containerd/containerd.sock');
    assert.equal(c.nodeStatusReportFrequency, 300_000);
    assert.equal(c.oomScoreAdj, -999);
    assert.equal(c.podPidsLimit, -1);
    assert.equal(c.memoryThrottlingFactor, 0.9);
    assert.equal(c.maxParallelImagePulls, undefined);
    assert.equal(c.logging.format, 'text');
    assert.equal(c.logging.flushFrequency, 5000);
    const f = defaultKubeletFlags();
    assert.equal(f.rootDirectory, '/var/lib/kubelet');
    assert.equal(f.certDirectory, '/var/lib/kubelet/pki');
    assert.equal(f.maxContainerCount, -1);
    assert.equal(f.maxPerPodContainerCount, 1);
  });

  test('v1beta1 defaults (a --config file): anonymous off, webhook on, Webhook, no read-only port', () => {
    const c = defaultKubeletConfiguration();
    assert.equal(c.authentication.anonymous.enabled, false);
    assert.equal(c.authentication.webhook.enabled, true);
    assert.equal(c.authorization.mode, 'Webhook');
    assert.equal(c.readOnlyPort, 0);
  });

  test('feature-gated defaults follow the gates', () => {
    assert.equal(defaultKubeletConfiguration().crashLoopBackOff.maxContainerRestartPeriod, undefined);
    const gate = new FeatureGate(KUBELET_FEATURES);
    gate.set('KubeletCrashLoopBackOffMax=true,KubeletEnsureSecretPulledImages=true');
    const c = defaultKubeletConfiguration(gate);
    assert.equal(c.crashLoopBackOff.maxContainerRestartPeriod, 300_000);
    assert.equal(c.imagePullCredentialsVerificationPolicy, 'NeverVerifyPreloadedImages');
  });

  test('the command line without --config resolves to the flag defaults', async () => {
    const r = await kubelet([]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.resolved!.config.authorization.mode, 'AlwaysAllow');
    assert.equal(r.resolved!.config.readOnlyPort, 10255);
  });
});

describe('the config file', () => {
  test('YAML: defaulted as the kubelet does (pointers when absent, plain fields when zero)', () => {
    const dir = tempDir('kubelet-cfg-');
    const p = file(dir, 'kubelet.yaml', HEAD + 'port: 0\neventRecordQPS: 0\neventBurst: 0\nsyncFrequency: 30s\nnodeStatusUpdateFrequency: 20s\nclusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\nfeatureGates:\n  NodeLogQuery: true\nenforceNodeAllocatable: []\n');
    const c = loadKubeletConfigFile(p);
    assert.equal(c.port, 10250);
    assert.equal(c.eventRecordQPS, 0);
    assert.equal(c.eventBurst, 100);
    assert.equal(c.syncFrequency, 30_000);
    assert.equal(c.nodeStatusReportFrequency, 20_000, 'nodeStatusReportFrequency follows an explicit nodeStatusUpdateFrequency');
    assert.deepEqual(c.clusterDNS, ['10.96.0.10']);
    assert.deepEqual(c.featureGates, { NodeLogQuery: true });
    assert.deepEqual(c.enforceNodeAllocatable, [], 'an empty list is not nil: no default');
    assert.equal(c.authorization.mode, 'Webhook');
    assert.deepEqual(c.evictionHard, DEFAULT_EVICTION_HARD, 'a file without evictionHard gets the kubelet\'s thresholds');
  });

  test('JSON, and an evictionHard given replaces the default thresholds', () => {
    const dir = tempDir('kubelet-cfg-');
    const p = file(dir, 'kubelet.json', JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', evictionHard: { 'memory.available': '200Mi' }, maxPods: 50, authentication: { anonymous: { enabled: true } } }));
    const c = loadKubeletConfigFile(p);
    assert.deepEqual(c.evictionHard, { 'memory.available': '200Mi' });
    assert.equal(c.maxPods, 50);
    assert.equal(c.authentication.anonymous.enabled, true);
    assert.equal(c.authentication.webhook.enabled, true);
  });

  test('relative paths resolve against the file\'s directory', () => {
    const dir = tempDir('kubelet-cfg-');
    mkdirSync(join(dir, 'conf'));
    const p = file(join(dir, 'conf'), 'k.yaml', HEAD + 'staticPodPath: manifests\ntlsCertFile: pki/k.crt\ntlsPrivateKeyFile: /abs/k.key\nauthentication:\n  x509:\n    clientCAFile: ca.crt\nresolvConf: resolv.conf\nvolumePluginDir: plugins\n');
    const c = loadKubeletConfigFile(p);
    assert.equal(c.staticPodPath, join(dir, 'conf', 'manifests'));
    assert.equal(c.tlsCertFile, join(dir, 'conf', 'pki/k.crt'));
    assert.equal(c.tlsPrivateKeyFile, '/abs/k.key');
    assert.equal(c.authentication.x509.clientCAFile, join(dir, 'conf', 'ca.crt'));
    assert.equal(c.resolvConf, join(dir, 'conf', 'resolv.conf'));
    assert.equal(c.volumePluginDir, join(dir, 'conf', 'plugins'));
  });

  test('apiVersion and kind: the kubelet\'s decoding errors', () => {
    const dir = tempDir('kubelet-cfg-');
    const v1 = file(dir, 'v1.yaml', 'apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n');
    assert.equal(errOf(() => loadKubeletConfigFile(v1)).message,
      `failed to load Kubelet config file ${v1}, error failed to decode: no kind "KubeletConfiguration" is registered for version "kubelet.config.k8s.io/v1" in scheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme/scheme.go:32"`);
    const kind = file(dir, 'kind.yaml', 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: Config\n');
    assert.match(errOf(() => loadKubeletConfigFile(kind)).message, /failed to decode: no kind "Config" is registered for version "kubelet.config.k8s.io\/v1beta1" in scheme/);
    const nokind = file(dir, 'nokind.yaml', 'apiVersion: kubelet.config.k8s.io/v1beta1\nport: 1\n');
    assert.equal(errOf(() => loadKubeletConfigFile(nokind)).message, `failed to load Kubelet config file ${nokind}, error failed to decode: Object 'Kind' is missing in 'apiVersion: kubelet.config.k8s.io/v1beta1\nport: 1\n'`);
    const noversion = file(dir, 'nov.yaml', 'kind: KubeletConfiguration\n');
    assert.match(errOf(() => loadKubeletConfigFile(noversion)).message, /failed to decode: Object 'apiVersion' is missing in 'kind: KubeletConfiguration\n'/);
    const empty = file(dir, 'empty.yaml', '');
    assert.equal(errOf(() => loadKubeletConfigFile(empty)).message, `failed to load Kubelet config file ${empty}, error kubelet config file "${empty}" was empty`);
    const missing = join(dir, 'missing.yaml');
    assert.equal(errOf(() => loadKubeletConfigFile(missing)).message, `failed to load Kubelet config file ${missing}, error failed to read kubelet config file "${missing}", error: open ${missing}: no such file or directory`);
  });

  test('unknown and duplicated fields: strict decoding fails, lenient decoding goes on and is logged', () => {
    const dir = tempDir('kubelet-cfg-');
    const p = file(dir, 'k.yaml', HEAD + 'port: 10251\nfoo: 1\nauthentication:\n  bar: true\nport: 10252\n');
    const logs: { msg: string; kv: Record<string, unknown> }[] = [];
    const c = loadKubeletConfigFile(p, { log: (msg, kv) => logs.push({ msg, kv }) });
    assert.equal(c.port, 10252);
    assert.deepEqual(logs, [{
      msg: 'Using lenient decoding as strict decoding failed',
      kv: { err: 'strict decoding error: yaml: unmarshal errors:\n  line 7: key "port" already set in map, unknown field "foo", unknown field "authentication.bar"' },
    }]);
  });

  test('type errors are fatal, with encoding/json\'s words', () => {
    const dir = tempDir('kubelet-cfg-');
    const p = file(dir, 'k.yaml', HEAD + 'port: "x"\n');
    assert.equal(errOf(() => loadKubeletConfigFile(p)).message, `failed to load Kubelet config file ${p}, error failed to decode: json: cannot unmarshal string into Go struct field KubeletConfiguration.port of type int32`);
    const q = file(dir, 'q.yaml', HEAD + 'authentication:\n  anonymous:\n    enabled: 3\n');
    assert.match(errOf(() => loadKubeletConfigFile(q)).message, /json: cannot unmarshal number into Go struct field KubeletAnonymousAuthentication.authentication.anonymous.enabled of type bool$/);
    const d = file(dir, 'd.yaml', HEAD + 'syncFrequency: 1x\n');
    assert.match(errOf(() => loadKubeletConfigFile(d)).message, /failed to decode: time: unknown unit "x" in duration "1x"$/);
  });
});

describe('drop-ins (--config-dir)', () => {
  test('.conf files in lexical order, subdirectories walked, other files ignored', () => {
    const dir = tempDir('kubelet-dropin-');
    file(dir, '20-b.conf', HEAD + 'maxPods: 20\n');
    file(dir, '10-a.conf', HEAD + 'maxPods: 10\nport: 1111\n');
    file(dir, '30-c.yaml', HEAD + 'maxPods: 30\n');
    mkdirSync(join(dir, '25-sub'));
    file(join(dir, '25-sub'), 'x.conf', HEAD + 'maxPods: 25\n');
    assert.deepEqual(dropinFiles(dir).map((p) => p.slice(dir.length + 1)), ['10-a.conf', '20-b.conf', '25-sub/x.conf']);
    const c = mergeKubeletDropins(defaultKubeletConfiguration(), dir);
    assert.equal(c.maxPods, 25);
    assert.equal(c.port, 1111);
  });

  test('structs and maps merge, lists replace, values are not defaulted, relative paths stay', () => {
    const dir = tempDir('kubelet-dropin-');
    const base = defaultKubeletConfiguration();
    base.featureGates = { A: true, B: true };
    base.clusterDNS = ['10.0.0.1', '10.0.0.2'];
    base.evictionHard = { 'memory.available': '100Mi' };
    file(dir, '10.conf', HEAD + 'featureGates:\n  B: false\n  C: true\nclusterDNS: [10.0.0.9]\nauthorization:\n  mode: AlwaysAllow\nevictionHard:\n  nodefs.available: 5%\neventBurst: 0\nstaticPodPath: rel/manifests\n');
    const c = mergeKubeletDropins(base, dir);
    assert.deepEqual(c.featureGates, { A: true, B: false, C: true });
    assert.deepEqual(c.clusterDNS, ['10.0.0.9']);
    assert.equal(c.authorization.mode, 'AlwaysAllow');
    assert.equal(c.authorization.webhook.cacheAuthorizedTTL, 300_000);
    assert.deepEqual(c.evictionHard, { 'memory.available': '100Mi', 'nodefs.available': '5%' });
    assert.equal(c.eventBurst, 0);
    assert.equal(c.staticPodPath, 'rel/manifests');
    assert.deepEqual(base.clusterDNS, ['10.0.0.1', '10.0.0.2'], 'the base is not changed');
  });

  test('errors name the directory and the file', () => {
    const dir = tempDir('kubelet-dropin-');
    assert.equal(errOf(() => mergeKubeletDropins(defaultKubeletConfiguration(), join(dir, 'nope'))).message,
      `failed to walk through kubelet dropin directory "${join(dir, 'nope')}": lstat ${join(dir, 'nope')}: no such file or directory`);
    const bad = file(dir, '10.conf', 'port: 1\n');
    assert.equal(errOf(() => mergeKubeletDropins(defaultKubeletConfiguration(), dir)).message,
      `failed to walk through kubelet dropin directory "${dir}": failed to load kubelet dropin file, path: ${bad}, error: failed to decode: Object 'Kind' is missing in 'port: 1\n'`);
  });

  test('a symbolic link to a directory inside is not walked; the root may be one', () => {
    const dir = tempDir('kubelet-dropin-');
    const real = join(dir, 'real');
    mkdirSync(real);
    file(real, 'a.conf', HEAD + 'maxPods: 7\n');
    symlinkSync(real, join(dir, 'link'));
    assert.deepEqual(dropinFiles(join(dir, 'link')), [join(dir, 'link', 'a.conf')]);
  });
});

describe('precedence: defaults < --config < drop-ins < flags', () => {
  test('the whole chain through the command line', async () => {
    const dir = tempDir('kubelet-prec-');
    const cfgPath = file(dir, 'kubelet.yaml', HEAD + 'maxPods: 50\nport: 11000\nregistryBurst: 3\nevictionHard:\n  memory.available: 300Mi\n  nodefs.available: 7%\nfeatureGates:\n  NodeLogQuery: true\n  MemoryQoS: false\nclusterDNS: [10.0.0.1]\n');
    mkdirSync(join(dir, 'd'));
    file(join(dir, 'd'), '10.conf', HEAD + 'maxPods: 60\nport: 12000\n');
    const r = await kubelet(['--config', cfgPath, '--config-dir', join(dir, 'd'), '--port=13000', '--eviction-hard=imagefs.available<20%', '--feature-gates=MemoryQoS=true', '--cluster-dns=10.0.0.2']);
    assert.equal(r.code, 0, r.err);
    const c = r.resolved!.config;
    assert.equal(c.maxPods, 60, 'drop-in over file');
    assert.equal(c.port, 13000, 'flag over drop-in');
    assert.equal(c.registryBurst, 3, 'file over default');
    assert.equal(c.readOnlyPort, 0, 'file defaults, not flag defaults');
    assert.equal(c.authorization.mode, 'Webhook');
    assert.deepEqual(c.evictionHard, { 'imagefs.available': '20%' }, 'a map flag replaces the file\'s map');
    assert.deepEqual(c.featureGates, { MemoryQoS: true, NodeLogQuery: true }, 'feature gates merge, the flag winning');
    assert.deepEqual(c.clusterDNS, ['10.0.0.2']);
    assert.match(r.err, /Flag --port has been deprecated, This parameter should be set via the config file/);
    assert.equal(r.err.match(/Flag --port has been deprecated/g)!.length, 1, 'the notice is printed once, not again when the flags are applied over the file');
  });

  test('flags not given do not override the file', async () => {
    const dir = tempDir('kubelet-prec-');
    const cfgPath = file(dir, 'kubelet.yaml', HEAD + 'readOnlyPort: 10255\nauthentication:\n  anonymous:\n    enabled: true\nauthorization:\n  mode: AlwaysAllow\n');
    const r = await kubelet([`--config=${cfgPath}`, '--max-pods=9']);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.resolved!.config.maxPods, 9);
    assert.equal(r.resolved!.config.readOnlyPort, 10255);
    assert.equal(r.resolved!.config.authentication.anonymous.enabled, true);
  });

  test('--vmodule adds to the file\'s patterns; -v replaces its verbosity', () => {
    const c = defaultKubeletConfiguration();
    c.logging.vmodule = [{ filePattern: 'a', verbosity: 1 }];
    c.logging.verbosity = 2;
    applyKubeletFlagsOver(c, [{ name: 'vmodule', value: 'b=3' }, { name: 'v', value: '5' }], new FeatureGate(KUBELET_FEATURES));
    assert.deepEqual(c.logging.vmodule, [{ filePattern: 'a', verbosity: 1 }, { filePattern: 'b', verbosity: 3 }]);
    assert.equal(c.logging.verbosity, 5);
  });

  test('errors of the flow carry the kubelet\'s prefixes', async () => {
    const dir = tempDir('kubelet-prec-');
    let r = await kubelet(['--config', join(dir, 'none.yaml')]);
    assert.equal(r.code, 1);
    assert.equal(r.err.trim(), `Error: failed to load kubelet config file, path: ${join(dir, 'none.yaml')}, error: failed to load Kubelet config file ${join(dir, 'none.yaml')}, error failed to read kubelet config file "${join(dir, 'none.yaml')}", error: open ${join(dir, 'none.yaml')}: no such file or directory`);
    r = await kubelet(['--image-gc-high-threshold=101']);
    assert.equal(r.err.split('\n').filter((l) => l.startsWith('Error: ')).join('\n'), 'Error: failed to validate kubelet configuration, error: invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) 101 must be between 0 and 100, inclusive');
    r = await kubelet(['--image-gc-high-threshold=101', '--event-qps=-1']);
    assert.match(r.err, /Error: failed to validate kubelet configuration, error: \[invalid configuration: eventRecordQPS \(--event-qps\) -1 must not be a negative number, invalid configuration: imageGCHighThresholdPercent \(--image-gc-high-threshold\) 101 must be between 0 and 100, inclusive\]\n/);
    r = await kubelet(['--feature-gates=NoSuchGate=true']);
    assert.match(r.err, /Error: failed to set feature gates from initial flags-based config: unrecognized feature gate: NoSuchGate/);
    r = await kubelet(['--node-labels=node-role.kubernetes.io/worker=']);
    assert.match(r.err, /Error: failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: \[node-role.kubernetes.io\/worker\]/);
    r = await kubelet(['--address=not-an-ip']);
    assert.match(r.err, /invalid argument "not-an-ip" for "--address" flag: "not-an-ip" is not a valid IP address/);
  });

  test('--pod-infra-container-image is logged as the kubelet logs it', async () => {
    const r = await kubelet(['--pod-infra-container-image=registry.k8s.io/pause:3.10']);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.resolved!.flags.podSandboxImage, 'registry.k8s.io/pause:3.10');
    assert.deepEqual(r.resolved!.logs.map((l) => l.msg), ['--pod-infra-container-image will not be pruned by the image garbage collector in kubelet and should also be set in the remote runtime']);
  });
});

describe('validation', () => {
  const v = (mut: (c: KubeletConfiguration) => void, gate?: FeatureGate) => {
    const c = defaultFlagKubeletConfiguration();
    mut(c);
    return validateKubeletConfiguration(c, gate, { cgroupV1: false });
  };

  test('the defaults are valid', () => {
    assert.deepEqual(v(() => {}), []);
    assert.deepEqual(validateKubeletConfiguration(defaultKubeletConfiguration(), undefined, { cgroupV1: false }), []);
  });

  test('ranges and signs', () => {
    assert.deepEqual(v((c) => { c.imageGCHighThresholdPercent = 101; }), [
      'invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) 101 must be between 0 and 100, inclusive',
    ]);
    assert.deepEqual(v((c) => { c.imageGCLowThresholdPercent = 90; }), [
      'invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 90 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 85',
    ]);
    assert.deepEqual(v((c) => { c.eventRecordQPS = -1; c.eventBurst = -2; }), [
      'invalid configuration: eventBurst (--event-burst) -2 must not be a negative number',
      'invalid configuration: eventRecordQPS (--event-qps) -1 must not be a negative number',
    ]);
    assert.deepEqual(v((c) => { c.containerLogMaxFiles = 1; }), ['invalid configuration: containerLogMaxFiles must be greater than 1']);
    assert.deepEqual(v((c) => { c.port = 0; c.readOnlyPort = 70000; c.healthzPort = -1; }), [
      'invalid configuration: healthzPort (--healthz-port) -1 must be between 1 and 65535, inclusive',
      'invalid configuration: port (--port) 0 must be between 1 and 65535, inclusive',
      'invalid configuration: readOnlyPort (--read-only-port) 70000 must be between 0 and 65535, inclusive',
    ]);
    assert.deepEqual(v((c) => { c.oomScoreAdj = 1001; }), ['invalid configuration: oomScoreAdj (--oom-score-adj) 1001 must be between -1000 and 1000, inclusive']);
    assert.deepEqual(v((c) => { c.nodeLeaseDurationSeconds = 0; }), ['invalid configuration: nodeLeaseDurationSeconds must be greater than 0']);
  });

  test('enforceNodeAllocatable', () => {
    assert.deepEqual(v((c) => { c.enforceNodeAllocatable = ['none', 'pods']; }), [
      'invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when "none" is specified',
    ]);
    assert.deepEqual(v((c) => { c.enforceNodeAllocatable = ['pods', 'system-reserved']; }), [
      'invalid configuration: systemReservedCgroup (--system-reserved-cgroup) must be specified when "system-reserved" or "system-reserved-compressible" included in enforceNodeAllocatable (--enforce-node-allocatable)',
    ]);
    assert.deepEqual(v((c) => { c.enforceNodeAllocatable = ['bogus']; }), [
      'invalid configuration: option "bogus" specified for enforceNodeAllocatable (--enforce-node-allocatable). Valid options are "pods", "system-reserved", "system-reserved-compressible", "kube-reserved", "kube-reserved-compressible" or "none"',
    ]);
    assert.deepEqual(v((c) => { c.cgroupsPerQOS = false; }), [
      'invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true when "pods" contained in enforceNodeAllocatable (--enforce-node-allocatable)',
    ]);
    assert.deepEqual(v((c) => { c.cgroupsPerQOS = false; c.enforceNodeAllocatable = ['none']; }), []);
  });

  test('policies, modes and gated options', () => {
    assert.deepEqual(v((c) => { c.topologyManagerPolicy = 'x'; c.topologyManagerScope = 'y'; c.hairpinMode = 'z'; }), [
      'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "x" must be one of: ["none" "best-effort" "restricted" "single-numa-node"]',
      'invalid configuration: topologyManagerScope (--topology-manager-scope) "y" must be one of: "container", or "pod"',
      'invalid configuration: option "z" specified for hairpinMode (--hairpin-mode). Valid options are "none", "hairpin-veth" or "promiscuous-bridge"',
    ]);
    assert.deepEqual(v((c) => { c.cpuCFSQuotaPeriod = 200; }), ['invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) 200ms requires feature gate CustomCPUCFSQuotaPeriod']);
    assert.deepEqual(v((c) => { c.cpuCFSQuotaPeriod = 200; c.featureGates = { CustomCPUCFSQuotaPeriod: true }; }), []);
    assert.deepEqual(v((c) => { c.shutdownGracePeriod = 500; }), ['invalid configuration: shutdownGracePeriod 500ms must be either zero or otherwise >= 1 sec']);
    assert.deepEqual(v((c) => { c.featureGates = { Nope: true }; }), ['unrecognized feature gate: Nope']);
    assert.deepEqual(v((c) => { c.systemCgroups = '/system'; }), ['invalid configuration: systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified']);
    assert.deepEqual(v((c) => { c.reservedSystemCPUs = '3-1'; }), ['invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) 3-1, error: invalid range "3-1" (3 > 1)']);
    assert.deepEqual(v((c) => { c.registerWithTaints = [{ key: 'a', effect: 'Bad' }]; }), ['invalid taint: {a  Bad <nil>}']);
    assert.deepEqual(v((c) => { c.userNamespaces = { idsPerPod: 131072 }; }), []);
    assert.deepEqual(v((c) => { c.userNamespaces = { idsPerPod: 1000 }; }), ['invalid configuration: userNamespaces.idsPerPod must not be less than 65536']);
    assert.deepEqual(v((c) => { c.userNamespaces = { idsPerPod: 100000 }; }), ['invalid configuration: userNamespaces.idsPerPod must be a multiple of 65536']);
    assert.deepEqual(v((c) => { c.userNamespaces = { idsPerPod: 2 ** 32 }; }), ['invalid configuration: userNamespaces.idsPerPod must not be more than 4294967295']);
    // singleProcessOOMKill: false is refused on cgroup v1 only (v2 is the default there)
    assert.deepEqual(v((c) => { c.singleProcessOOMKill = false; }), []);
    const v1 = defaultFlagKubeletConfiguration();
    v1.singleProcessOOMKill = false;
    assert.deepEqual(validateKubeletConfiguration(v1, undefined, { cgroupV1: true }), ['invalid configuration: singleProcessOOMKill must not be explicitly set to false when using cgroup v1']);
    v1.singleProcessOOMKill = true;
    assert.deepEqual(validateKubeletConfiguration(v1, undefined, { cgroupV1: true }), []);
    assert.deepEqual(v((c) => { c.containerRuntimeEndpoint = ''; }), ['invalid configuration: the containerRuntimeEndpoint was not specified or empty']);
    assert.deepEqual(v((c) => { c.logging.format = 'json'; }), ['logging.format: Invalid value: "json": Unsupported log format']);
    assert.deepEqual(v((c) => { c.logging.options.text.splitStream = true; }), ['logging.options.text.splitStream: Forbidden: Feature LoggingAlphaOptions is disabled']);
    assert.deepEqual(v((c) => { c.failCgroupV1 = true; }), []);
    const c = defaultFlagKubeletConfiguration();
    c.failCgroupV1 = true;
    assert.deepEqual(validateKubeletConfiguration(c, undefined, { cgroupV1: true }), ['kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is in maintenance mode']);
  });
});

describe('node labels', () => {
  const labels = (m: Record<string, string>) => validateKubeletFlags({ ...defaultKubeletFlags(), nodeLabels: m });

  test('allowed: other namespaces, the allowed prefixes and the allowed set', () => {
    assert.deepEqual(labels({ 'example.com/x': 'y', plain: 'v', 'node.kubernetes.io/instance-type': 'big', 'kubelet.kubernetes.io/a': 'b', 'foo.node.kubernetes.io/z': '', 'topology.kubernetes.io/zone': 'z1', 'kubernetes.io/hostname': 'h' }), []);
  });

  test('refused: other kubernetes.io and k8s.io labels, node-role.kubernetes.io among them', () => {
    const errs = labels({ 'node-role.kubernetes.io/worker': '', 'kubernetes.io/role': 'x', 'foo.k8s.io/bar': 'x' });
    assert.equal(errs.length, 1);
    assert.equal(errs[0],
      "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [foo.k8s.io/bar kubernetes.io/role node-role.kubernetes.io/worker]\n" +
      "--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (kubelet.kubernetes.io, node.kubernetes.io) or be in the specifically allowed set (beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, kubernetes.io/arch, kubernetes.io/hostname, kubernetes.io/os, node.kubernetes.io/instance-type, topology.kubernetes.io/region, topology.kubernetes.io/zone)");
  });

  test('invalid keys and values', () => {
    assert.deepEqual(labels({ 'bad key': 'v' }), ["invalid node labels: 'bad key' - name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]);
  });

  test('--node-labels: a key alone has an empty value; repeated flags add', async () => {
    const r = await kubelet(['--node-labels=a=1,b', '--node-labels', 'c=3']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.resolved!.flags.nodeLabels, { a: '1', b: '', c: '3' });
  });
});

describe('flag values of the kubelet\'s own types', () => {
  test('taints', () => {
    assert.deepEqual(parseTaints('a=b:NoSchedule,c:NoExecute'), [{ key: 'a', value: 'b', effect: 'NoSchedule' }, { key: 'c', effect: 'NoExecute' }]);
    assert.equal(errOf(() => parseTaints('a')).message, 'invalid taint spec: a');
    assert.match(errOf(() => parseTaints('a=b')).message, /^invalid taint spec: a=b, name part must consist of/);
    assert.equal(errOf(() => parseTaints('a=b:Bad')).message, 'invalid taint effect: Bad, unsupported taint effect');
    assert.equal(errOf(() => parseTaints('a=b:NoSchedule,a=c:NoSchedule')).message, 'duplicated taints with the same key and effect: {a c NoSchedule <nil>}');
  });

  test('reserved memory', () => {
    assert.deepEqual(parseReservedMemory('0:memory=1Gi,hugepages-1M=2Gi;1:memory=2Gi'), [{ numaNode: 0, limits: { memory: '1Gi', 'hugepages-1M': '2Gi' } }, { numaNode: 1, limits: { memory: '2Gi' } }]);
    assert.equal(errOf(() => parseReservedMemory('0:cpu=1')).message, 'memory type conversion error, unknown type: "cpu"');
    assert.equal(errOf(() => parseReservedMemory('memory=1Gi')).message, 'the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got memory=1Gi');
  });

  test('the flags set the configuration', async () => {
    const r = await kubelet(['--register-with-taints=a=b:NoSchedule', '--reserved-memory=0:memory=1Gi', '--reserved-memory=1:memory=2Gi', '--manifest-url-header=a:x,a:y', '--cpu-manager-policy-options=full-pcpus-only=true', '--eviction-soft=memory.available<1Gi', '--eviction-soft-grace-period=memory.available=1m', '--log-flush-frequency=2s', '-v=3', '--seccomp-default']);
    assert.equal(r.code, 0, r.err);
    const c = r.resolved!.config;
    assert.deepEqual(c.registerWithTaints, [{ key: 'a', value: 'b', effect: 'NoSchedule' }]);
    assert.deepEqual(c.reservedMemory.map((m) => m.numaNode), [0, 1]);
    assert.deepEqual(c.staticPodURLHeader, { a: ['x', 'y'] });
    assert.deepEqual(c.cpuManagerPolicyOptions, { 'full-pcpus-only': 'true' });
    assert.deepEqual(c.evictionSoft, { 'memory.available': '1Gi' });
    assert.equal(c.logging.flushFrequency, 2000);
    assert.equal(c.logging.verbosity, 3);
    assert.equal(r.resolved!.flags.seccompDefault, true);
  });
});

describe('start-up checks and Keelson\'s limits', () => {
  const start = (mc: (c: KubeletConfiguration) => void, mf: (f: KubeletFlags) => void = () => {}) => {
    const c = defaultFlagKubeletConfiguration();
    const f = defaultKubeletFlags();
    mc(c);
    mf(f);
    return checkKubeletStartup(c, f);
  };

  test('the kubelet\'s start-up errors', () => {
    assert.equal(start(() => {}), undefined);
    assert.equal(start(() => {}, (f) => { f.exitOnLockContention = true; }), 'cannot exit on lock file contention: no lock file specified');
    assert.equal(start(() => {}, (f) => { f.cloudProvider = 'aws'; }), 'cloud provider "aws" was specified, but built-in cloud providers are disabled. Please set --cloud-provider=external and migrate to an external cloud provider');
    assert.equal(start(() => {}, (f) => { f.nodeIP = '10.0.0.1,10.0.0.2'; }), 'bad --node-ip "10.0.0.1,10.0.0.2": must contain either a single IP or a dual-stack pair of IPs');
    assert.equal(start((c) => { c.kubeReserved = { gpu: '1' }; }), '--kube-reserved value failed to parse: cannot reserve "gpu" resource');
    assert.equal(start((c) => { c.systemReserved = { memory: 'x' }; }), `--system-reserved value failed to parse: failed to parse quantity "x" for "memory" resource: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
    assert.equal(start((c) => { c.evictionHard = { 'memory.free': '1Gi' }; }), 'unsupported eviction signal memory.free');
    assert.equal(start((c) => { c.evictionSoft = { 'memory.available': '1Gi' }; }), 'grace period must be specified for the soft eviction threshold memory.available');
    assert.equal(start((c) => { c.qosReserved = { memory: '50' }; }), `--qos-reserved value failed to parse: failed to parse percentage "50" for "memory" resource: percentage expected, got '50'`);
    assert.equal(start((c) => { c.cpuManagerPolicyOptions = { b: '2', a: '1' }; }), 'None policy: received unsupported options=map[a:1 b:2]');
    assert.equal(start((c) => { c.syncFrequency = -1000; }), 'invalid sync frequency -1000000000');
  });

  test('node IPs, eviction thresholds, CPU sets, reservations', () => {
    assert.deepEqual(parseNodeIPs('10.0.0.1, fd00::1'), { ips: ['10.0.0.1', 'fd00::1'], invalid: [] });
    assert.deepEqual(parseNodeIPs('x,10.0.0.1'), { ips: ['10.0.0.1'], invalid: ['x'] });
    assert.deepEqual(parseEvictionThresholds({ ...defaultKubeletConfiguration(), evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%', 'imagefs.available': '0%' } }).map((t) => [t.signal, t.value]), [
      ['memory.available', { quantity: '100Mi' }],
      ['nodefs.available', { percentage: 0.1 }],
    ]);
    assert.deepEqual(parseCPUSet('0-2,5'), [0, 1, 2, 5]);
    assert.deepEqual(reservedResources({ kubeReserved: { cpu: '1', memory: '1Gi' }, systemReserved: {}, reservedSystemCPUs: '0-1' }), { kubeReserved: { memory: '1Gi' }, systemReserved: { cpu: '2' } });
  });

  test('values Keelson refuses', () => {
    const c = defaultFlagKubeletConfiguration();
    const f = defaultKubeletFlags();
    assert.deepEqual(validateKeelsonSupport(c, f), []);
    c.cpuManagerPolicy = 'static';
    c.memoryManagerPolicy = 'Static';
    c.topologyManagerPolicy = 'restricted';
    f.lockFilePath = '/var/run/kubelet.lock';
    assert.deepEqual(validateKeelsonSupport(c, f).map((e) => e.split(' is not supported by Keelson')[0]), [
      'cpuManagerPolicy (--cpu-manager-policy) "static"',
      'memoryManagerPolicy (--memory-manager-policy) "Static"',
      'topologyManagerPolicy (--topology-manager-policy) "restricted"',
      '--lock-file',
    ]);
  });
});

describe('/configz', () => {
  test('the v1beta1 form: Go field order, omitempty, durations as Go strings', () => {
    const dir = tempDir('kubelet-configz-');
    const c = loadKubeletConfigFile(file(dir, 'k.yaml', HEAD + 'clusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\nshutdownGracePeriod: 30s\nregisterWithTaints:\n- key: a\n  effect: NoSchedule\nreservedMemory:\n- numaNode: 0\n  limits:\n    memory: 1024Mi\n'));
    const z = configzJSON(c);
    assert.deepEqual(Object.keys(z), ['kubeletconfig']);
    const k = z.kubeletconfig as Record<string, any>;
    assert.equal(k.syncFrequency, '1m0s');
    assert.equal(k.streamingConnectionIdleTimeout, '4h0m0s');
    assert.equal(k.cpuCFSQuotaPeriod, '100ms');
    assert.equal(k.shutdownGracePeriod, '30s');
    assert.equal(k.imageMaximumGCAge, '0s', 'a Duration is a struct: omitempty does not drop it');
    assert.equal(k.readOnlyPort, undefined, 'zero plain fields are left out');
    assert.equal(k.staticPodPath, undefined);
    assert.equal(k.enableSystemLogQuery, false, 'pointer fields are printed');
    assert.deepEqual(k.authentication, { x509: {}, webhook: { enabled: true, cacheTTL: '2m0s' }, anonymous: { enabled: false } });
    assert.deepEqual(k.evictionHard, DEFAULT_EVICTION_HARD);
    assert.deepEqual(k.registerWithTaints, [{ key: 'a', effect: 'NoSchedule' }]);
    assert.deepEqual(k.reservedMemory, [{ numaNode: 0, limits: { memory: '1Gi' } }]);
    assert.deepEqual(k.logging, { format: 'text', flushFrequency: '5s', verbosity: 0, options: { text: { infoBufferSize: '0' }, json: { infoBufferSize: '0' } } });
    assert.deepEqual(k.memorySwap, {});
    assert.deepEqual(k.crashLoopBackOff, {});
    assert.equal(k.containerRuntimeEndpoint, 'unix:///run/containerd/containerd.sock');
    assert.equal(k.maxParallelImagePulls, undefined);
    const keys = Object.keys(k);
    assert.deepEqual(keys.slice(0, 5), ['enableServer', 'podLogsDir', 'syncFrequency', 'fileCheckFrequency', 'httpCheckFrequency']);
    assert.equal(keys.at(-1), 'failCgroupV1');
    assert.ok(keys.indexOf('clusterDNS') > keys.indexOf('clusterDomain'));
    assert.deepEqual(cloneKubeletConfiguration(c), c);
  });
});

/** the spec's option tables: name, pflag type, default as pflag prints it ('' for none) */
const SPEC: [string, string, string][] = [
  ['address', 'string', '0.0.0.0'], ['allowed-unsafe-sysctls', 'stringSlice', '[]'], ['bootstrap-kubeconfig', 'string', ''],
  ['cert-dir', 'string', '/var/lib/kubelet/pki'], ['cgroup-driver', 'string', 'cgroupfs'], ['cgroup-root', 'string', ''],
  ['cgroups-per-qos', 'bool', 'true'], ['cloud-provider', 'string', ''], ['cluster-dns', 'stringSlice', '[]'], ['cluster-domain', 'string', ''],
  ['config', 'string', ''], ['config-dir', 'string', ''], ['container-log-max-files', 'int32', '5'], ['container-log-max-size', 'string', '10Mi'],
  ['container-runtime-endpoint', 'string', 'unix:///run/containerd/containerd.sock'], ['contention-profiling', 'bool', 'false'],
  ['cpu-cfs-quota', 'bool', 'true'], ['cpu-cfs-quota-period', 'duration', '100ms'], ['cpu-manager-policy', 'string', 'none'],
  ['cpu-manager-policy-options', 'mapStringString', ''], ['cpu-manager-reconcile-period', 'duration', '10s'],
  ['enable-controller-attach-detach', 'bool', 'true'], ['enable-debugging-handlers', 'bool', 'true'], ['enable-server', 'bool', 'true'],
  ['enforce-node-allocatable', 'stringSlice', '[pods]'], ['event-burst', 'int32', '100'], ['event-qps', 'int32', '50'],
  ['eviction-hard', 'mapStringString', ''], ['eviction-max-pod-grace-period', 'int32', '0'], ['eviction-minimum-reclaim', 'mapStringString', ''],
  ['eviction-pressure-transition-period', 'duration', '5m0s'], ['eviction-soft', 'mapStringString', ''], ['eviction-soft-grace-period', 'mapStringString', ''],
  ['exit-on-lock-contention', 'bool', 'false'], ['experimental-allocatable-ignore-eviction', 'bool', 'false'], ['experimental-mounter-path', 'string', ''],
  ['fail-cgroupv1', 'bool', 'false'], ['fail-swap-on', 'bool', 'true'], ['feature-gates', 'mapStringBool', ''], ['file-check-frequency', 'duration', '20s'],
  ['hairpin-mode', 'string', 'promiscuous-bridge'], ['healthz-bind-address', 'string', '127.0.0.1'], ['healthz-port', 'int32', '10248'],
  ['help', 'bool', 'false'], ['hostname-override', 'string', ''], ['http-check-frequency', 'duration', '20s'],
  ['image-credential-provider-bin-dir', 'string', ''], ['image-credential-provider-config', 'string', ''], ['image-gc-high-threshold', 'int32', '85'],
  ['image-gc-low-threshold', 'int32', '80'], ['image-service-endpoint', 'string', ''], ['kernel-memcg-notification', 'bool', 'false'],
  ['kube-api-burst', 'int32', '100'], ['kube-api-content-type', 'string', 'application/vnd.kubernetes.protobuf'], ['kube-api-qps', 'int32', '50'],
  ['kube-reserved', 'mapStringString', ''], ['kube-reserved-cgroup', 'string', ''], ['kubeconfig', 'string', ''], ['kubelet-cgroups', 'string', ''],
  ['local-storage-capacity-isolation', 'bool', 'true'], ['lock-file', 'string', ''], ['log-flush-frequency', 'duration', '5s'],
  ['log-text-info-buffer-size', 'quantity', '0'], ['log-text-split-stream', 'bool', 'false'], ['logging-format', 'string', 'text'],
  ['make-iptables-util-chains', 'bool', 'true'], ['manifest-url', 'string', ''], ['manifest-url-header', 'colonSeparatedMultimapStringString', ''],
  ['max-open-files', 'int64', '1000000'], ['max-pods', 'int32', '110'], ['maximum-dead-containers', 'int32', '-1'],
  ['maximum-dead-containers-per-container', 'int32', '1'], ['memory-manager-policy', 'string', 'None'], ['minimum-container-ttl-duration', 'duration', '0s'],
  ['minimum-image-ttl-duration', 'duration', '2m0s'], ['node-ip', 'string', ''], ['node-labels', 'mapStringString', ''],
  ['node-status-max-images', 'int32', '50'], ['node-status-update-frequency', 'duration', '10s'], ['oom-score-adj', 'int32', '-999'],
  ['pod-cidr', 'string', ''], ['pod-infra-container-image', 'string', ''], ['pod-manifest-path', 'string', ''], ['pod-max-pids', 'int64', '-1'],
  ['pods-per-core', 'int32', '0'], ['port', 'int32', '10250'], ['protect-kernel-defaults', 'bool', 'false'], ['provider-id', 'string', ''],
  ['qos-reserved', 'mapStringString', ''], ['read-only-port', 'int32', '10255'], ['register-node', 'bool', 'true'], ['register-with-taints', '[]v1.Taint', ''],
  ['registry-burst', 'int32', '10'], ['registry-qps', 'int32', '5'], ['reserved-cpus', 'string', ''], ['reserved-memory', 'reserved-memory', ''],
  ['resolv-conf', 'string', '/etc/resolv.conf'], ['root-dir', 'string', '/var/lib/kubelet'], ['rotate-certificates', 'bool', 'false'],
  ['rotate-server-certificates', 'bool', 'false'], ['runonce', 'bool', 'false'], ['runtime-cgroups', 'string', ''],
  ['runtime-request-timeout', 'duration', '2m0s'], ['seccomp-default', 'bool', 'false'], ['serialize-image-pulls', 'bool', 'true'],
  ['streaming-connection-idle-timeout', 'duration', '4h0m0s'], ['sync-frequency', 'duration', '1m0s'], ['system-cgroups', 'string', ''],
  ['system-reserved', 'mapStringString', ''], ['system-reserved-cgroup', 'string', ''], ['tls-cert-file', 'string', ''],
  ['tls-cipher-suites', 'stringSlice', '[]'], ['tls-min-version', 'string', ''], ['tls-private-key-file', 'string', ''],
  ['topology-manager-policy', 'string', 'none'], ['topology-manager-policy-options', 'mapStringString', ''], ['topology-manager-scope', 'string', 'container'],
  ['v', 'Level', '0'], ['version', 'version', 'false'], ['vmodule', 'pattern=N,...', ''],
  ['volume-plugin-dir', 'string', '/usr/libexec/kubernetes/kubelet-plugins/volume/exec/'], ['volume-stats-agg-period', 'duration', '1m0s'],
  // the Authentication table
  ['anonymous-auth', 'bool', 'true'], ['authentication-token-webhook', 'bool', 'false'], ['authentication-token-webhook-cache-ttl', 'duration', '2m0s'],
  ['authorization-mode', 'string', 'AlwaysAllow'], ['authorization-webhook-cache-authorized-ttl', 'duration', '5m0s'],
  ['authorization-webhook-cache-unauthorized-ttl', 'duration', '30s'], ['client-ca-file', 'string', ''],
];

/** the spec's options with no (D) mark */
const NOT_DEPRECATED = new Set([
  'bootstrap-kubeconfig', 'cert-dir', 'cloud-provider', 'config', 'config-dir', 'exit-on-lock-contention', 'fail-cgroupv1', 'help', 'hostname-override',
  'image-credential-provider-bin-dir', 'image-credential-provider-config', 'kubeconfig', 'lock-file', 'log-flush-frequency', 'node-ip', 'node-labels',
  'provider-id', 'root-dir', 'runtime-cgroups', 'seccomp-default', 'v', 'version', 'vmodule',
]);
/** deprecated with a message of their own */
const OWN_DEPRECATION = new Set(['experimental-allocatable-ignore-eviction', 'experimental-mounter-path', 'maximum-dead-containers', 'maximum-dead-containers-per-container', 'minimum-container-ttl-duration', 'pod-infra-container-image']);

describe('--help', () => {
  const cmd = new Command({ use: 'kubelet', long: 'The kubelet.', run: () => {} });
  const gate = new FeatureGate(KUBELET_FEATURES);
  declareKubeletFlags(cmd, defaultFlagKubeletConfiguration(gate), defaultKubeletFlags(), gate);
  const usage = cmd.usageString();
  const fs = cmd.localFlags;

  test('every option of the spec\'s tables, with its type and default', () => {
    for (const [name, type, def] of SPEC) {
      const f = fs.lookup(name);
      assert.ok(f, `--${name} is declared`);
      assert.equal(f.value.type(), type, `--${name} type`);
      if (def !== '') assert.equal(f.defValue, def, `--${name} default`);
      else assert.ok(f.defaultIsZeroValue(), `--${name} has no default (${f.defValue})`);
      assert.ok(usage.includes(`--${name} `) || usage.includes(`--${name}\n`) || usage.includes(`--${name}[`), `help lists --${name}`);
      assert.equal(f.hidden, false, `--${name} is shown`);
      if (NOT_DEPRECATED.has(name)) assert.equal(f.deprecated, '', `--${name} is not deprecated`);
      else if (OWN_DEPRECATION.has(name)) assert.notEqual(f.deprecated, '', `--${name} is deprecated`);
      else assert.equal(f.deprecated, CONFIG_FLAG_DEPRECATED, `--${name} is deprecated in favour of --config`);
    }
    assert.match(usage, /-h, --help/);
    assert.match(usage, /-v, --v Level/);
    assert.match(usage, /--version version\[=true\]/);
    assert.match(usage, /--seccomp-default RuntimeDefault/);
    assert.match(usage, /--feature-gates mapStringBool .*Options are:\n[\s\S]*\n +NodeLogQuery=true\|false \(BETA - default=false\)\n/);
  });

  test('nothing beyond the spec\'s tables', () => {
    const names = new Set(SPEC.map(([n]) => n));
    for (const f of fs.all()) assert.ok(names.has(f.name), `--${f.name} is in the spec`);
  });

  test('-h prints the help, --version the version', async () => {
    let r = await kubelet(['-h']);
    assert.equal(r.code, 0);
    assert.match(r.out, /Usage:\n {2}kubelet \[flags\]\n\nFlags:\n/);
    r = await kubelet(['--version']);
    assert.equal(r.code, 0);
    assert.match(r.out, /^\S+ v1\.33\.0/);
  });
});
