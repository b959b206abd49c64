// A private containerd for one test file: its own directory (root, state, socket, CNI config and
// IPAM data, logs), its own bridge and /16 pod subnet, and two images built locally from
// busybox-static (nothing is pulled). It follows the team's shell tool in
// /work/shared/tools/containerd (start.sh, stop.sh, build-image.sh), made safe for test files
// that run at the same time:
//
// - each harness takes a lease (a file under <tmpdir>/keelson-ctd-leases, written under a lock)
//   naming its process, directory, bridge and subnet; a subnet is picked at random from
//   10.{100..199}.0.0/16 among those neither leased nor routed;
// - net.ipv4.ip_forward (which the CNI bridge plugin turns on) is saved by the first live harness
//   and restored by the last;
// - containerd runs with the parent-death signal set (setpriv), and a lease whose process died
//   without stopping is torn down by the next harness that starts;
// - stop() (also run at process exit) kills tasks, containerd, shims and container processes,
//   unmounts what is mounted under the directory, deletes the bridge and its veths and removes
//   the directory. It is synchronous inside, so that it can run in an 'exit' handler;
// - each harness makes a cgroup root of its own (cgroupRoot, /keelson-test-<pid>-<random>) for
//   the kubelets it serves (--cgroup-root): kubelets of test files running at the same time do not
//   see each other's pod cgroups. stop() kills what is left in it and removes it, after containerd
//   and the shims are gone; a dead harness's root is removed by the next harness that starts.
//
// Needs root.

import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync,
  rmdirSync, symlinkSync, chmodSync, copyFileSync, writeFileSync, constants as fsConstants, accessSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { RunningClock, processState } from '../runningclock.js';
import { createCgroupRoot, removeCgroupTree, staleTestCgroupRoots, testCgroupRootName } from './cgrouproot.js';

export interface Containerd {
  /** the CRI endpoint, unix://<dir>/ctd.sock */
  endpoint: string;
  /** the harness's directory: containerd's root and state, CNI config, logs */
  dir: string;
  /** the pods' bridge */
  bridge: string;
  /** the pods' subnet, 10.N.0.0/16 */
  subnet: string;
  /** the two local images */
  images: { busybox: string; pause: string };
  /**
   * containerd's registry host configuration: `<dir>/<host:port>/hosts.toml`, read at every pull
   * (registryHosts() writes one for a plain-HTTP registry of a test's own)
   */
  registryConfigDir: string;
  /** the cgroup root (made, and removed by stop()) for the kubelets that use this containerd: --cgroup-root */
  cgroupRoot: string;
  /** containerd's log file */
  log: string;
  /** runs `ctr --address <socket> -n k8s.io ARGS` and returns its output (throws on failure) */
  ctr(...args: string[]): string;
  /** stops and removes everything the harness started; idempotent, never throws */
  stop(): Promise<void>;
}

const BUSYBOX = 'docker.io/library/busybox:local';
const PAUSE = 'registry.k8s.io/pause:local';
const INSTALL = 'apt-get install -y containerd runc containernetworking-plugins busybox-static';
const CNI_BIN = '/usr/lib/cni';
const BUSYBOX_BIN = '/usr/bin/busybox';
const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';
const LEASES = join(tmpdir(), 'keelson-ctd-leases');
const SHIM_SOCKET_DIR = '/run/containerd/s';

// ---------------------------------------------------------------------------------------------
// Small helpers

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function which(cmd: string): string | undefined {
  for (const d of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(delimiter)) {
    const p = join(d, cmd);
    try {
      accessSync(p, fsConstants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

function run(cmd: string, args: string[], timeoutMs = 30_000): { ok: boolean; out: string; err: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 16 << 20 });
  return { ok: r.status === 0, out: r.stdout ?? '', err: (r.stderr ?? '') + (r.error ? String(r.error) : '') };
}

function mustRun(cmd: string, args: string[], timeoutMs?: number): string {
  const r = run(cmd, args, timeoutMs);
  if (!r.ok) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.err.trim() || r.out.trim()}`);
  return r.out;
}

/** a process's start time (clock ticks since boot), to tell it from a later process with its pid */
function startTime(pid: number): string | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function alive(pid: number | undefined, start?: string): boolean {
  if (!pid) return false;
  const t = startTime(pid);
  if (t === undefined) return false;
  if (start !== undefined && t !== start) return false;
  // a zombie is not alive
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

function kill(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}

function readPid(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Leases: which harness has which directory, bridge and subnet

interface Lease {
  pid: number;
  start: string;
  dir: string;
  bridge: string;
  net: number; // the N of 10.N.0.0/16
  containerd?: number;
  containerdStart?: string;
  /** the harness's cgroup root (--cgroup-root of its kubelets) */
  cgroupRoot?: string;
}

const LOCK = join(LEASES, 'lock');
const FORWARD_ORIG = join(LEASES, 'ip_forward.orig');

function withLock<T>(f: () => T): T {
  mkdirSync(LEASES, { recursive: true });
  const until = Date.now() + 20_000;
  for (;;) {
    try {
      closeSync(openSync(LOCK, 'wx'));
      writeFileSync(LOCK, `${process.pid} ${startTime(process.pid)}`);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let stale = false;
      try {
        const [pid, st] = readFileSync(LOCK, 'utf8').split(' ');
        stale = (!!pid && !alive(Number(pid), st)) || Date.now() - statSync(LOCK).mtimeMs > 60_000;
      } catch {
        /* just released */
      }
      if (stale) rmSync(LOCK, { force: true });
      else if (Date.now() > until) throw new Error(`containerd harness: ${LOCK} is held too long`);
      else sleepSync(25);
    }
  }
  try {
    return f();
  } finally {
    rmSync(LOCK, { force: true });
  }
}

function leaseFile(l: Pick<Lease, 'pid' | 'net'>): string {
  return join(LEASES, `lease-${l.pid}-${l.net}.json`);
}

function readLeases(): Lease[] {
  const out: Lease[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(LEASES);
  } catch {
    return out;
  }
  for (const n of names) {
    if (!/^lease-.*\.json$/.test(n)) continue;
    try {
      out.push(JSON.parse(readFileSync(join(LEASES, n), 'utf8')) as Lease);
    } catch {
      /* being written or removed */
    }
  }
  return out;
}

function writeLease(l: Lease): void {
  const f = leaseFile(l);
  writeFileSync(f + '.tmp', JSON.stringify(l));
  renameSync(f + '.tmp', f);
}

/** the N of each 10.N.0.0/16 that overlaps a route of the main table */
function routedNets(): Set<number> {
  const used = new Set<number>();
  const types = new Set(['unicast', 'local', 'broadcast', 'multicast', 'throw', 'unreachable', 'prohibit', 'blackhole', 'nat']);
  for (const line of run('ip', ['-o', '-4', 'route']).out.split('\n')) {
    const t = line.trim().split(/\s+/);
    const dst = types.has(t[0]!) ? t[1] : t[0];
    const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)(?:\/(\d+))?$/.exec(dst ?? '');
    if (!m) continue; // 'default' and the like
    const len = m[5] === undefined ? 32 : Number(m[5]);
    if (len === 0) continue;
    if (len <= 8) {
      if (Number(m[1]) >> (8 - len) === 10 >> (8 - len)) for (let n = 100; n <= 199; n++) used.add(n);
    } else if (Number(m[1]) === 10) {
      const bits = Math.min(16, len) - 8;
      const second = Number(m[2]);
      for (let n = 100; n <= 199; n++) if (n >> (8 - bits) === second >> (8 - bits)) used.add(n);
    }
  }
  return used;
}

/** the cgroup hierarchies' mount points (v1 controllers and the v2 tree) */
function cgroupRoots(): string[] {
  try {
    return readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .filter((f) => f[2] === 'cgroup' || f[2] === 'cgroup2')
      .map((f) => f[1]!);
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------------
// Teardown

/** the shim socket containerd 1.6 gives a task: under /run/containerd/s, named by the sha256 of
 * <containerd socket>/<namespace>/<id> */
function shimSocket(sock: string, ns: string, id: string): string {
  return join(SHIM_SOCKET_DIR, createHash('sha256').update(join(sock, ns, id)).digest('hex'));
}

function teardown(l: Lease): void {
  const sock = join(l.dir, 'ctd.sock');
  const ctr = (...a: string[]) => run('ctr', ['--address', sock, '-n', 'k8s.io', ...a], 15_000);
  const ctdAlive = alive(l.containerd, l.containerdStart);
  if (ctdAlive && existsSync(sock)) {
    const tasks = () => ctr('tasks', 'ls', '-q').out.split('\n').filter(Boolean);
    const ts = tasks();
    for (const t of ts) ctr('tasks', 'kill', '-s', 'SIGKILL', t);
    if (ts.length) sleepSync(300);
    for (const t of tasks()) ctr('tasks', 'rm', '-f', t);
    for (const c of ctr('containers', 'ls', '-q').out.split('\n').filter(Boolean)) ctr('containers', 'rm', c);
  }
  // the shims and the containers' first processes, known by their pid files, and any shim still
  // serving this containerd, known by its command line
  const taskRoot = join(l.dir, 'state', 'io.containerd.runtime.v2.task');
  const pids = new Set<number>();
  const shimSockets: string[] = [];
  const tasks: [string, string][] = [];
  try {
    for (const ns of readdirSync(taskRoot)) {
      for (const id of readdirSync(join(taskRoot, ns))) {
        for (const f of ['shim.pid', 'init.pid']) {
          const p = readPid(join(taskRoot, ns, id, f));
          if (p) pids.add(p);
        }
        shimSockets.push(shimSocket(sock, ns, id));
        tasks.push([ns, id]);
      }
    }
  } catch {
    /* no tasks */
  }
  try {
    for (const p of readdirSync('/proc')) {
      if (!/^\d+$/.test(p)) continue;
      try {
        const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
        if (/containerd-shim/.test(cmd[0] ?? '') && cmd.includes(sock)) pids.add(Number(p));
      } catch {
        /* gone */
      }
    }
  } catch {
    /* no /proc */
  }
  if (ctdAlive) {
    kill(l.containerd!, 'SIGTERM');
    for (let i = 0; i < 50 && alive(l.containerd, l.containerdStart); i++) sleepSync(100);
    if (alive(l.containerd, l.containerdStart)) kill(l.containerd!, 'SIGKILL');
  }
  for (const p of pids) if (p !== process.pid) kill(p, 'SIGKILL');
  for (let i = 0; i < 20 && [...pids].some((p) => alive(p)); i++) sleepSync(50);
  for (const s of shimSockets) rmSync(s, { force: true });
  // the cgroups of tasks killed here rather than deleted by runc (runc puts a container without a
  // cgroup parent in /<namespace>/<id>)
  for (const root of cgroupRoots()) {
    for (const [ns, id] of tasks) {
      const cg = join(root, ns, id);
      for (let i = 0; i < 10 && existsSync(cg); i++) {
        try {
          rmdirSync(cg);
        } catch {
          sleepSync(50); // its last processes are still exiting
        }
      }
    }
  }
  // the kubelets' cgroup root, with the pod cgroups under it (and runc's container cgroups under those)
  if (l.cgroupRoot) removeCgroupTree(l.cgroupRoot);
  // mounts under the directory (rootfs overlays, shm, network namespaces), deepest first
  let mounts: string[] = [];
  try {
    mounts = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((line) => (line.split(' ')[1] ?? '').replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
      .filter((m) => m.startsWith(l.dir + '/'));
  } catch {
    /* no /proc */
  }
  for (const m of [...new Set(mounts)].sort((a, b) => b.length - a.length)) run('umount', ['-l', m], 10_000);
  // the bridge and the pods' veths on it
  if (existsSync(`/sys/class/net/${l.bridge}`)) {
    for (const line of run('ip', ['-o', 'link', 'show', 'master', l.bridge]).out.split('\n')) {
      const name = /^\d+:\s+([^:@\s]+)/.exec(line)?.[1];
      if (name) run('ip', ['link', 'del', name]);
    }
    run('ip', ['link', 'del', l.bridge]);
  }
  try {
    rmSync(l.dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    /* something is still busy; the next reclaim tries again */
  }
}

/** tears down the leases of harness processes that died without stopping */
function reclaimDead(): void {
  const dead = withLock(() => {
    const out: Lease[] = [];
    for (const l of readLeases()) {
      if (alive(l.pid, l.start)) continue;
      const f = leaseFile(l);
      const claimed = f.replace(/\.json$/, `.reclaim-${process.pid}`);
      try {
        renameSync(f, claimed);
        out.push(l);
      } catch {
        /* someone else took it */
      }
    }
    return out;
  });
  for (const l of dead) {
    teardown(l);
    rmSync(leaseFile(l).replace(/\.json$/, `.reclaim-${process.pid}`), { force: true });
  }
  // cgroup roots whose harness died before its lease named them
  for (const r of staleTestCgroupRoots((pid) => alive(pid))) removeCgroupTree(r);
}

/** the cgroup root of the harness serving this CRI endpoint (joiningKubeletArgs' default --cgroup-root) */
const rootsByEndpoint = new Map<string, string>();
export function cgroupRootOf(endpoint: string): string | undefined {
  return rootsByEndpoint.get(endpoint);
}

// ---------------------------------------------------------------------------------------------
// Images: OCI layouts built from busybox-static, as build-image.sh builds them

function ociArch(): string {
  return ({ x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' } as Record<string, string>)[process.arch] ?? process.arch;
}

function sha256File(p: string): string {
  return createHash('sha256').update(readFileSync(p)).digest('hex');
}

/**
 * Packs `rootfs` as an OCI image-layout tarball at `out`, one layer, named `name` (as `ctr images
 * import` reads it), with `config` as the image's run configuration. Returns the image ID (the
 * digest of its config, as the runtime names it). `work` is a scratch directory of the caller's.
 */
export function packImage(work: string, rootfs: string, out: string, name: string, config: Record<string, unknown>): string {
  const b = join(work, 'layout');
  const blobs = join(b, 'blobs', 'sha256');
  mkdirSync(blobs, { recursive: true });
  const layer = join(work, 'layer.tar');
  mustRun('tar', ['--sort=name', '--mtime=2020-01-01', '--owner=0', '--group=0', '--numeric-owner', '-C', rootfs, '-cf', layer, '.']);
  const layerDigest = sha256File(layer);
  const layerSize = statSync(layer).size;
  renameSync(layer, join(blobs, layerDigest));
  const blob = (text: string) => {
    const d = createHash('sha256').update(text).digest('hex');
    writeFileSync(join(blobs, d), text);
    return { digest: `sha256:${d}`, size: Buffer.byteLength(text) };
  };
  const platform = { architecture: ociArch(), os: 'linux' };
  const imageConfig = blob(JSON.stringify({
    ...platform,
    config,
    rootfs: { type: 'layers', diff_ids: [`sha256:${layerDigest}`] },
    history: [{ created_by: 'keelson test harness' }],
  }));
  const manifest = blob(JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...imageConfig },
    layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: `sha256:${layerDigest}`, size: layerSize }],
  }));
  writeFileSync(join(b, 'index.json'), JSON.stringify({
    schemaVersion: 2,
    manifests: [{
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      ...manifest,
      platform,
      annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': name.slice(name.lastIndexOf(':') + 1) },
    }],
  }));
  writeFileSync(join(b, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  mustRun('tar', ['-C', b, '-cf', out, 'oci-layout', 'index.json', 'blobs']);
  return imageConfig.digest;
}

/** the busybox applets the image links in /bin (tar: kubectl cp runs it in the container) */
const APPLETS = ['sh', 'sleep', 'echo', 'cat', 'ls', 'ps', 'hostname', 'id', 'ip', 'ifconfig', 'env', 'mount', 'wget', 'nc', 'true', 'false', 'kill', 'touch', 'rm', 'mkdir', 'date', 'grep', 'test', 'tar'];

function buildImage(work: string, out: string, name: string, entrypoint: string[] | null, cmd: string[] | null): void {
  const w = mkdtempSync(join(work, 'img-'));
  try {
    const r = join(w, 'rootfs');
    for (const d of ['bin', 'etc', 'proc', 'sys', 'dev', 'tmp', 'root', 'var/run']) mkdirSync(join(r, d), { recursive: true });
    copyFileSync(BUSYBOX_BIN, join(r, 'bin', 'busybox'));
    chmodSync(join(r, 'bin', 'busybox'), 0o755);
    for (const a of APPLETS) {
      symlinkSync('busybox', join(r, 'bin', a));
    }
    writeFileSync(join(r, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
    writeFileSync(join(r, 'etc', 'group'), 'root:x:0:\n');
    chmodSync(join(r, 'tmp'), 0o1777);
    packImage(w, r, out, name, { Env: ['PATH=/bin'], Entrypoint: entrypoint, Cmd: cmd, WorkingDir: '/' });
  } finally {
    rmSync(w, { recursive: true, force: true });
  }
}

/** the two image tarballs, built once per busybox binary and kept under the temporary directory */
export function imageTars(): { busybox: string; pause: string } {
  const st = statSync(BUSYBOX_BIN);
  // (the applets are in the name: an image built with other ones is another image)
  const applets = createHash('sha256').update(APPLETS.join(',')).digest('hex').slice(0, 8);
  const cache = join(tmpdir(), `keelson-ctd-images-${Math.trunc(st.mtimeMs)}-${st.size}-${ociArch()}-${applets}`);
  const tars = { busybox: join(cache, 'busybox.tar'), pause: join(cache, 'pause.tar') };
  mkdirSync(cache, { recursive: true });
  const make = (out: string, name: string, ep: string[] | null, cmd: string[] | null) => {
    if (existsSync(out)) return;
    const tmp = `${out}.${process.pid}.tmp`;
    buildImage(cache, tmp, name, ep, cmd);
    renameSync(tmp, out); // atomic: a concurrent builder writes the same bytes
  };
  make(tars.busybox, BUSYBOX, null, ['/bin/sh']);
  make(tars.pause, PAUSE, ['/bin/sleep', 'infinity'], null);
  return tars;
}

// ---------------------------------------------------------------------------------------------
// containerd's configuration

/** `containerd config default` with start.sh's edits, plus: no debug or metrics listener and no
 * TCP or separately configured ttrpc address, so that nothing binds a fixed address */
function containerdConfig(dir: string, sock: string): string {
  const text = mustRun('containerd', ['config', 'default']);
  const required: [RegExp, string][] = [
    [/^root = ".*"$/m, `root = "${dir}/root"`],
    [/^state = ".*"$/m, `state = "${dir}/state"`],
    [/^(\s*)address = "\/run\/containerd\/containerd\.sock"$/m, `$1address = "${sock}"`],
    [/^(\s*)bin_dir = "\/opt\/cni\/bin"$/m, `$1bin_dir = "${CNI_BIN}"`],
    [/^(\s*)conf_dir = "\/etc\/cni\/net\.d"$/m, `$1conf_dir = "${dir}/cni/net.d"`],
    [/^(\s*)path = "\/opt\/containerd"$/m, `$1path = "${dir}/opt"`],
    [/^(\s*)sandbox_image = ".*"$/m, `$1sandbox_image = "${PAUSE}"`],
    [/^(\s*)netns_mounts_under_state_dir = false$/m, '$1netns_mounts_under_state_dir = true'],
    [/^(\s*)restrict_oom_score_adj = false$/m, '$1restrict_oom_score_adj = true'],
  ];
  let out = text;
  for (const [re, to] of required) {
    if (!re.test(out)) throw new Error(`containerd harness: \`containerd config default\` has no line matching ${re}`);
    out = out.replace(re, to);
  }
  // table-aware edits: listeners other than the main gRPC socket stay off, and runc keeps the
  // state of the CRI's containers under the directory, not in the shared /run/containerd/runc
  let table = '';
  let runcRoot = false;
  const lines = out.split('\n').map((line) => {
    const h = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (h) table = h[1]!;
    const kv = /^(\s*)([A-Za-z_]+)\s*=/.exec(line);
    if (!kv) return line;
    const [, sp, key] = kv;
    if ((table === 'debug' || table === 'metrics' || table === 'ttrpc') && key === 'address') return `${sp}address = ""`;
    if (table === 'grpc' && key === 'tcp_address') return `${sp}tcp_address = ""`;
    // registries configured per host (hosts.toml), read at every pull: a test's own registry on 127.0.0.1
    if (table === 'plugins."io.containerd.grpc.v1.cri".registry' && key === 'config_path') return `${sp}config_path = "${dir}/certs.d"`;
    if (table === 'plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options' && key === 'Root') {
      runcRoot = true;
      return `${sp}Root = "${dir}/runc"`;
    }
    return line;
  });
  if (!runcRoot) throw new Error('containerd harness: `containerd config default` has no runc options table with Root');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

const live = new Set<() => void>();
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const f of [...live]) f();
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      for (const f of [...live]) f();
      process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  }
}

function checkTools(): void {
  const missing: string[] = [];
  for (const c of ['containerd', 'containerd-shim-runc-v2', 'runc', 'ctr']) if (!which(c)) missing.push(c);
  for (const f of [`${CNI_BIN}/bridge`, `${CNI_BIN}/host-local`, `${CNI_BIN}/loopback`, BUSYBOX_BIN]) if (!existsSync(f)) missing.push(f);
  if (missing.length) {
    throw new Error(`containerd test harness: missing ${missing.join(', ')}; .ci/run installs them with \`${INSTALL}\``);
  }
  if (process.getuid?.() !== 0) throw new Error('containerd test harness: needs root (containerd, runc and the CNI plugins)');
}

export async function startContainerd(): Promise<Containerd> {
  checkTools();
  hookExit();
  reclaimDead();
  const dir = mkdtempSync(join(tmpdir(), 'kslctd-'));
  const sock = join(dir, 'ctd.sock');
  let lease: Lease | undefined;
  let stopped = false;
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    live.delete(stopSync);
    try {
      if (lease) teardown(lease);
      else rmSync(dir, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
    try {
      withLock(() => {
        if (lease) rmSync(leaseFile(lease), { force: true });
        const others = readLeases().filter((l) => alive(l.pid, l.start) && !(l.pid === lease?.pid && l.net === lease?.net));
        if (others.length === 0 && existsSync(FORWARD_ORIG)) {
          try {
            writeFileSync(IP_FORWARD, readFileSync(FORWARD_ORIG, 'utf8').trim() + '\n');
          } catch {
            /* read-only /proc/sys */
          }
          rmSync(FORWARD_ORIG, { force: true });
          // the cgroup runc made for the k8s.io namespace's containers, when nothing is left in it
          for (const c of cgroupRoots()) {
            try {
              rmdirSync(join(c, 'k8s.io'));
            } catch {
              /* absent, or in use by another containerd */
            }
          }
        }
      });
    } catch {
      /* best effort */
    }
  };
  live.add(stopSync);
  try {
    // a bridge name and a subnet nobody else has
    let bridge = '';
    do bridge = `kslcni${randomBytes(2).toString('hex')}`;
    while (existsSync(`/sys/class/net/${bridge}`));
    lease = withLock(() => {
      const leases = readLeases().filter((l) => alive(l.pid, l.start));
      if (!existsSync(FORWARD_ORIG)) writeFileSync(FORWARD_ORIG, readFileSync(IP_FORWARD, 'utf8'));
      const taken = routedNets();
      for (const l of leases) taken.add(l.net);
      const free: number[] = [];
      for (let n = 100; n <= 199; n++) if (!taken.has(n)) free.push(n);
      if (free.length === 0) throw new Error('containerd harness: no free subnet in 10.100.0.0/16 .. 10.199.0.0/16');
      const l: Lease = { pid: process.pid, start: startTime(process.pid)!, dir, bridge, net: free[randomBytes(2).readUInt16BE() % free.length]! };
      writeLease(l);
      return l;
    });
    const subnet = `10.${lease.net}.0.0/16`;
    const cgroupRoot = testCgroupRootName();
    lease = { ...lease, cgroupRoot };
    {
      const l = lease;
      withLock(() => writeLease(l));
    }
    createCgroupRoot(cgroupRoot);

    mkdirSync(join(dir, 'cni', 'net.d'), { recursive: true });
    mkdirSync(join(dir, 'logs'), { recursive: true });
    writeFileSync(join(dir, 'config.toml'), containerdConfig(dir, sock));
    writeFileSync(join(dir, 'cni', 'net.d', '10-keelson.conflist'), JSON.stringify({
      cniVersion: '1.0.0',
      name: `keelson-${bridge}`,
      plugins: [{
        type: 'bridge', bridge, isGateway: true, ipMasq: false, hairpinMode: true,
        ipam: { type: 'host-local', dataDir: join(dir, 'cni', 'ipam'), ranges: [[{ subnet }]], routes: [{ dst: '0.0.0.0/0' }] },
      }],
    }, null, 2));

    // containerd, killed by the kernel if this process dies first
    const log = join(dir, 'containerd.log');
    const logFd = openSync(log, 'a');
    const setpriv = which('setpriv');
    const argv = ['containerd', '--config', join(dir, 'config.toml')];
    const child = setpriv
      ? spawn(setpriv, ['--pdeathsig', 'KILL', ...argv], { stdio: ['ignore', logFd, logFd] })
      : spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', logFd, logFd] });
    closeSync(logFd);
    child.unref();
    let exited: string | undefined;
    child.once('exit', (code, sig) => (exited = `exited (${sig ?? code})`));
    child.once('error', (e) => (exited = `could not start: ${e.message}`));
    const pid = child.pid;
    if (pid) {
      // setpriv execs containerd in place, so the pid is containerd's
      lease = { ...lease, containerd: pid, containerdStart: startTime(pid) };
      const l = lease;
      withLock(() => writeLease(l));
    }
    const tail = () => {
      try {
        return readFileSync(log, 'utf8').split('\n').slice(-15).join('\n');
      } catch {
        return '';
      }
    };
    const clock = new RunningClock();
    try {
      while (!existsSync(sock)) {
        if (exited) throw new Error(`containerd ${exited}:\n${tail()}`);
        if (clock.elapsed() > 20_000) throw new Error(`containerd did not create ${sock} in 20 s (${clock.describe()}; ${processState(pid)}):\n${tail()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      clock.stop();
    }
    const ctr = (...args: string[]) => mustRun('ctr', ['--address', sock, '-n', 'k8s.io', ...args], 60_000);

    const tars = imageTars();
    ctr('images', 'import', tars.busybox);
    ctr('images', 'import', tars.pause);
    const plugins = mustRun('ctr', ['--address', sock, 'plugins', 'ls']);
    if (!/io\.containerd\.grpc\.v1\s+cri\s+\S+\s+ok/.test(plugins)) {
      throw new Error(`containerd's CRI plugin is not ok:\n${plugins.split('\n').filter((l) => /cri/.test(l)).join('\n')}\n${tail()}`);
    }
    rootsByEndpoint.set(`unix://${sock}`, cgroupRoot);
    return {
      endpoint: `unix://${sock}`,
      dir,
      bridge,
      subnet,
      cgroupRoot,
      images: { busybox: BUSYBOX, pause: PAUSE },
      registryConfigDir: join(dir, 'certs.d'),
      log,
      ctr,
      stop: async () => stopSync(),
    };
  } catch (e) {
    stopSync();
    throw e;
  }
}
