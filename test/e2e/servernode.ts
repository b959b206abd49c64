// A `keelson server` with its own node (--container-runtime-endpoint) on a private containerd, as
// the tests of the server's node agent and its packaged components (local storage, cluster DNS) start
// it: the kubelet on 127.0.0.1 ports of its own, its pods' logs under the test's directory (podLogsDir
// from a drop-in), the containerd harness's own cgroup root.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
  /** deletes the pods (while the server runs), stops the server and containerd, removes the directory */
  stop(): Promise<void>;
}

export async function startServerNode(o: { node: string; nodeIP?: string; args?: string[]; prefix?: string }): Promise<ServerNode> {
  const dir = mkdtempSync(join(tmpdir(), o.prefix ?? 'keelson-server-node-'));
  const logs = join(dir, 'logs');
  const ctd = await startContainerd();
  let c: Cluster | undefined;
  const stop = async () => {
    if (c?.proc?.exitCode === null) c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
    await c?.stop();
    await ctd.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    mkdirSync(join(dir, 'kubelet.conf.d'));
    writeFileSync(join(dir, 'kubelet.conf.d', '10-logs.conf'), `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${logs}\n`);
    const port = await freePort();
    const healthz = await freePort();
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
      ],
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { c, ctd, dir, logs, stop };
}
