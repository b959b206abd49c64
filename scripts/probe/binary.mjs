// Objects of every built-in kind in Protobuf or CBOR, as the server itself encodes them, their
// bytes then flipped, inserted, cut or truncated, and sent to create, replace (and, in CBOR, to
// server-side apply). No answer may be a 5xx, every request must be answered.
import { client, everyKind, random, report } from './common.mjs';

async function probe(encoding, { port, kubeconfig, seed, count = 600 }) {
  const c = await client(port, kubeconfig);
  const { rnd, pick } = random(seed);
  const media = encoding === 'protobuf' ? 'application/vnd.kubernetes.protobuf' : 'application/cbor';
  // a Protobuf body begins with its 4-byte magic number, left whole so that the body is read as one
  const from = encoding === 'protobuf' ? 4 : 0;
  const NS = `probe-${encoding}`;
  await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  const kinds = await everyKind(NS);
  const problems = [];
  let sent = 0;
  for (let i = 0; i < count; i++) {
    const { obj, collection } = pick(kinds);
    const name = `${obj.metadata.name}-${i % 5}`;
    await c.request('POST', collection, { body: { ...obj, metadata: { ...obj.metadata, name } } });
    const encoded = await c.request('GET', `${collection}/${name}`, { headers: { accept: media } });
    if (encoded.status !== 200) continue;
    sent++;
    let b = Buffer.from(encoded.raw);
    const how = Math.floor(rnd() * 4);
    for (let k = 1 + Math.floor(rnd() * 4); k > 0; k--) {
      const at = from + Math.floor(rnd() * Math.max(1, b.length - from));
      if (how === 0) b[at] = Math.floor(rnd() * 256);
      else if (how === 1) b = Buffer.concat([b.subarray(0, at), Buffer.from([Math.floor(rnd() * 256), 0xff, 0xff, 0xff, 0x0f].slice(0, 1 + Math.floor(rnd() * 5))), b.subarray(at)]);
      else if (how === 2) b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + Math.floor(rnd() * 8))]);
      else b = b.subarray(0, at);
    }
    const type = encoding === 'cbor' ? pick([media, media, 'application/apply-patch+cbor']) : media;
    const method = type === 'application/apply-patch+cbor' ? 'PATCH' : pick(['POST', 'PUT']);
    const path = method === 'POST' ? collection : `${collection}/${name}${method === 'PATCH' ? '?fieldManager=probe' : ''}`;
    const out = await c.request(method, path, { headers: { 'content-type': type, accept: pick(['application/json', 'application/vnd.kubernetes.protobuf']) }, body: b });
    if (out.status < 0 || out.status >= 500) problems.push({ method, path, type, status: out.status, answer: out.text?.slice(0, 300), bytes: b.toString('hex').slice(0, 200) });
  }
  c.close();
  return report(encoding, { mutated: sent, problems: problems.length }, problems);
}

export const runProtobuf = (o) => probe('protobuf', o);
export const runCBOR = (o) => probe('cbor', o);
