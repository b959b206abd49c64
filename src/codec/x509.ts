// @peculiar/x509, loaded on first use (its ASN.1 stack costs 200-400 ms to import): parsing and
// making the certificates that the API server and the controllers handle but do not make on
// every start (certificate signing requests, their certificates).

type X509Module = typeof import('@peculiar/x509');
let x509Promise: Promise<X509Module> | undefined;

/**
 * Imports @peculiar/x509. Its dependency tsyringe insists on a Reflect metadata polyfill being
 * present; the library only stores and reads metadata through it, so a minimal one (installed
 * only if none exists) is enough.
 */
export function loadX509(): Promise<X509Module> {
  if (!x509Promise) {
    const R = Reflect as unknown as Record<string, unknown>;
    if (typeof R.getMetadata !== 'function') {
      const store = new WeakMap<object, Map<unknown, unknown>>();
      R.defineMetadata = (key: unknown, value: unknown, target: object) => {
        let m = store.get(target);
        if (!m) store.set(target, (m = new Map()));
        m.set(key, value);
      };
      R.getOwnMetadata = (key: unknown, target: object) => store.get(target)?.get(key);
      R.getMetadata = (key: unknown, target: object) => {
        for (let o: object | null = target; o; o = Object.getPrototypeOf(o) as object | null) {
          const m = store.get(o);
          if (m?.has(key)) return m.get(key);
        }
        return undefined;
      };
      R.hasMetadata = (key: unknown, target: object) => (R.getMetadata as (k: unknown, t: object) => unknown)(key, target) !== undefined;
      R.metadata = (key: unknown, value: unknown) => (target: object) => (R.defineMetadata as (k: unknown, v: unknown, t: object) => void)(key, value, target);
    }
    x509Promise = import('@peculiar/x509');
  }
  return x509Promise;
}

