// What the probes share: a client of the keelson under probe, a seeded random source, and an
// object of every built-in kind (the e2e tests' fixture) with the path of its collection.
import https from 'node:https';
import YAML from 'yaml';

const dist = (p) => new URL(`../../dist/${p}`, import.meta.url).href;

/**
 * An HTTPS client of the keelson at `port` with the admin credentials of `kubeconfig`.
 * request() never throws: a connection error is status -2, no answer within 15 s status -1.
 */
export async function client(port, kubeconfig) {
  const { clientTLSFromKubeconfig } = await import(dist('bench/common.js'));
  const tls = clientTLSFromKubeconfig(kubeconfig);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 16, ca: tls.ca, cert: tls.cert, key: tls.key });
  /** body: a Buffer or string as it is, anything else as JSON */
  const request = (method, path, { headers = {}, body } = {}) =>
    new Promise((resolve) => {
      const b = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      const h = { ...headers };
      if (b) {
        h['content-length'] = b.length;
        h['content-type'] ??= 'application/json';
      }
      const t0 = Date.now();
      const r = https.request({ host: '127.0.0.1', port, method, path, headers: h, agent, servername: 'localhost' }, (res) => {
        const chunks = [];
        res.on('data', (d) => {
          chunks.push(d);
          // a watch's first bytes are its answer
          if (/[?&]watch=/.test(path)) res.destroy();
        });
        const done = () => {
          const raw = Buffer.concat(chunks);
          let json;
          try {
            json = JSON.parse(raw.toString('utf8'));
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], raw, text: raw.toString('utf8'), json, ms: Date.now() - t0 });
        };
        res.on('end', done);
        res.on('close', done);
      });
      r.setTimeout(15_000, () => {
        r.destroy();
        resolve({ status: -1, text: 'no answer in 15 s', ms: 15_000 });
      });
      r.on('error', (e) => resolve({ status: -2, text: String(e), ms: Date.now() - t0 }));
      if (b) r.write(b);
      r.end();
    });
  return { tls, agent, request, close: () => agent.destroy() };
}

/** a seeded source of random numbers in [0, 1), and a random element of a list: the fuzz test's (test/e2e/fuzzgen.ts) */
export const { random } = await import(dist('test/e2e/fuzzgen.js'));

/** the model of a collection's history and of what its watches and lists show (test/e2e/consistency.ts) */
export const consistency = () => import(dist('test/e2e/consistency.js'));

const PLURALS = { Endpoints: 'endpoints', NetworkPolicy: 'networkpolicies', Ingress: 'ingresses', IngressClass: 'ingressclasses', PriorityClass: 'priorityclasses', StorageClass: 'storageclasses', PodDisruptionBudget: 'poddisruptionbudgets', EndpointSlice: 'endpointslices', CSIStorageCapacity: 'csistoragecapacities' };

/** an object of every built-in kind but Namespace (namespaced ones in `ns`), each with its collection's path */
export async function everyKind(ns) {
  const { everyKindManifest, certificateRequestPEM } = await import(dist('test/e2e/every-kind.js'));
  const docs = YAML.parseAllDocuments(everyKindManifest(ns, 'probe=1', certificateRequestPEM()))
    .map((d) => d.toJSON())
    .filter((d) => d && d.kind !== 'Namespace');
  return docs.map((obj) => {
    const [g, v] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
    const collection = `${g ? `/apis/${g}/${v}` : `/api/${v}`}${obj.metadata.namespace !== undefined ? `/namespaces/${ns}` : ''}/${PLURALS[obj.kind] ?? `${obj.kind.toLowerCase()}s`}`;
    return { obj, collection };
  });
}

/** prints the first problems found, one JSON line each */
export function report(name, summary, problems) {
  console.log(`${name}: ${JSON.stringify(summary)}`);
  for (const p of problems.slice(0, 20)) console.log(`  ${JSON.stringify(p).slice(0, 800)}`);
  return { problems: problems.length };
}
