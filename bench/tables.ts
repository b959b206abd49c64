// What `kubectl get` and metadata informers cost the server on a cluster of 10,000 Pods: a list
// as a Table (kubectl's Accept, `application/json;as=Table;v=v1;g=meta.k8s.io`), whole and in
// kubectl's pages of 500, beside the same list as plain JSON; the list as
// PartialObjectMetadataList in JSON and in Protobuf (client-go's metadata client asks for
// Protobuf; measured after a Protobuf list of the Pods, as on a server whose informers read
// them so); and `kubectl get pods -A` end to end. The first request of each form is reported
// apart from the median of the later ones: the first prints every row, the later ones read the
// rows the watch cache's entries keep (apiserver/encode.ts, tableRow). The
// Pods are created, then left 2.5 s, so that the cache has frozen them (held as JSON, decoded
// again when read) as on a server that has been up a while.
//
//   node dist/bench/tables.js [--pods 10000] [--reps 5] [--dir <checkout>]
//
// `--dir` runs the keelson of another checkout (built), to compare builds. Prints one JSON
// document; progress goes to stderr.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentFor, cliOption, createBenchPods, median, request, round, sleep, startKeelson, stopChild, type Target } from './common.js';

const PODS = Number(cliOption('pods') ?? 10_000);
const REPS = Number(cliOption('reps') ?? 5);
const DIR = cliOption('dir');
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

/** the first run's ms and the median of the next `reps` runs' */
async function timed(reps: number, run: () => Promise<number>): Promise<{ firstMs: number; medianMs: number }> {
  const first = await run();
  const rest: number[] = [];
  for (let i = 0; i < reps; i++) rest.push(await run());
  return { firstMs: round(first, 1), medianMs: round(median(rest), 1) };
}

async function list(t: Target, accept: string, expectRows: number): Promise<number> {
  const agent = agentFor(t, 1);
  try {
    const r = await request(t, agent, 'GET', '/api/v1/namespaces/default/pods', undefined, { accept, 'user-agent': 'kubectl/v1.32.0 (linux/amd64) kubernetes/bench' });
    if (r.status !== 200) throw new Error(`list: ${r.status}`);
    if (accept.startsWith('application/vnd.kubernetes.protobuf')) {
      if (r.body.length < expectRows * 100) throw new Error(`list: ${r.body.length} bytes of Protobuf`);
      return r.ms;
    }
    const o = JSON.parse(r.body.toString('utf8'));
    const n = o.kind === 'Table' ? o.rows.length : o.items.length;
    if (n !== expectRows) throw new Error(`list: ${n} rows, expected ${expectRows}`);
    return r.ms;
  } finally {
    agent.destroy();
  }
}

/** every page of 500 as kubectl asks for them, one after the other */
async function pages(t: Target): Promise<number> {
  const agent = agentFor(t, 1);
  let ms = 0;
  let rows = 0;
  let cont = '';
  try {
    do {
      const r = await request(t, agent, 'GET', `/api/v1/namespaces/default/pods?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, undefined, { accept: TABLE });
      if (r.status !== 200) throw new Error(`page: ${r.status}`);
      const o = JSON.parse(r.body.toString('utf8'));
      rows += o.rows.length;
      cont = o.metadata.continue ?? '';
      ms += r.ms;
    } while (cont);
  } finally {
    agent.destroy();
  }
  if (rows !== PODS) throw new Error(`pages: ${rows} rows, expected ${PODS}`);
  return ms;
}

function kubectlGet(kubeconfig: string): Promise<number> {
  const t0 = performance.now();
  const r = spawnSync('kubectl', ['get', 'pods', '-A', '--no-headers'], { env: { ...process.env, KUBECONFIG: kubeconfig }, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`kubectl get pods -A: ${r.stderr}`);
  const lines = r.stdout.trim().split('\n').length;
  if (lines < PODS) throw new Error(`kubectl get pods -A: ${lines} lines`);
  return Promise.resolve(ms);
}

const dir = mkdtempSync(join(tmpdir(), 'keelson-tables-'));
const dataDir = join(dir, 'data');
let k: Awaited<ReturnType<typeof startKeelson>> | undefined;
try {
  k = await startKeelson(dataDir, { dir: DIR, args: ['--controllers=*,-root-ca-certificate-publisher-controller'] });
  process.stderr.write(`[tables] creating ${PODS} Pods\n`);
  await createBenchPods(k.target, PODS);
  await sleep(2500);
  const t = k.target;
  // each form on a cache in the same state: the Table forms first (their first run prints the rows)
  process.stderr.write('[tables] Table lists\n');
  const table = await timed(REPS, () => list(t, TABLE, PODS));
  process.stderr.write('[tables] Table pages\n');
  const paged = await timed(Math.min(REPS, 3), () => pages(t));
  process.stderr.write('[tables] JSON lists\n');
  const json = await timed(REPS, () => list(t, 'application/json', PODS));
  process.stderr.write('[tables] metadata lists\n');
  const metadataJSON = await timed(REPS, () => list(t, 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io', PODS));
  await list(t, 'application/vnd.kubernetes.protobuf', PODS);
  const metadataProtobuf = await timed(REPS, () => list(t, 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json', PODS));
  process.stderr.write('[tables] kubectl get pods -A\n');
  const kubectl = await timed(Math.min(REPS, 3), () => kubectlGet(join(dataDir, 'kubeconfig')));
  console.log(
    JSON.stringify(
      {
        pods: PODS,
        checkout: DIR ?? '.',
        tableListWhole: table,
        tablePagesOf500: paged,
        jsonListWhole: json,
        metadataListJSON: metadataJSON,
        metadataListProtobuf: metadataProtobuf,
        kubectlGetPodsA: kubectl,
        note: 'ms; firstMs: the first request of the form, medianMs: the median of the later ones. Table: kubectl\'s Accept, includeObject=Metadata (its default). Pages: limit=500 with continue, the sum of the pages\' times. kubectl: the wall time of `kubectl get pods -A --no-headers`, its own decoding and printing included',
      },
      null,
      2,
    ),
  );
} finally {
  await stopChild(k?.proc);
  rmSync(dir, { recursive: true, force: true });
}
