// kubectl get -w with real kubectl 1.33, 1.32 and 1.27 against a keelson server: start the watch
// in the background, create, modify and delete a pod, see each row appear as it does against a
// Kubernetes 1.33 cluster, then stop the watch.
//
// The pods name a scheduler nobody runs (schedulerName: manual), so no scheduler or node agent
// touches them: the only events are the ones the test causes. Deleting a pod that is bound to
// no node is immediate; Kubernetes still writes the deletion timestamp first, so a watcher sees
// a MODIFIED event (Terminating) and then the DELETED event (Terminating again).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { startCluster, type Cluster } from './harness.js';

const VERSIONS = ['1.33', '1.32', '1.27'] as const;
type Version = (typeof VERSIONS)[number];

let c: Cluster;

before(async () => {
  c = await startCluster();
});

after(async () => {
  await c?.stop();
});

const AGE = /^(\d+s|\d+m(\d+s)?)$/;

const POD = (name: string, labels: Record<string, string>) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels:
${Object.entries(labels)
  .map(([k, v]) => `    ${k}: ${v}`)
  .join('\n')}
spec:
  schedulerName: manual
  containers:
  - name: main
    image: nginx:1.27
`;

function run(v: Version, args: string[], input?: string): string {
  const r = c.kubectl(args, { version: v, input });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

interface Watch {
  proc: ChildProcess;
  out: () => string;
  err: () => string;
  /** the output lines split into cells (kubectl pads cells with at least three spaces) */
  lines: () => string[][];
  /** wait until pred holds; with settle, give up quietly after that many ms (the assertions
   * that follow then show what arrived) */
  until: (what: string, pred: (lines: string[][]) => boolean, settle?: number) => Promise<void>;
  stop: () => Promise<number | null>;
}

function watch(v: Version, args: string[], t: { after: (fn: () => void) => void }): Watch {
  const w = c.kubectlSpawn(args, { version: v });
  const exited = new Promise<number | null>((r) => w.proc.once('exit', (code, signal) => r(code ?? (signal ? -1 : null))));
  t.after(() => {
    if (w.proc.exitCode === null && w.proc.signalCode === null) w.proc.kill('SIGKILL');
  });
  const lines = () =>
    w
      .out()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.trimEnd().split(/ {2,}/));
  return {
    ...w,
    lines,
    async until(what, pred, settle) {
      const deadline = Date.now() + (settle ?? 20_000);
      while (!pred(lines())) {
        if (settle !== undefined && Date.now() > deadline) return;
        if (w.proc.exitCode !== null) throw new Error(`kubectl ${args.join(' ')} exited (${w.proc.exitCode}) before ${what}\nstdout: ${w.out()}\nstderr: ${w.err()}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nstdout: ${w.out()}\nstderr: ${w.err()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      if (w.proc.exitCode === null && w.proc.signalCode === null) w.proc.kill('SIGTERM');
      return exited;
    },
  };
}

/** rows of one pod, with the age cell checked and replaced by "AGE" */
function podRows(lines: string[][], name: string, nameCol = 0): string[][] {
  return lines
    .filter((l) => l[nameCol] === name)
    .map((l) => {
      const age = l[l.length - 1];
      assert.match(age, AGE, `age cell of ${JSON.stringify(l)}`);
      return [...l.slice(0, -1), 'AGE'];
    });
}

const HEADER = ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'];

for (const v of VERSIONS) {
  const ns = `kw-${v.replace('.', '')}`;

  test(`kubectl ${v}: get pods -w shows a pod's creation, change and deletion as rows`, async (t) => {
    run(v, ['create', 'namespace', ns]);
    const w = watch(v, ['get', 'pods', '-n', ns, '-w'], t);
    run(v, ['create', '-n', ns, '-f', '-'], POD('wp', { app: 'web' }));
    await w.until('the new pod', (ls) => ls.some((l) => l[0] === 'wp'));
    // a change a real cluster accepts (a replace from the manifest would drop what admission added)
    run(v, ['label', 'pod', 'wp', '-n', ns, 'stage=two']);
    await w.until('the change', (ls) => ls.filter((l) => l[0] === 'wp').length >= 2);
    run(v, ['delete', 'pod', 'wp', '-n', ns]);
    await w.until('the deletion', (ls) => ls.filter((l) => l[0] === 'wp' && l[2] === 'Terminating').length >= 2, 5_000);
    // nothing more arrives for a deleted pod; stop the watch
    const code = await w.stop();
    assert.notEqual(code, null);
    const lines = w.lines();
    assert.deepEqual(lines[0], HEADER, 'the header comes first, once');
    assert.equal(lines.filter((l) => l[0] === 'NAME').length, 1);
    assert.deepEqual(podRows(lines, 'wp'), [
      ['wp', '0/1', 'Pending', '0', 'AGE'],
      ['wp', '0/1', 'Pending', '0', 'AGE'],
      ['wp', '0/1', 'Terminating', '0', 'AGE'],
      ['wp', '0/1', 'Terminating', '0', 'AGE'],
    ]);
    assert.equal(lines.length, 5, w.out());
    assert.equal(w.err(), '');
  });

  test(`kubectl ${v}: get pod X -w follows that pod only`, async (t) => {
    run(v, ['create', '-n', ns, '-f', '-'], POD('solo', { app: 'solo' }));
    const w = watch(v, ['get', 'pod', 'solo', '-n', ns, '-w'], t);
    await w.until('the pod', (ls) => ls.some((l) => l[0] === 'solo'));
    run(v, ['create', '-n', ns, '-f', '-'], POD('other', { app: 'solo' }));
    // a change a real cluster accepts (a replace from the manifest would drop what admission added)
    run(v, ['label', 'pod', 'solo', '-n', ns, 'stage=two']);
    await w.until('the change', (ls) => ls.filter((l) => l[0] === 'solo').length >= 2);
    run(v, ['delete', 'pod', 'solo', 'other', '-n', ns]);
    await w.until('the deletion', (ls) => ls.filter((l) => l[0] === 'solo' && l[2] === 'Terminating').length >= 2, 5_000);
    await w.stop();
    const lines = w.lines();
    assert.deepEqual(lines[0], HEADER);
    assert.deepEqual(podRows(lines, 'solo'), [
      ['solo', '0/1', 'Pending', '0', 'AGE'],
      ['solo', '0/1', 'Pending', '0', 'AGE'],
      ['solo', '0/1', 'Terminating', '0', 'AGE'],
      ['solo', '0/1', 'Terminating', '0', 'AGE'],
    ]);
    assert.equal(lines.length, 5, `only the watched pod is printed:\n${w.out()}`);
    assert.equal(w.err(), '');
  });

  test(`kubectl ${v}: get pods -w -l ... --output-watch-events names each event`, async (t) => {
    run(v, ['create', '-n', ns, '-f', '-'], POD('before', { app: 'ev' }));
    const w = watch(v, ['get', 'pods', '-n', ns, '-w', '-l', 'app=ev', '--output-watch-events'], t);
    await w.until('the existing pod', (ls) => ls.some((l) => l[1] === 'before'));
    run(v, ['create', '-n', ns, '-f', '-'], POD('decoy', { app: 'other' }) + '---\n' + POD('ev', { app: 'ev' }));
    await w.until('the new pod', (ls) => ls.some((l) => l[1] === 'ev'));
    // a change a real cluster accepts (a replace from the manifest would drop what admission added)
    run(v, ['label', 'pod', 'ev', '-n', ns, 'stage=two']);
    await w.until('the change', (ls) => ls.filter((l) => l[1] === 'ev').length >= 2);
    run(v, ['delete', 'pod', 'ev', 'before', 'decoy', '-n', ns]);
    await w.until('the deletions', (ls) => ls.filter((l) => l[0] === 'DELETED').length >= 2 && ls.filter((l) => l[3] === 'Terminating').length >= 4, 5_000);
    await w.stop();
    const lines = w.lines();
    assert.deepEqual(lines[0], ['EVENT', ...HEADER]);
    assert.deepEqual(podRows(lines, 'ev', 1), [
      ['ADDED', 'ev', '0/1', 'Pending', '0', 'AGE'],
      ['MODIFIED', 'ev', '0/1', 'Pending', '0', 'AGE'],
      ['MODIFIED', 'ev', '0/1', 'Terminating', '0', 'AGE'],
      ['DELETED', 'ev', '0/1', 'Terminating', '0', 'AGE'],
    ]);
    assert.deepEqual(podRows(lines, 'before', 1), [
      ['ADDED', 'before', '0/1', 'Pending', '0', 'AGE'],
      ['MODIFIED', 'before', '0/1', 'Terminating', '0', 'AGE'],
      ['DELETED', 'before', '0/1', 'Terminating', '0', 'AGE'],
    ]);
    assert.equal(podRows(lines, 'decoy', 1).length, 0, 'the selector keeps other pods out');
    assert.equal(w.err(), '');
  });
}
