// What the end-to-end tests of `keelson kubelet` share: the command line of a kubelet that joins
// the test's cluster with --bootstrap-kubeconfig (its files under the test's directory, the node
// on 127.0.0.1, the test's containerd), and the configuration file such a kubelet is given
// (the pods' logs under the test's directory, x509 and webhook authentication, Webhook
// authorization: as kubeadm configures a kubelet; no image garbage collection).
//
// Each kubelet gets the cgroup root of the test's containerd harness (--cgroup-root; the harness
// makes it and removes it in its stop()), so that kubelets of test files running at the same time
// never take each other's pod cgroups for orphans.
import { spawn, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KEELSON, ROOT, stopProcess, until, type Cluster } from './harness.js';
import { cgroupRootOf } from '../nodeagent/containerd.js';
import type { KubeletServingOptions } from '../../src/cli/kubeletserving.js';

export interface JoiningKubelet {
  cluster: Cluster;
  /** the test's directory: kubeconfig, pki, root and logs go under it */
  dir: string;
  /** the runtime's CRI endpoint */
  endpoint: string;
  node: string;
  port: number;
  /** 0 (the default) turns them off */
  readOnlyPort?: number;
  healthzPort?: number;
  /** the --config file (default: <dir>/kubelet.yaml, see writeJoiningKubeletConfig) */
  config?: string;
  /**
   * --cgroup-root (default: the containerd harness's of `endpoint`; with none, the kubelet makes
   * no cgroups: --cgroups-per-qos=false)
   */
  cgroupRoot?: string;
}

/** the cgroup flags of a test's kubelet: its own --cgroup-root, or no cgroups at all */
export function kubeletCgroupArgs(endpoint: string, cgroupRoot?: string): string[] {
  const root = cgroupRoot ?? cgroupRootOf(endpoint);
  return root ? ['--cgroup-root', root] : ['--cgroups-per-qos=false', '--enforce-node-allocatable='];
}

/** the arguments (after node) of a kubelet joining the test's cluster; the test adds its own after them */
export function joiningKubeletArgs(o: JoiningKubelet): string[] {
  return [
    KEELSON, 'kubelet',
    '--bootstrap-kubeconfig', o.cluster.kubeconfig,
    '--kubeconfig', join(o.dir, 'kubelet.kubeconfig'),
    '--cert-dir', join(o.dir, 'pki'),
    '--root-dir', join(o.dir, 'root'),
    '--container-runtime-endpoint', o.endpoint,
    '--hostname-override', o.node,
    '--node-ip', '127.0.0.1',
    '--address', '127.0.0.1',
    '--port', String(o.port),
    '--read-only-port', String(o.readOnlyPort ?? 0),
    '--healthz-port', String(o.healthzPort ?? 0),
    '--fail-swap-on=false',
    '--node-status-update-frequency', '2s',
    ...kubeletCgroupArgs(o.endpoint, o.cgroupRoot),
    '--config', o.config ?? join(o.dir, 'kubelet.yaml'),
  ];
}

/** writes <dir>/kubelet.yaml for a joining kubelet, with `extra` YAML lines appended; returns its path */
export function writeJoiningKubeletConfig(c: Cluster, dir: string, extra: string[] = []): string {
  const file = join(dir, 'kubelet.yaml');
  const lines = [
    'apiVersion: kubelet.config.k8s.io/v1beta1',
    'kind: KubeletConfiguration',
    `podLogsDir: ${join(dir, 'logs')}`,
    'authentication:',
    '  anonymous:',
    '    enabled: false',
    '  x509:',
    `    clientCAFile: ${join(c.dataDir, 'pki', 'ca.crt')}`,
    'authorization:',
    '  mode: Webhook',
    // (no image garbage collection: the tests' images are imported, not pullable, and a busy disk
    // on the test machine must not take them away between tests; kubelet-imagegc tests it)
    'imageGCHighThresholdPercent: 100',
    ...extra,
  ];
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/**
 * The serving options of an in-process kubelet server (cli/kubeletserving.ts serveKubelet) as a
 * joining kubelet has them: its main port on 127.0.0.1 with x509 (the cluster CA) and webhook
 * authentication, Webhook authorization, no caches, the debugging handlers on, the other ports off;
 * `extra` overrides or adds options.
 */
export function inProcessKubeletOptions(c: Cluster, certDir: string, port: number, extra: Partial<KubeletServingOptions> = {}): KubeletServingOptions {
  return {
    address: '127.0.0.1',
    port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 0,
    tlsCertFile: '',
    tlsPrivateKeyFile: '',
    tlsCipherSuites: [],
    tlsMinVersion: '',
    certDir,
    anonymousAuth: false,
    clientCAFile: join(c.dataDir, 'pki', 'ca.crt'),
    webhookAuthn: true,
    webhookAuthnCacheTTLms: 0,
    authorizationMode: 'Webhook',
    authzAuthorizedTTLms: 0,
    authzUnauthorizedTTLms: 0,
    enableDebuggingHandlers: true,
    hostnames: ['localhost'],
    ips: ['127.0.0.1'],
    ...extra,
  };
}

/** a `keelson kubelet` a test started (node `args` after the node binary), its output kept */
export class KubeletProcess {
  logs = '';
  readonly proc: ChildProcess;
  constructor(args: string[]) {
    this.proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stdout!.on('data', (d) => (this.logs += d));
    this.proc.stderr!.on('data', (d) => (this.logs += d));
  }

  /** the end of its output, for an error message */
  tail(chars = 4000): string {
    return this.logs.slice(-chars);
  }

  /** waits until its Node is Ready in `c` (the kubelet's last output in the error) */
  async ready(c: Cluster, node: string, timeoutMs = 60_000): Promise<void> {
    await until('node Ready', async () => {
      const r = c.kubectl(['get', 'node', node, '--no-headers']);
      return r.code === 0 && /\sReady\s/.test(r.stdout) ? r.stdout : undefined;
    }, timeoutMs).catch((e) => {
      throw new Error(`${(e as Error).message}; the kubelet's log ends:\n${this.tail()}`);
    });
  }

  stop(): Promise<void> {
    return stopProcess(this.proc);
  }
}

/** GET of the kubelet's port `port` on 127.0.0.1 with the cluster's admin certificate: the body of a 200, else an error with the status and body */
export function kubeletGet(c: Cluster, port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path, rejectUnauthorized: false, cert: c.credentials.cert, key: c.credentials.key }, (res) => {
        let b = '';
        res.on('data', (d) => (b += d));
        res.on('end', () => (res.statusCode === 200 ? resolve(b) : reject(new Error(`${res.statusCode} ${b}`))));
      })
      .on('error', reject);
  });
}

/**
 * The pod `namespace/name` once `ok` holds for it (polled through the API; 60 s), else an error
 * naming `what`, with the end of the kubelet's log (`logs`)
 */
export function podWhen(c: Cluster, namespace: string, name: string, what: string, ok: (p: any) => boolean, logs: () => string = () => '', timeoutMs = 60_000): Promise<any> {
  return until(`pod ${namespace === 'default' ? '' : `${namespace}/`}${name} ${what}`, async () => {
    const r = await c.raw('GET', `/api/v1/namespaces/${namespace}/pods/${name}`);
    const p = r.status === 200 ? r.json() : undefined;
    return p && ok(p) ? p : undefined;
  }, timeoutMs).catch((e) => {
    throw new Error(`${(e as Error).message}\n${logs()}`);
  });
}
