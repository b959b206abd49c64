// The wiring helpers over real ResourceStores (memory backend): the reader reads the watch
// caches, the writer writes quota status and namespaces, and the default chain admits a pod whose
// attributes come from admissionAttributes, charging its quota in the store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBackend } from '../../src/storage/memory.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { ResourceStore } from '../../src/apiserver/registry/store.js';
import { strategyFor } from '../../src/apiserver/registry/strategies.js';
import { admissionAttributes, storeReader, storeWriter } from '../../src/apiserver/admission/wiring.js';
import { buildAdmissionChain } from '../../src/apiserver/admission/chain.js';
import { ADMIN, rejection } from './fake.js';

async function stores() {
  const backend = new MemoryBackend();
  await backend.open();
  const all: ResourceStore[] = [];
  for (const k of BUILTIN_KINDS) {
    if (k.virtual) continue;
    if (!['namespaces', 'pods', 'serviceaccounts', 'resourcequotas', 'limitranges', 'priorityclasses'].includes(k.resource)) continue;
    const s = new ResourceStore(k, strategyFor(k), backend);
    await s.start();
    all.push(s);
  }
  const byResource = (r: string) => all.find((s) => s.kind.resource === r)!;
  return { all, byResource };
}

async function settle(f: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!f()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('storeReader and storeWriter over the stores; the chain on a store-backed cluster', async () => {
  const { all, byResource } = await stores();
  try {
    const reader = storeReader(all);
    const writer = storeWriter(all);
    await writer.create!('', 'namespaces', '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } });
    await byResource('serviceaccounts').create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'apps' } }, { dryRun: false });
    await byResource('resourcequotas').create({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'apps' }, spec: { hard: { pods: '1' } } }, { dryRun: false });
    await settle(() => !!reader.get('', 'resourcequotas', 'apps', 'q') && !!reader.get('', 'serviceaccounts', 'apps', 'default'));
    assert.equal(reader.get('', 'namespaces', '', 'apps').metadata.name, 'apps');
    assert.deepEqual(
      reader.list('', 'serviceaccounts', 'apps').map((s) => s.metadata.name),
      ['default'],
    );
    assert.deepEqual(reader.list('', 'serviceaccounts', 'other'), []);
    assert.equal(reader.get('nope.example.com', 'things', '', 'x'), undefined);

    const chain = buildAdmissionChain({ enable: [], disable: [], reader, writer, serviceAccount: { defaultLookupAttempts: 0 } });
    const podKind = byResource('pods').kind;
    const pod = (): any => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'apps' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } });
    const warnings: string[] = [];
    const store = byResource('pods');
    const obj = pod();
    const a = admissionAttributes(podKind, { operation: 'CREATE', namespace: 'apps', name: '', object: obj, dryRun: false, user: ADMIN, warnings });
    await chain.mutate(a);
    assert.equal((obj.spec as any).serviceAccountName, 'default');
    // the validating phase charges the quota; then the object is stored
    await chain.validate(a);
    await store.create(obj, { dryRun: false });
    await settle(() => reader.get('', 'resourcequotas', 'apps', 'q')?.status?.used?.pods === '1');
    assert.deepEqual(reader.get('', 'resourcequotas', 'apps', 'q').status, { hard: { pods: '1' }, used: { pods: '1' } });
    const second = pod();
    second.metadata.name = 'two';
    const b = admissionAttributes(podKind, { operation: 'CREATE', namespace: 'apps', name: '', object: second, dryRun: false, user: ADMIN });
    await chain.mutate(b);
    const err = await rejection(() => chain.validate(b));
    assert.equal(err.message, 'pods "two" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1');
  } finally {
    for (const s of all) s.stop();
  }
});
