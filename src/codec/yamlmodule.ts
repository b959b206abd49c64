// The `yaml` library, loaded synchronously on first use, from one place.
//
// Unbundled (the compiled modules, as the tests run them), it is Node's require of the package: its
// CommonJS build, some 70 files, which costs 40 to 100 ms to resolve and compile. In the keelson
// command's bundle (scripts/build.mjs), the direct `require('yaml')` below is one esbuild
// recognises: the library is joined into the bundle, evaluated lazily at the first call, for a few
// milliseconds. (Only a literal `require(...)` call is bundled; a require made by createRequire is
// left to Node at run time, as it was before.) Modules import yamlModule() from here, never
// `yaml` itself, so that nothing loads the package at start.
import { createRequire } from 'node:module';

export type YAMLModule = typeof import('yaml');

let loaded: YAMLModule | undefined;

/** the `yaml` module, loaded the first time */
export function yamlModule(): YAMLModule {
  // (in the bundle `require` is the bundle's own, declared by its banner; in an ES module it is undefined)
  return (loaded ??= (typeof require === 'function' ? require('yaml') : createRequire(import.meta.url)('yaml')) as YAMLModule);
}
