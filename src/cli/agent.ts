// The node agent of `keelson server` (--container-runtime-endpoint): the server's own machine
// joins its cluster as a node, as a k3s server runs its agent. The kubelet runs as a child process
// (`keelson kubelet`), so that its pod workers, probes and log streams have an event loop of
// their own and a kubelet that fails does not take the API server with it. It joins as any node
// does: the admin kubeconfig is its bootstrap kubeconfig, and its client certificate
// (system:node:<name>) is requested, approved and signed at its first start and kept under
// <data-dir>/kubelet. Its port requires a client certificate of the cluster CA (the API server's
// kubelet client certificate) and authorizes with SubjectAccessReviews, as kubeadm configures
// kubelets. It is stopped before the API server shuts down; its pods keep running, and the next
// start finds them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../client/log.js';

/** set for the embedded kubelet: it exits when that process is gone (a server killed without its SIGTERM) */
export const PARENT_ENV = 'KEELSON_EXIT_WITH_PARENT';

export interface EmbeddedKubeletOptions {
  dataDir: string;
  /** the admin kubeconfig: the bootstrap credentials */
  adminKubeconfig: string;
  /** the cluster CA's certificate file (the kubelet's --client-ca-file) */
  caFile: string;
  endpoint: string;
  nodeName: string;
  nodeIP: string;
  /** --kubelet-arg: more flags for the kubelet, `name=value` each (they override the config file) */
  extraArgs: string[];
  /** the cluster DNS's Service address and the cluster domain, for the config file (clusterDNS, clusterDomain) */
  dns?: { clusterIP: string; domain: string };
  log: Logger;
}

export function startEmbeddedKubelet(o: EmbeddedKubeletOptions): { stop(): Promise<void> } {
  const dir = join(o.dataDir, 'kubelet');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    [
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      'authentication:',
      '  anonymous:',
      '    enabled: false',
      '  webhook:',
      '    enabled: true',
      '  x509:',
      `    clientCAFile: ${JSON.stringify(o.caFile)}`,
      'authorization:',
      '  mode: Webhook',
      'readOnlyPort: 0',
      `containerRuntimeEndpoint: ${JSON.stringify(o.endpoint)}`,
      'failSwapOn: false',
      ...(o.dns ? ['clusterDNS:', `  - ${JSON.stringify(o.dns.clusterIP)}`, `clusterDomain: ${JSON.stringify(o.dns.domain)}`] : []),
      '',
    ].join('\n'),
  );
  const args = [
    process.argv[1],
    'kubelet',
    '--config', config,
    '--bootstrap-kubeconfig', o.adminKubeconfig,
    '--kubeconfig', join(dir, 'kubeconfig'),
    '--cert-dir', join(dir, 'pki'),
    '--root-dir', join(dir, 'root'),
    '--hostname-override', o.nodeName,
    ...(o.nodeIP ? ['--node-ip', o.nodeIP] : []),
    ...o.extraArgs.map((a) => (a.startsWith('-') ? a : `--${a}`)),
  ];
  let stopping = false;
  let child: ChildProcess | undefined;
  let restarts = 0;
  const launch = () => {
    child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, [PARENT_ENV]: String(process.pid) } });
    o.log.info('Started the node agent', { node: o.nodeName, pid: child.pid, runtime: o.endpoint });
    child.once('exit', (code, signal) => {
      if (stopping) return;
      o.log.error(new Error(`exit code ${code ?? signal}`), 'The node agent exited; starting it again', { node: o.nodeName });
      // (back-off up to 30 s, as a supervisor restarts a kubelet)
      const delay = Math.min(30_000, 1000 * 2 ** Math.min(restarts++, 5));
      setTimeout(() => !stopping && launch(), delay).unref();
    });
  };
  launch();
  return {
    async stop() {
      stopping = true;
      const p = child;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      const t = setTimeout(() => p.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}
