// Runs every compiled test file (dist/test/**/*.test.js) with Node's built-in test runner.
// Node 20's `--test` does not expand globs, so the files are listed here.
//
//   node scripts/run-tests.mjs [filter ...]                      run (the files whose path contains a filter)
//   node scripts/run-tests.mjs --record-durations [filter ...]   run, then write the files' times
//                                                                into scripts/test-durations.json
//
// The runner starts the files in the order given, `concurrency` (below) at a time. They are given
// longest first (by scripts/test-durations.json; a file not listed there counts as longest), so the
// run does not end with one long file running alone. --record-durations adds this module as a second
// reporter (the default export below), which takes each file's wall time from the runner's
// file-level test:complete event; a filtered run updates only its own files' entries.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, existsSync, readFileSync, writeFileSync, mkdtempSync, rmSync, realpathSync } from 'node:fs';
import { join, dirname, relative, sep } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);
const root = join(dirname(self), '..');
const durationsFile = join(root, 'scripts', 'test-durations.json');
const concurrency = 3; // test files at a time
const key = (file) => relative(root, file).split(sep).join('/');

// Reporter for --record-durations: one JSON line per test file, with its wall time.
export default async function* durationsReporter(source) {
  for await (const event of source) {
    const d = event.data;
    if (event.type === 'test:complete' && d.nesting === 0 && d.file && d.name === d.file) {
      yield JSON.stringify({ file: key(d.file), ms: Math.round(d.details.duration_ms), passed: d.details.passed }) + '\n';
    }
  }
}

function walk(dir, out) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

function readDurations() {
  try {
    return JSON.parse(readFileSync(durationsFile, 'utf8')).durations ?? {};
  } catch {
    return {};
  }
}

function main() {
  const argv = process.argv.slice(2);
  const record = argv.includes('--record-durations');
  const filters = argv.filter((a) => a !== '--record-durations');
  let files = walk(join(root, 'dist', 'test'), []);
  if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)));
  if (files.length === 0) {
    console.error('no test files found under dist/test');
    process.exit(1);
  }
  // Longest first; unknown (new) files before all others; ties alphabetical (sort is stable).
  const known = readDurations();
  const ms = (f) => known[key(f)] ?? Infinity;
  files.sort((a, b) => ms(b) - ms(a));

  const args = ['--test', `--test-concurrency=${concurrency}`];
  if (process.env.CI || !process.stdout.isTTY) args.push('--test-reporter=spec');
  let tmp;
  if (record) {
    tmp = mkdtempSync(join(tmpdir(), 'keelson-durations-'));
    if (args.length === 2) args.push('--test-reporter=spec');
    args.push('--test-reporter-destination=stdout', `--test-reporter=${self}`, `--test-reporter-destination=${join(tmp, 'durations.jsonl')}`);
  }
  const r = spawnSync(process.execPath, [...args, ...files], { stdio: 'inherit', cwd: root });
  if (record) {
    let lines = [];
    try {
      lines = readFileSync(join(tmp, 'durations.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    } catch {}
    rmSync(tmp, { recursive: true, force: true });
    if (lines.length === 0) {
      console.error('\nno file durations came from the run; scripts/test-durations.json is unchanged');
      process.exit(r.status || 1);
    }
    // A full run replaces the list (so removed files drop out); a filtered one updates its files.
    const durations = filters.length ? { ...readDurations() } : {};
    for (const { file, ms } of lines) durations[file] = ms;
    const sorted = Object.fromEntries(Object.entries(durations).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)));
    const failed = lines.filter((l) => !l.passed).map((l) => l.file);
    writeFileSync(
      durationsFile,
      JSON.stringify(
        {
          '//': 'Wall time (ms) of each test file in one run, longest first. scripts/run-tests.mjs starts the longest files first. Refresh with: npm run build && node scripts/run-tests.mjs --record-durations',
          recorded: new Date().toISOString().slice(0, 10),
          concurrency,
          durations: sorted,
        },
        null,
        2,
      ) + '\n',
    );
    console.error(`\nrecorded ${lines.length} file durations in ${key(durationsFile)}` +
      (failed.length ? ` (${failed.length} files failed: ${failed.join(', ')})` : ''));
  }
  process.exit(r.status ?? 1);
}

// Run unless imported as the reporter (by the test runner's process).
let isMain = false;
try {
  isMain = realpathSync(process.argv[1]) === realpathSync(self);
} catch {}
if (isMain) main();
