// What a directory takes on disk, as the kubelet measures a volume or a log directory (its `du`
// and `find -xdev`): the blocks of every file, directory and link under it (512-byte blocks, a
// file with several links counted once), and the inodes. The walk stays on the directory's file
// system and does not follow symbolic links. Node has no du; a walk of lstat calls is what du
// does, and what a pod's emptyDir holds is rarely large.
import { lstat, opendir } from 'node:fs/promises';
import { join } from 'node:path';

export interface DiskUsage {
  usedBytes: number;
  inodesUsed: number;
}

/** the usage of `dir` (zero when it does not exist) */
export async function diskUsage(dir: string): Promise<DiskUsage> {
  const out: DiskUsage = { usedBytes: 0, inodesUsed: 0 };
  let root;
  try {
    root = await lstat(dir, { bigint: true });
  } catch {
    return out;
  }
  const seen = new Set<bigint>();
  const add = (st: { ino: bigint; nlink: bigint; blocks: bigint }) => {
    if (st.nlink > 1n) {
      if (seen.has(st.ino)) return;
      seen.add(st.ino);
    }
    out.usedBytes += Number(st.blocks) * 512;
    out.inodesUsed++;
  };
  add(root);
  if (!root.isDirectory()) return out;
  const dev = root.dev;
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop()!;
    let handle;
    try {
      handle = await opendir(d);
    } catch {
      continue; // (gone meanwhile, or not readable)
    }
    for await (const e of handle) {
      const p = join(d, e.name);
      let st;
      try {
        st = await lstat(p, { bigint: true });
      } catch {
        continue;
      }
      if (st.dev !== dev) continue;
      add(st);
      if (st.isDirectory()) stack.push(p);
    }
  }
  return out;
}
