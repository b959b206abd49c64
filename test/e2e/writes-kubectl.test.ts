// The kubectl write commands against one keelson server, in 1.33 and 1.27: patch (strategic,
// merge, json, and their errors), edit (EDITOR is a script that rewrites the file), replace,
// label, annotate, set image and delete. Each expectation is what the command prints against a
// Kubernetes 1.33 cluster, and what the server then holds.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync } from 'node:fs';
import { startCluster, expectStatus, type Cluster, type RawResponse, type RunResult } from './harness.js';

let c: Cluster;
const NS = 'default';
const cms = `/api/v1/namespaces/${NS}/configmaps`;
const deploys = `/apis/apps/v1/namespaces/${NS}/deployments`;

before(async () => {
  c = await startCluster();
});

after(async () => {
  await c?.stop();
});

function ok(r: RawResponse, code: number, what: string): any {
  assert.equal(r.status, code, `${what}: ${r.status} ${r.text.slice(0, 800)}`);
  return r.json();
}
async function get(path: string): Promise<any> {
  return ok(await c.raw('GET', path), 200, `GET ${path}`);
}
async function create(collection: string, obj: any): Promise<any> {
  return ok(await c.raw('POST', collection, { body: obj }), 201, `POST ${collection}`);
}
function run(r: RunResult): { code: number; stdout: string; stderr: string } {
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}
const managerOf = (o: any, name: string) => o.metadata.managedFields?.find((m: any) => m.manager === name);
const cm = (name: string, data: Record<string, string> = { a: '1' }, extra: any = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data });
const DEPLOYMENT = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx:1' }, { name: 'side', image: 'busybox:1' }] } } },
});

for (const v of ['1.33', '1.27']) {
  const tag = v.replace('.', '');
  describe(`kubectl ${v}`, () => {
    test('patch: strategic, merge and json; the field manager is kubectl-patch', async () => {
      await create(deploys, DEPLOYMENT(`kp-${tag}`));
      assert.deepEqual(run(c.kubectl(['patch', 'deployment', `kp-${tag}`, '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox:2"}]}}}}'], { version: v })), {
        code: 0,
        stdout: `deployment.apps/kp-${tag} patched\n`,
        stderr: '',
      });
      let d = await get(`${deploys}/kp-${tag}`);
      assert.deepEqual(
        d.spec.template.spec.containers.map((x: any) => `${x.name}=${x.image}`),
        ['web=nginx:1', 'side=busybox:2'],
      );
      assert.equal(d.metadata.generation, 2);
      assert.equal(managerOf(d, 'kubectl-patch')?.operation, 'Update');
      assert.deepEqual(run(c.kubectl(['patch', 'deployment', `kp-${tag}`, '--type', 'merge', '-p', '{"spec":{"replicas":3}}'], { version: v })), {
        code: 0,
        stdout: `deployment.apps/kp-${tag} patched\n`,
        stderr: '',
      });
      assert.deepEqual(run(c.kubectl(['patch', 'deployment', `kp-${tag}`, '--type', 'json', '-p', '[{"op":"replace","path":"/spec/replicas","value":4}]'], { version: v })), {
        code: 0,
        stdout: `deployment.apps/kp-${tag} patched\n`,
        stderr: '',
      });
      d = await get(`${deploys}/kp-${tag}`);
      assert.equal(d.spec.replicas, 4);
      assert.equal(d.metadata.generation, 4);
    });

    test('patch errors: a json patch on a missing path, a malformed patch, an invalid result', async () => {
      await create(cms, cm(`kpe-${tag}`));
      const before = await get(`${cms}/kpe-${tag}`);
      assert.deepEqual(run(c.kubectl(['patch', 'configmap', `kpe-${tag}`, '--type', 'json', '-p', '[{"op":"remove","path":"/data/nope"}]'], { version: v })), {
        code: 1,
        stdout: '',
        stderr: 'The request is invalid: the server rejected our request due to an error in our request\n',
      });
      const bad = c.kubectl(['patch', 'configmap', `kpe-${tag}`, '-p', '{"metadata":{"labels":{"bad key":"x"}}}'], { version: v });
      assert.equal(bad.code, 1);
      assert.equal(bad.stdout, '');
      assert.match(bad.stderr, new RegExp(`^The ConfigMap "kpe-${tag}" is invalid: metadata\\.labels: Invalid value: "bad key": name part must consist of`));
      assert.deepEqual(await get(`${cms}/kpe-${tag}`), before);
    });

    test('edit with an EDITOR that rewrites the file; an unchanged edit is cancelled', async () => {
      await create(cms, cm(`ke-${tag}`, { a: '1', b: '2' }));
      const script = c.file(`editor-${tag}.sh`, '#!/bin/sh\nsed -i -e \'s/^  a: "1"$/  a: edited/\' -e \'/^  b: "2"$/d\' "$1"\n');
      chmodSync(script, 0o755);
      assert.deepEqual(run(c.kubectl(['edit', 'configmap', `ke-${tag}`], { version: v, env: { KUBE_EDITOR: script } })), {
        code: 0,
        stdout: `configmap/ke-${tag} edited\n`,
        stderr: '',
      });
      const o = await get(`${cms}/ke-${tag}`);
      assert.deepEqual(o.data, { a: 'edited' });
      assert.equal(managerOf(o, 'kubectl-edit')?.operation, 'Update');
      const noop = c.file(`noop-editor-${tag}.sh`, '#!/bin/sh\nexit 0\n');
      chmodSync(noop, 0o755);
      assert.deepEqual(run(c.kubectl(['edit', 'configmap', `ke-${tag}`], { version: v, env: { KUBE_EDITOR: noop } })), {
        code: 0,
        stdout: '',
        stderr: 'Edit cancelled, no changes made.\n',
      });
      assert.equal((await get(`${cms}/ke-${tag}`)).metadata.resourceVersion, o.metadata.resourceVersion);
    });

    test('replace -f: replaced, the field manager is kubectl-replace', async () => {
      await create(cms, cm(`kr-${tag}`, { a: '1', b: '2' }));
      const f = c.file(`kr-${tag}.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kr-${tag}\ndata:\n  c: "3"\n`);
      assert.deepEqual(run(c.kubectl(['replace', '-f', f], { version: v })), { code: 0, stdout: `configmap/kr-${tag} replaced\n`, stderr: '' });
      const o = await get(`${cms}/kr-${tag}`);
      assert.deepEqual(o.data, { c: '3' });
      assert.equal(managerOf(o, 'kubectl-replace')?.operation, 'Update');
      const missing = c.file(`kr-missing-${tag}.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kr-missing-${tag}\ndata:\n  c: "3"\n`);
      assert.deepEqual(run(c.kubectl(['replace', '-f', missing], { version: v })), {
        code: 1,
        stdout: '',
        stderr: `Error from server (NotFound): error when replacing "${missing}": configmaps "kr-missing-${tag}" not found\n`,
      });
    });

    test('label and annotate: add, refuse to overwrite without --overwrite, overwrite, remove', async () => {
      await create(cms, cm(`kl-${tag}`));
      const name = `configmap/kl-${tag}`;
      // kubectl 1.27 prints the verb of annotate without its ending (a client quirk)
      const annotated = v === '1.27' ? 'annotate' : 'annotated';
      assert.deepEqual(run(c.kubectl(['label', 'configmap', `kl-${tag}`, 'tier=web'], { version: v })), { code: 0, stdout: `${name} labeled\n`, stderr: '' });
      assert.deepEqual(run(c.kubectl(['label', 'configmap', `kl-${tag}`, 'tier=db'], { version: v })), {
        code: 1,
        stdout: '',
        stderr: "error: 'tier' already has a value (web), and --overwrite is false\n",
      });
      assert.deepEqual(run(c.kubectl(['label', 'configmap', `kl-${tag}`, 'tier=db', '--overwrite'], { version: v })), { code: 0, stdout: `${name} labeled\n`, stderr: '' });
      let o = await get(`${cms}/kl-${tag}`);
      assert.deepEqual(o.metadata.labels, { tier: 'db' });
      assert.equal(managerOf(o, 'kubectl-label')?.operation, 'Update');
      assert.deepEqual(run(c.kubectl(['label', 'configmap', `kl-${tag}`, 'tier-'], { version: v })), { code: 0, stdout: `${name} unlabeled\n`, stderr: '' });
      assert.deepEqual(run(c.kubectl(['annotate', 'configmap', `kl-${tag}`, 'note=hello world'], { version: v })), { code: 0, stdout: `${name} ${annotated}\n`, stderr: '' });
      o = await get(`${cms}/kl-${tag}`);
      assert.equal(o.metadata.labels, undefined);
      assert.deepEqual(o.metadata.annotations, { note: 'hello world' });
      assert.equal(managerOf(o, 'kubectl-annotate')?.operation, 'Update');
      assert.deepEqual(run(c.kubectl(['annotate', 'configmap', `kl-${tag}`, 'note-'], { version: v })), { code: 0, stdout: `${name} ${annotated}\n`, stderr: '' });
      assert.equal((await get(`${cms}/kl-${tag}`)).metadata.annotations, undefined);
      const inv = c.kubectl(['label', 'configmap', `kl-${tag}`, 'ok=bad value!'], { version: v });
      assert.equal(inv.code, 1);
      assert.match(inv.stderr, /invalid label value: "ok=bad value!"/);
    });

    test('set image: one container changes, the generation moves, the field manager is kubectl-set', async () => {
      await create(deploys, DEPLOYMENT(`ks-${tag}`));
      assert.deepEqual(run(c.kubectl(['set', 'image', `deployment/ks-${tag}`, 'web=nginx:2'], { version: v })), {
        code: 0,
        stdout: `deployment.apps/ks-${tag} image updated\n`,
        stderr: '',
      });
      const d = await get(`${deploys}/ks-${tag}`);
      assert.deepEqual(
        d.spec.template.spec.containers.map((x: any) => `${x.name}=${x.image}`),
        ['web=nginx:2', 'side=busybox:1'],
      );
      assert.equal(d.metadata.generation, 2);
      assert.equal(managerOf(d, 'kubectl-set')?.operation, 'Update');
      const missing = c.kubectl(['set', 'image', `deployment/ks-${tag}`, 'nope=nginx:3'], { version: v });
      assert.equal(missing.code, 1);
      assert.equal(missing.stderr, 'error: unable to find container named "nope"\n');
    });

    test('delete: by name, a missing name, -f', async () => {
      await create(cms, cm(`kd-${tag}`));
      assert.deepEqual(run(c.kubectl(['delete', 'configmap', `kd-${tag}`], { version: v })), { code: 0, stdout: `configmap "kd-${tag}" deleted\n`, stderr: '' });
      expectStatus(await c.raw('GET', `${cms}/kd-${tag}`), 404, 'NotFound', 'deleted');
      assert.deepEqual(run(c.kubectl(['delete', 'configmap', `kd-${tag}`], { version: v })), {
        code: 1,
        stdout: '',
        stderr: `Error from server (NotFound): configmaps "kd-${tag}" not found\n`,
      });
      await create(deploys, DEPLOYMENT(`kd-${tag}`));
      const f = c.file(`kd-${tag}.yaml`, `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: kd-${tag}\n`);
      assert.deepEqual(run(c.kubectl(['delete', '-f', f], { version: v })), { code: 0, stdout: `deployment.apps "kd-${tag}" deleted\n`, stderr: '' });
    });
  });
}
