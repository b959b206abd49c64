// klog's lazy source-map lookup, and the index the build writes beside each map, answer as Node's
// own SourceMap does, for the mapped positions of real compiled modules and of the bundle's
// biggest chunk (where a lookup starts from the index's nearest checkpoint).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SourceMap } from 'node:module';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LazyLineMap } from '../../src/cli/klog.js';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const bundleDir = join(dist, 'bundle');
const biggestChunk = existsSync(bundleDir)
  ? readdirSync(bundleDir)
      .filter((n) => n.endsWith('.js'))
      .sort((a, b) => statSync(join(bundleDir, b)).size - statSync(join(bundleDir, a)).size)[0]
  : undefined;
const files = ['src/apiserver/server.js', 'src/cli/klog.js', 'src/apiserver/handlers.js', ...(biggestChunk ? [`bundle/${biggestChunk}`] : [])];

for (const rel of files) {
  test(`the lazy lookup matches Node's SourceMap over ${rel}`, () => {
    const raw = JSON.parse(readFileSync(join(dist, rel + '.map'), 'utf8'));
    const node = new SourceMap(raw);
    const lines = readFileSync(join(dist, rel), 'utf8').split('\n');
    // look lines up out of order too: the lazy map must keep its running state right
    // (every line of a module; a sample of a bundle chunk's hundred thousand lines)
    const step = lines.length > 20_000 ? 97 : 1;
    const order = lines.map((_, i) => i).filter((i) => i % step === 0);
    order.sort((a, b) => ((a * 7919) % 997) - ((b * 7919) % 997));
    const lazy = new LazyLineMap(raw);
    // the index the build writes beside the module answers the same
    const table = LazyLineMap.fromIndex(JSON.parse(readFileSync(join(dist, rel + '.lines'), 'utf8')));
    let compared = 0;
    for (const line of order) {
      const text = lines[line]!;
      for (let col = 0; col < text.length; col += 9) {
        const want = node.findEntry(line, col) as { generatedLine?: number; originalSource?: string; originalLine?: number };
        // Node may answer with a mapping of an earlier line when this one has none before `col`
        if (!want || want.originalSource === undefined || want.generatedLine !== line) continue;
        const got = lazy.find(line, col);
        assert.ok(got, `${rel}:${line + 1}:${col + 1} has no mapping`);
        assert.equal(got.line, want.originalLine, `${rel}:${line + 1}:${col + 1}`);
        assert.deepEqual(table.find(line, col), got, `${rel}:${line + 1}:${col + 1} from the table`);
        // Node resolves the source against the map's location; klog prints only the base name
        assert.equal(basename(got.source), basename(want.originalSource!), `${rel}:${line + 1}:${col + 1}`);
        compared++;
      }
    }
    assert.ok(compared > 100, `only ${compared} positions compared`);
  });
}
