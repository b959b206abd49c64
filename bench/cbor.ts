// CBOR codec benchmark: the typical Pod of bench/protobuf.ts encoded and decoded, beside
// JSON.stringify/JSON.parse of the same object (and beside cbor-x's generic pack/unpack, which
// does not write Kubernetes' form: text strings, no key order, no tag 22; a reference speed only);
// a 10,000-Pod list built from cached item bodies; a watch event from a cached body.
// Prints one JSON document. Run: node scripts/build.mjs && node dist/bench/cbor.js
import { pathToFileURL } from 'node:url';
import { Decoder as CborXDecoder, Encoder as CborXEncoder } from 'cbor-x';
import {
  decodeCBOR,
  decodeCBORObject,
  decodeCBORValue,
  encodeCBOR,
  encodeCBORListChunks,
  encodeCBORListFromItems,
  encodeCBORWatchEvent,
} from '../src/codec/cbor.js';
import { typicalPod } from './protobuf.js';

const POD = 'io.k8s.api.core.v1.Pod';
const POD_LIST = 'io.k8s.api.core.v1.PodList';

/**
 * Operations per second and microseconds per operation, by the wall clock and by the process's CPU
 * time (user + system, GC threads included): on a shared machine the CPU figure is the steadier.
 * The best of several rounds.
 */
function timeIt(fn: () => void, minMs = 500): { opsPerSec: number; usPerOp: number; cpuUsPerOp: number } {
  for (let i = 0; i < 3000; i++) fn(); // warm up: let the code reach its optimized tier
  let bestWall = Infinity;
  let bestCpu = Infinity;
  const rounds = 5;
  for (let r = 0; r < rounds; r++) {
    let n = 0;
    const start = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    let elapsed = 0;
    let batch = 1;
    while (elapsed < minMs / rounds) {
      for (let i = 0; i < batch; i++) fn();
      n += batch;
      batch = Math.min(batch * 2, 4096);
      elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    }
    const c = process.cpuUsage(cpu);
    bestWall = Math.min(bestWall, (elapsed * 1000) / n);
    bestCpu = Math.min(bestCpu, (c.user + c.system) / n);
  }
  return { opsPerSec: Math.round(1e6 / bestWall), usPerOp: +bestWall.toFixed(3), cpuUsPerOp: +bestCpu.toFixed(3) };
}

function once(fn: () => void, runs = 5): number {
  fn();
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    fn();
    best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e6);
  }
  return +best.toFixed(2);
}

function main(): void {
  const pod = typicalPod(1);
  const body = encodeCBOR(POD, pod);
  const json = JSON.stringify(pod);
  const jsonBuf = Buffer.from(json);
  const cborx = new CborXEncoder({ useRecords: false, mapsAsObjects: true });
  const cborxDec = new CborXDecoder({ useRecords: false, mapsAsObjects: true });
  const cborxBody = cborx.encode(pod);

  const single = {
    podCborBytes: body.length,
    podJsonBytes: jsonBuf.length,
    encodeCBOR: timeIt(() => encodeCBOR(POD, pod)),
    jsonStringify: timeIt(() => JSON.stringify(pod)),
    jsonStringifyToBuffer: timeIt(() => Buffer.from(JSON.stringify(pod))),
    decodeCBOR: timeIt(() => decodeCBOR(POD, body)),
    decodeCBORObject: timeIt(() => decodeCBORObject(POD, body)),
    decodeCBORValueSchemaless: timeIt(() => decodeCBORValue(body)),
    jsonParse: timeIt(() => JSON.parse(json)),
    jsonParseFromBuffer: timeIt(() => JSON.parse(jsonBuf.toString('utf8'))),
    reference: {
      note: "cbor-x's generic encoder and decoder on the same object: text strings, insertion order, no schema, no strict checks (not Kubernetes' form)",
      cborxBytes: cborxBody.length,
      cborxEncode: timeIt(() => cborx.encode(pod)),
      cborxDecode: timeIt(() => cborxDec.decode(cborxBody)),
    },
  };

  const N = 10000;
  const pods = Array.from({ length: N }, (_, i) => typicalPod(i));
  const items = pods.map((p) => encodeCBOR(POD, p));
  const itemJson = pods.map((p) => JSON.stringify(p));
  const listMeta = { resourceVersion: '123456' };
  const listObj = { kind: 'PodList', apiVersion: 'v1', metadata: listMeta, items: pods };
  const listJson = JSON.stringify(listObj);
  let listBody: Uint8Array = new Uint8Array(0);
  const list = {
    items: N,
    encodeItemsMs: once(() => {
      for (const p of pods) encodeCBOR(POD, p);
    }, 2),
    listFromCachedItemsMs: once(() => {
      listBody = encodeCBORListFromItems('v1', 'PodList', listMeta, items);
    }),
    listChunksFromCachedItemsMs: once(() => {
      let n = 0;
      for (const c of encodeCBORListChunks('v1', 'PodList', listMeta, items)) n += c.length;
      if (n !== listBody.length) throw new Error('chunk sizes differ');
    }),
    jsonListFromCachedItemsMs: once(() => {
      Buffer.from(`{"kind":"PodList","apiVersion":"v1","metadata":${JSON.stringify(listMeta)},"items":[${itemJson.join(',')}]}`);
    }),
    encodeWholeListMs: once(() => encodeCBOR(POD_LIST, listObj), 2),
    jsonStringifyListMs: once(() => JSON.stringify(listObj), 2),
    listCborBytes: listBody.length,
    listJsonBytes: Buffer.byteLength(listJson),
    decodeListMs: once(() => decodeCBOR(POD_LIST, listBody), 2),
    jsonParseListMs: once(() => JSON.parse(listJson), 2),
  };

  const watch = {
    watchEventFromCachedBody: timeIt(() => encodeCBORWatchEvent('MODIFIED', body)),
  };

  process.stdout.write(JSON.stringify({ benchmark: 'cbor', node: process.version, single, list, watch }, null, 2) + '\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
