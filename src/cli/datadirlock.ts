// One keelson process per data directory. A second one on the same --data-dir would rewrite the
// running server's kubeconfig (pointing kubectl at itself), share its certificates and, on the
// embedded store, wait on its database lock and fail with SQLite's bare "database is locked".
// The first holds <data-dir>/keelson.pid; a second refuses at once, naming the holder. A file
// left by a process that is gone (killed, crashed) is taken over.
import { openSync, readFileSync, unlinkSync, writeFileSync, closeSync } from 'node:fs';
import { join } from 'node:path';

export const PID_FILE = 'keelson.pid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    // (EPERM: it exists, owned by someone else)
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // a process id is reused (after a crash, a reboot, in a new container): the holder must still be
  // a keelson process; where /proc tells (Linux), one whose command line is not is not the holder
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return /keelson/.test(cmdline);
  } catch {
    return true;
  }
}

/** takes the data directory for this process; throws when another live process holds it. Returns the release. */
export function lockDataDir(dir: string): () => void {
  const path = join(dir, PID_FILE);
  const mine = String(process.pid);
  try {
    const fd = openSync(path, 'wx', 0o600);
    writeFileSync(fd, mine);
    closeSync(fd);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const holder = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
      throw new Error(`the data directory ${dir} is in use by another keelson process (pid ${holder}): stop it, or give this one another --data-dir`);
    }
    writeFileSync(path, mine, { mode: 0o600 });
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    try {
      if (readFileSync(path, 'utf8').trim() === mine) unlinkSync(path);
    } catch {
      /* gone already */
    }
  };
  process.on('exit', release);
  return release;
}
