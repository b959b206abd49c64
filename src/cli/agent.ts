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
import { ensureKubeconfig } from '../client/kubeconfig.js';

/** set for the server's children (kubelet, proxy): each exits when that process is gone (a server killed without its SIGTERM) */
export const PARENT_ENV = 'KEELSON_EXIT_WITH_PARENT';

/** --kubelet-arg / --kube-proxy-arg values (`name=value`, as k3s takes them) as the child's flags */
function asFlags(args: readonly string[]): string[] {
  return args.map((a) => (a.startsWith('-') ? a : `--${a}`));
}

/** in a child of the server (PARENT_ENV set): SIGTERM to itself once the server is gone */
export function exitWithParent(what: string, log: Logger): void {
  const parent = Number(process.env[PARENT_ENV] ?? 0);
  if (parent <= 0) return;
  setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      log.warn(`The server that started this ${what} is gone; stopping`, { pid: parent });
      process.kill(process.pid, 'SIGTERM');
    }
  }, 1000).unref();
}

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
    ...asFlags(o.extraArgs),
  ];
  return superviseChild({ what: 'the node agent', args, log: o.log, fields: { node: o.nodeName, runtime: o.endpoint } });
}

/**
 * A `keelson` subcommand run as a child of the server, started again (back-off up to 30 s, as a
 * supervisor restarts a kubelet) when it exits while the server runs; stop() sends SIGTERM, then
 * SIGKILL after 10 s. The child exits when the server is gone without stopping it (PARENT_ENV).
 */
function superviseChild(o: { what: string; args: string[]; log: Logger; fields: Record<string, string> }): { stop(): Promise<void> } {
  let stopping = false;
  let child: ChildProcess | undefined;
  let restarts = 0;
  const launch = () => {
    child = spawn(process.execPath, o.args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, [PARENT_ENV]: String(process.pid) } });
    o.log.info(`Started ${o.what}`, { ...o.fields, pid: child.pid });
    child.once('exit', (code, signal) => {
      if (stopping) return;
      o.log.error(new Error(`exit code ${code ?? signal}`), `${o.what[0]!.toUpperCase()}${o.what.slice(1)} exited; starting it again`, o.fields);
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

export interface EmbeddedProxyOptions {
  dataDir: string;
  serverURL: string;
  caPEM: string;
  /** its client certificate (CN system:kube-proxy, bound to system:node-proxier) */
  certPEM: string;
  keyPEM: string;
  nodeName: string;
  /** --cluster-cidr: the pods' range ('' for none) */
  clusterCIDR: string;
  /** --kube-proxy-arg: more flags for the proxy, `name=value` each */
  extraArgs: string[];
  log: Logger;
}

/**
 * The service proxy of `keelson server` (its node's kube-proxy, as a k3s agent runs one): `keelson
 * proxy` as a child process with a kubeconfig of its own under <data-dir>/proxy, supervised as the
 * node agent is. It leaves its nftables rules in place when it stops, as kube-proxy does.
 */
export function startEmbeddedProxy(o: EmbeddedProxyOptions): { stop(): Promise<void> } {
  const dir = join(o.dataDir, 'proxy');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const kubeconfig = join(dir, 'kubeconfig');
  ensureKubeconfig(kubeconfig, { server: o.serverURL, caPEM: o.caPEM, clientCertPEM: o.certPEM, clientKeyPEM: o.keyPEM, clusterName: 'keelson', userName: 'system:kube-proxy', contextName: 'keelson' });
  const args = [
    process.argv[1]!,
    'proxy',
    '--kubeconfig', kubeconfig,
    '--hostname-override', o.nodeName,
    ...(o.clusterCIDR ? ['--cluster-cidr', o.clusterCIDR] : []),
    ...asFlags(o.extraArgs),
  ];
  return superviseChild({ what: 'the service proxy', args, log: o.log, fields: { node: o.nodeName } });
}
