// The `yaml` library, loaded on first use. It is the largest module of the API server's start
// (about 50 ms of the time to ready) and only YAML requests, YAML answers and config files need
// it, so the modules of the request path reach it through yaml() instead of a static import.
import { narrowBigInts } from './int64.js';
import { yamlModule, type YAMLModule } from './yamlmodule.js';

export type { YAMLModule };

/** the `yaml` module (loaded synchronously the first time: yamlmodule.ts) */
export const yaml = yamlModule;

/**
 * The first YAML document of a request body, as Kubernetes' decoder takes it (go-yaml's Unmarshal
 * reads the first document and ignores the rest, so a body ending in `---`, or holding more
 * documents, is its first one); null for an empty stream. Throws the first document's first error.
 */
export function parseFirstYAMLDocument(text: string): unknown {
  // (integers as bigints, then the safe ones as numbers: codec/int64.ts)
  const docs = yaml().parseAllDocuments(text, { uniqueKeys: false, version: '1.2', intAsBigInt: true });
  const list = Array.isArray(docs) ? docs : [];
  const first = list[0];
  if (!first) {
    const errs = (docs as { errors?: Error[] }).errors ?? [];
    if (errs.length) throw errs[0];
    return null;
  }
  if (first.errors.length) throw first.errors[0];
  return narrowBigInts(first.toJS());
}
