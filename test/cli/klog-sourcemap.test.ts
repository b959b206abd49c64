// klog's lazy source-map lookup, and the call-site table the build writes, answer as Node's own
// SourceMap does, for every mapped position of real compiled modules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SourceMap } from 'node:module';
import { readFileSync } from 'node:fs';
import { basename, join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LazyLineMap } from '../../src/cli/klog.js';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

for (const rel of ['src/apiserver/server.js', 'src/cli/klog.js', 'src/apiserver/handlers.js']) {
  test(`the lazy lookup matches Node's SourceMap over ${rel}`, () => {
    const raw = JSON.parse(readFileSync(join(dist, rel + '.map'), 'utf8'));
    const node = new SourceMap(raw);
    const lines = readFileSync(join(dist, rel), 'utf8').split('\n');
    // look lines up out of order too: the lazy map must keep its running state right
    const order = lines.map((_, i) => i);
    order.sort((a, b) => ((a * 7919) % 997) - ((b * 7919) % 997));
    const lazy = new LazyLineMap(raw);
    // the table the build writes beside the module answers the same
    const table = LazyLineMap.fromTable(JSON.parse(readFileSync(join(dist, rel + '.lines'), 'utf8')));
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
