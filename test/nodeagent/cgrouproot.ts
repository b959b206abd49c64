// A cgroup root of a test's own (--cgroup-root): kubelets that run at the same time on this
// machine must not share one, or each would take the other's pod cgroups for orphans and kill
// them. The kubelet refuses a --cgroup-root that does not exist, so it is made here (in every v1
// hierarchy, cpuset's cpus and mems copied from the root; on v2 with the root's controllers
// enabled for it), and removed with everything under it (the processes left in it killed first).
// Synchronous, so that it can run in an 'exit' handler.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** the cgroup hierarchies' mount points: [path, type] (v1 controllers, and the v2 tree) */
export function cgroupMounts(): { path: string; v2: boolean }[] {
  try {
    return readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .filter((f) => f[2] === 'cgroup' || f[2] === 'cgroup2')
      .map((f) => ({ path: f[1]!, v2: f[2] === 'cgroup2' }));
  } catch {
    return [];
  }
}

/** whether /sys/fs/cgroup itself is a cgroup2 file system (a pure v2 host) */
function unifiedHost(): boolean {
  return cgroupMounts().some((m) => m.v2 && m.path === '/sys/fs/cgroup');
}

/** makes the cgroup `/name` (one level under the hierarchies' roots) */
export function createCgroupRoot(name: string): void {
  if (unifiedHost()) {
    const root = '/sys/fs/cgroup';
    const ctrs = (read(join(root, 'cgroup.controllers')) ?? '').split(/\s+/).filter(Boolean);
    for (const c of ctrs) {
      try {
        writeFileSync(join(root, 'cgroup.subtree_control'), '+' + c);
      } catch {
        /* not delegated to us */
      }
    }
    mkdirSync(join(root, name), { recursive: true });
    return;
  }
  for (const m of cgroupMounts()) {
    if (m.v2) continue; // (the hybrid layout's empty v2 tree: the kubelet does not use it)
    const dir = join(m.path, name);
    mkdirSync(dir, { recursive: true });
    for (const f of ['cpuset.cpus', 'cpuset.mems']) {
      if (!existsSync(join(m.path, f)) || read(join(dir, f))) continue;
      writeFileSync(join(dir, f), read(join(m.path, f)) ?? '');
    }
  }
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
}

function procs(dir: string, out: Set<number>): void {
  for (const l of (read(join(dir, 'cgroup.procs')) ?? '').split('\n')) if (/^\d+$/.test(l)) out.add(Number(l));
  for (const d of subdirs(dir)) procs(join(dir, d), out);
}

/**
 * Removes the cgroup `/name` and everything under it in every hierarchy: the processes in it are
 * killed, then the directories removed deepest first. Never throws.
 */
export function removeCgroupTree(name: string): void {
  const rel = name.replace(/^\/+/, '');
  if (!rel || rel.includes('..')) return;
  const dirs = cgroupMounts().map((m) => join(m.path, rel)).filter((d) => existsSync(d));
  if (!dirs.length) return;
  for (let i = 0; i < 20; i++) {
    const pids = new Set<number>();
    for (const d of dirs) procs(d, pids);
    pids.delete(process.pid);
    if (!pids.size) break;
    for (const p of pids) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    sleepSync(50);
  }
  const rm = (dir: string): void => {
    for (const d of subdirs(dir)) rm(join(dir, d));
    for (let i = 0; i < 20 && existsSync(dir); i++) {
      try {
        rmdirSync(dir);
      } catch {
        sleepSync(50); // its last processes are still exiting
      }
    }
  };
  for (const d of dirs) rm(d);
}

/** a name for a test's cgroup root: /keelson-test-<pid>-<random> (the pid lets a later run reclaim it) */
export function testCgroupRootName(): string {
  return `/keelson-test-${process.pid}-${Math.random().toString(16).slice(2, 8)}`;
}

/** the test cgroup roots left by processes that are gone (their names carry the pid) */
export function staleTestCgroupRoots(alive: (pid: number) => boolean): string[] {
  const out = new Set<string>();
  for (const m of cgroupMounts()) {
    for (const d of subdirs(m.path)) {
      const pid = /^keelson-test-(\d+)-/.exec(d)?.[1];
      if (pid && !alive(Number(pid))) out.add('/' + d);
    }
  }
  return [...out];
}
