// A `keelson server` with its own node (--container-runtime-endpoint) on a private containerd, as
// the tests of the server's node agent and its packaged components (local storage, cluster DNS) start
// it: the kubelet on 127.0.0.1 ports of its own, its pods' logs under the test's directory (podLogsDir
// from a drop-in), the containerd harness's own cgroup root, and a service proxy of its own: a
// service range and an nftables table (removed by stop) derived from the containerd harness's leased
// pod subnet, so that servers of test files running at the same time do not share rules or cluster
// IPs, its health and metrics on free 127.0.0.1 ports.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startCluster, freePort, type Cluster } from './harness.js';
import { startContainerd, type Containerd } from '../nodeagent/containerd.js';

export interface ServerNode {
  c: Cluster;
  ctd: Containerd;
  /** the test's directory (removed by stop) */
  dir: string;
  /** where the node's pods' logs are: <logs>/<ns>_<pod>_<uid>/<container>/<n>.log */
  logs: string;
  /** the server's --service-cluster-ip-range (a /20 of 172.16.0.0/12 of its own) */
  serviceCIDR: string;
  /** the nth address of serviceCIDR (1: the kubernetes Service's, 10: kube-dns') */
  serviceIP(n: number): string;
  /** the service proxy's nftables table (ip family) */
  table: string;
  /** deletes the pods (while the server runs), stops the server and containerd, removes the directory */
  stop(): Promise<void>;
}

export async function startServerNode(o: { node: string; nodeIP?: string; args?: string[]; prefix?: string }): Promise<ServerNode> {
  const dir = mkdtempSync(join(tmpdir(), o.prefix ?? 'keelson-server-node-'));
  const logs = join(dir, 'logs');
  const ctd = await startContainerd();
  // (the harness's subnet 10.N.0.0/16, N leased among 100..199, picks one of 100 /20s of 172.16.0.0/12)
  const n = Number(ctd.subnet.split('.')[1]) - 100;
  const base = [172, 16 + Math.floor(n / 16), (n % 16) * 16, 0];
  const serviceCIDR = `${base.join('.')}/20`;
  const serviceIP = (i: number) => `${base[0]}.${base[1]}.${base[2]! + Math.floor(i / 256)}.${i % 256}`;
  const table = `keelson-test-srv-${n + 100}`;
  const dropTable = () => spawnSync('nft', ['delete', 'table', 'ip', table], { encoding: 'utf8' });
  dropTable(); // (a table left by a test process that died; the subnet's lease is ours now)
  let c: Cluster | undefined;
  const stop = async () => {
    if (c?.proc?.exitCode === null) c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
    await c?.stop();
    await ctd.stop();
    dropTable();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    mkdirSync(join(dir, 'kubelet.conf.d'));
    writeFileSync(join(dir, 'kubelet.conf.d', '10-logs.conf'), `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${logs}\n`);
    const port = await freePort();
    const healthz = await freePort();
    const proxyHealthz = await freePort();
    const proxyMetrics = await freePort();
    c = await startCluster({
      args: [
        '--container-runtime-endpoint', ctd.endpoint,
        '--node-name', o.node,
        '--node-ip', o.nodeIP ?? '127.0.0.1',
        ...(o.args ?? []),
        '--kubelet-arg=address=127.0.0.1',
        `--kubelet-arg=port=${port}`,
        `--kubelet-arg=healthz-port=${healthz}`,
        `--kubelet-arg=config-dir=${join(dir, 'kubelet.conf.d')}`,
        `--kubelet-arg=cgroup-root=${ctd.cgroupRoot}`,
        `--service-cluster-ip-range=${serviceCIDR}`,
        `--cluster-cidr=${ctd.subnet}`,
        `--kube-proxy-arg=nftables-table-name=${table}`,
        `--kube-proxy-arg=healthz-bind-address=127.0.0.1:${proxyHealthz}`,
        `--kube-proxy-arg=metrics-bind-address=127.0.0.1:${proxyMetrics}`,
      ],
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { c, ctd, dir, logs, serviceCIDR, serviceIP, table, stop };
}

/** the host's first non-loopback IPv4 address ('' when none): a node address pods reach and an EndpointSlice may hold */
export const HOST_IPV4 = Object.values(networkInterfaces()).flat().find((a) => a && !a.internal && a.family === 'IPv4')?.address ?? '';

/** GET of an object: its JSON, or undefined when it is not there (404); anything else fails the test */
export async function getIfExists(c: Cluster, path: string): Promise<any> {
  const r = await c.raw('GET', path);
  if (r.status === 404) return undefined;
  assert.equal(r.status, 200, `${path}: ${r.text}`);
  return r.json();
}
