// What a request on a new connection costs, as every kubectl command makes one: sequential GETs of
// one Namespace, each on a TLS connection of its own (handshake, client certificate, the request),
// timed from the client's side. Two builds side by side (`--a DIR --b DIR`, default both this
// checkout), in alternating rounds, so that the machine's pace is the same for both; medians of the
// rounds' medians. Prints one JSON document.
//
//   node dist/bench/connections.js [--a DIR] [--b DIR] [--requests 300] [--rounds 4]
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cliOption, median, percentile, round, startKeelson, stopChild, type Target } from './common.js';

const REQUESTS = Number(cliOption('requests') ?? 300);
const ROUNDS = Number(cliOption('rounds') ?? 4);
const DIRS = { a: cliOption('a'), b: cliOption('b') };

function once(t: Target): Promise<number> {
  return new Promise((res, rej) => {
    const started = process.hrtime.bigint();
    const r = https.request(
      { host: t.host, port: t.port, path: '/api/v1/namespaces/default', ca: t.tls.ca, cert: t.tls.cert, key: t.tls.key, servername: t.servername, agent: false, timeout: 10_000 },
      (resp) => {
        resp.resume();
        resp.on('end', () => (resp.statusCode === 200 ? res(Number(process.hrtime.bigint() - started) / 1e6) : rej(new Error(`status ${resp.statusCode}`))));
      },
    );
    r.on('timeout', () => r.destroy(new Error('timed out')));
    r.on('error', rej);
    r.end();
  });
}

async function roundOf(t: Target): Promise<{ p50: number; p90: number }> {
  const ms: number[] = [];
  for (let i = 0; i < REQUESTS; i++) ms.push(await once(t));
  ms.sort((x, y) => x - y);
  return { p50: round(percentile(ms, 50), 3), p90: round(percentile(ms, 90), 3) };
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), 'keelson-bench-conn-'));
  const servers: Record<'a' | 'b', Awaited<ReturnType<typeof startKeelson>> | undefined> = { a: undefined, b: undefined };
  try {
    for (const side of ['a', 'b'] as const) {
      servers[side] = await startKeelson(join(tmp, side), { dir: DIRS[side] ? resolve(DIRS[side]!) : undefined, args: ['--storage-backend=memory'], label: `keelson ${side}` });
    }
    // (warm-up: V8 compiles the paths of both)
    for (const side of ['a', 'b'] as const) for (let i = 0; i < 50; i++) await once(servers[side]!.target);
    const rounds: Record<'a' | 'b', { p50: number; p90: number }[]> = { a: [], b: [] };
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const);
      for (const side of order) {
        rounds[side].push(await roundOf(servers[side]!.target));
        process.stderr.write(`[connections] round ${r + 1} ${side}: p50 ${rounds[side].at(-1)!.p50} ms\n`);
      }
    }
    const p50 = { a: round(median(rounds.a.map((x) => x.p50)), 3), b: round(median(rounds.b.map((x) => x.p50)), 3) };
    const p90 = { a: round(median(rounds.a.map((x) => x.p90)), 3), b: round(median(rounds.b.map((x) => x.p90)), 3) };
    process.stdout.write(
      JSON.stringify({ requestsPerRound: REQUESTS, dirs: { a: DIRS.a ?? '.', b: DIRS.b ?? '.' }, rounds, medianP50Ms: p50, medianP90Ms: p90, bOverA: { p50: round(p50.b / p50.a, 3), p90: round(p90.b / p90.a, 3) } }, null, 2) + '\n',
    );
  } finally {
    await Promise.all([stopChild(servers.a?.proc), stopChild(servers.b?.proc)]);
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`connections: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
