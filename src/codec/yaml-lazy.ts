// The `yaml` library, loaded on first use. It is the largest module of the API server's start
// (about 50 ms of the time to ready) and only YAML requests, YAML answers and config files need
// it, so the modules of the request path reach it through yaml() instead of a static import.
import { createRequire } from 'node:module';

export type YAMLModule = typeof import('yaml');

let loaded: YAMLModule | undefined;

/** the `yaml` module (its CommonJS build, loaded synchronously the first time) */
export function yaml(): YAMLModule {
  return (loaded ??= createRequire(import.meta.url)('yaml') as YAMLModule);
}
