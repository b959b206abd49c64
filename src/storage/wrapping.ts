// A Backend in front of another that passes every call through to it: the base of the backends
// that change a few of the calls (storage metrics, a CRD version's converting storage), which
// override those and inherit the rest.
import type { Backend, KeyValue, ListOptions, ListResult, Watch, WatchOptions } from './interface.js';

export class WrappingBackend implements Backend {
  constructor(protected readonly inner: Backend) {}

  get name(): string {
    return this.inner.name;
  }
  open(): Promise<void> {
    return this.inner.open();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }
  revisionNow(): number | undefined {
    return this.inner.revisionNow?.();
  }
  compactedRevision(): Promise<number> {
    return this.inner.compactedRevision();
  }
  get(key: string): Promise<KeyValue | undefined> {
    return this.inner.get(key);
  }
  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.inner.list(prefix, opts);
  }
  count(prefix: string): Promise<number> {
    return this.inner.count(prefix);
  }
  create(key: string, value: Uint8Array): Promise<KeyValue> {
    return this.inner.create(key, value);
  }
  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    return this.inner.update(key, value, expectedModRevision);
  }
  delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    return this.inner.delete(key, expectedModRevision);
  }
  watch(prefix: string, opts: WatchOptions): Watch {
    return this.inner.watch(prefix, opts);
  }
  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }
  healthy(): Promise<boolean> {
    return this.inner.healthy();
  }
  sizeBytes(): number | undefined {
    return this.inner.sizeBytes?.();
  }
}
