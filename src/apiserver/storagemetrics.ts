// kube-apiserver's storage request metrics (etcd_request_duration_seconds, etcd_requests_total,
// etcd_request_errors_total) for whatever backend Keelson runs on: a backend in front of the
// real one times each get, list, count, create, update and delete and reports it under the
// operation and the group resource of the key, as the etcd3 store does (a count is
// `listWithCount` under the key prefix, as Kubernetes labels it).
//
// An explicit class, not a Proxy: every create passes through it, and a Proxy's trap costs on each
// property read.
import { ConflictError, KeyExistsError, KeyNotFoundError, type Backend, type KeyValue, type ListOptions, type ListResult } from '../storage/interface.js';
import { WrappingBackend } from '../storage/wrapping.js';
import type { APIServerMetrics } from './metrics.js';

export class MeteredBackend extends WrappingBackend {
  /** '/registry/<prefix>/' -> its group resource ("deployments.apps"), as stores declare them */
  private readonly resources = new Map<string, string>();
  /** label text by operation, then key prefix, made once each */
  private readonly labels = new Map<string, Map<string, string>>();

  constructor(
    inner: Backend,
    private readonly metrics: APIServerMetrics,
  ) {
    super(inner);
  }

  /** the group resource reported for keys under a store's prefix (the first store to declare it: core Events, not events.k8s.io's view) */
  declareResource(prefix: string, group: string, resource: string): void {
    if (!this.resources.has(prefix)) this.resources.set(prefix, group ? `${resource}.${group}` : resource);
  }

  /** the series' label text of an operation on a key (the group resource of its prefix), made once per prefix */
  private labelsOf(op: string, key: string): string {
    let byPrefix = this.labels.get(op);
    if (byPrefix === undefined) this.labels.set(op, (byPrefix = new Map()));
    // '/registry/<resource>/...' for built-in kinds, '/registry/<group>/<resource>/...' for custom ones
    const end = key.indexOf('/', 10);
    let prefix = end < 0 ? key : key.slice(0, end + 1);
    let l = byPrefix.get(prefix);
    if (l !== undefined) return l;
    let resource = this.resources.get(prefix);
    if (resource === undefined && end >= 0) {
      const next = key.indexOf('/', end + 1);
      if (next >= 0) {
        prefix = key.slice(0, next + 1);
        l = byPrefix.get(prefix);
        if (l !== undefined) return l;
        resource = this.resources.get(prefix) ?? `${key.slice(end + 1, next)}.${key.slice(10, end)}`;
      }
    }
    l = `operation="${op}",type="${resource ?? prefix}"`;
    byPrefix.set(prefix, l);
    return l;
  }

  private timed<T>(labels: string, call: () => Promise<T>): Promise<T> {
    const start = performance.now();
    return call().then(
      (v) => {
        this.metrics.storageRequest(labels, (performance.now() - start) / 1000, false);
        return v;
      },
      (e) => {
        // a compare that failed (the key exists, moved on, or is gone) is an answer, not a failed request, as on etcd
        const answered = e instanceof KeyExistsError || e instanceof ConflictError || e instanceof KeyNotFoundError;
        this.metrics.storageRequest(labels, (performance.now() - start) / 1000, !answered);
        throw e;
      },
    );
  }

  override get(key: string): Promise<KeyValue | undefined> {
    return this.timed(this.labelsOf('get', key), () => this.inner.get(key));
  }
  override list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.timed(this.labelsOf('list', prefix), () => this.inner.list(prefix, opts));
  }
  override count(prefix: string): Promise<number> {
    // Kubernetes labels a count with its key prefix, not the resource
    return this.timed(`operation="listWithCount",type="${prefix}"`, () => this.inner.count(prefix));
  }
  override create(key: string, value: Uint8Array): Promise<KeyValue> {
    return this.timed(this.labelsOf('create', key), () => this.inner.create(key, value));
  }
  override update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    return this.timed(this.labelsOf('update', key), () => this.inner.update(key, value, expectedModRevision));
  }
  override delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    return this.timed(this.labelsOf('delete', key), () => this.inner.delete(key, expectedModRevision));
  }
}
