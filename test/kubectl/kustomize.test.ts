// Keelson's kustomize (`keelson patch -k DIR`) against kustomize v5 as kubectl 1.33 embeds it:
// each fixture directory is built by both, and the objects must be the same after a YAML parse
// (names with their hash suffixes included), or the error must read the same. A few results are
// also pinned here, as worked out from kustomize's source, so that the hash and the reference
// rules are checked even where no kubectl is installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { kustomizeBuild } from '../../src/kubectl/kustomize.js';
import { hashObject, encodeHashSuffix } from '../../src/kubectl/kustomize/hash.js';
import { kustomizeBase64 } from '../../src/kubectl/kustomize/generators.js';
import { tempDir } from '../tempdir.js';
import { CASES, writeCase, type KustomizeCase } from './kustomize-cases.js';

const KUBECTL = ['/usr/lib/google-cloud-sdk/bin/kubectl.1.33', '/usr/lib/google-cloud-sdk/bin/kubectl.1.32'].find((p) => existsSync(p));

type Obj = Record<string, any>;

async function build(dir: string): Promise<{ objs?: Obj[]; error?: string; warnings: string[] }> {
  const warnings: string[] = [];
  try {
    return { objs: JSON.parse(JSON.stringify(await kustomizeBuild(dir, (l) => warnings.push(l)))), warnings };
  } catch (e) {
    return { error: (e as Error).message, warnings };
  }
}

function oracle(dir: string): { objs?: Obj[]; error?: string; warnings: string[] } {
  const r = spawnSync(KUBECTL!, ['kustomize', dir], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: dir } });
  const lines = r.stderr.split('\n');
  const warnings = lines.filter((l) => l.startsWith('# Warning'));
  if (r.status !== 0) return { error: lines.filter((l) => !l.startsWith('# Warning')).join('\n').replace(/^error: /, '').trim(), warnings };
  return { objs: YAML.parseAllDocuments(r.stdout).map((d) => d.toJSON()).filter((d) => d !== null), warnings };
}

/** Go pointers printed in kustomize's messages (`&{0xc000547ba0 <nil>}`) differ from run to run */
const unpointer = (s: string | undefined) => s?.replace(/0x[0-9a-f]+/g, '0x…');

function caseDir(c: KustomizeCase): string {
  return writeCase(tempDir('keelson-kz-'), c);
}

for (const c of CASES) {
  test(`kustomize: ${c.name} (as kubectl kustomize)`, { skip: KUBECTL ? false : 'no kubectl 1.33 or 1.32 installed' }, async () => {
    const dir = caseDir(c);
    const want = oracle(dir);
    const got = await build(dir);
    assert.deepEqual(got.warnings, want.warnings);
    if (want.error !== undefined || got.error !== undefined) {
      assert.equal(unpointer(got.error), unpointer(want.error));
      return;
    }
    assert.deepEqual(got.objs, want.objs);
  });
}

// ── pinned results ───────────────────────────────────────────────────────────

test('hash suffix: sha256 of the data document, ten characters with substitutions', () => {
  assert.equal(encodeHashSuffix('0123456789abcdef'), 'gh2k456789');
  assert.equal(encodeHashSuffix('aeaeaeaeae'), 'mtmtmtmtmt');
  // kustomize looks the name up as one field named `metadata/name`: it never counts
  const a = hashObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { 'b c': '1' } });
  const b = hashObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other' }, data: { 'b c': '1' } });
  assert.equal(a, 'dtdd55fmgc');
  assert.equal(b, a);
  assert.equal(hashObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '1', b: 'x y' } }), '8h58kkhgh4');
  assert.equal(hashObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type: 'Opaque', data: { p: 'cQ==' } }), 'hb2dth72f6');
});

test('secret values are base64 in lines of 70 characters once they reach 70', () => {
  assert.equal(kustomizeBase64(Buffer.from('q')), 'cQ==');
  const long = kustomizeBase64(Buffer.from('x'.repeat(60)));
  assert.equal(long, `${'eHh4'.repeat(17)}eH\nh4${'eHh4'.repeat(2)}\n`);
});

test('generated names are hashed after the prefix and referred to by their final name', async () => {
  const dir = caseDir({
    name: 'pinned',
    files: {
      'kustomization.yaml': 'namePrefix: dev-\nnamespace: shop\nresources:\n- pod.yaml\nconfigMapGenerator:\n- name: cm\n  literals: [a=1, b="x y"]\n',
      'pod.yaml': 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox\n    envFrom:\n    - configMapRef: {name: cm}\n',
    },
  });
  const objs = await kustomizeBuild(dir);
  assert.deepEqual(
    objs.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`),
    ['ConfigMap/shop/dev-cm-8h58kkhgh4', 'Pod/shop/dev-p'],
  );
  assert.equal(objs[1]!.spec.containers[0].envFrom[0].configMapRef.name, 'dev-cm-8h58kkhgh4');
});

test('remote resources are refused without any traffic', async () => {
  const dir = caseDir({ name: 'remote', files: { 'kustomization.yaml': 'resources:\n- https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5.6.0\n' } });
  await assert.rejects(kustomizeBuild(dir), /remote resource "https:\/\/github.com\/kubernetes-sigs\/kustomize\/\/examples\/helloWorld\?ref=v5.6.0" is not supported by keelson/);
  const dir2 = caseDir({ name: 'remote git', files: { 'kustomization.yaml': 'resources:\n- git@github.com:org/repo.git//base\n' } });
  await assert.rejects(kustomizeBuild(dir2), /is not supported by keelson/);
});

test('the case directories are well-formed', () => {
  for (const c of CASES) assert.ok(Object.keys(c.files).some((f) => f.endsWith('kustomization.yaml') && join(c.dir ?? '.', 'kustomization.yaml').replace(/^\.\//, '') === f.replace(/^\.\//, '')), c.name);
});
