// The root CA publisher: every active namespace holds a ConfigMap `kube-root-ca.crt` whose
// `ca.crt` is the CA bundle that verifies the API server. Pods read it through the projected
// service account volume the ServiceAccount admission plugin adds (kube-api-access-*). As in
// kube-controller-manager, the map is created when a namespace appears and put back when it is
// deleted or its data drifts.
import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import type { RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { namespaceTerminating, isMootNamespaceWrite, queueActiveNamespaces, runQueueWorkers } from './workers.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
/** the annotation kube-controller-manager writes on the map (its words: clients read it) */
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

export interface RootCACertPublisherOptions {
  client: RESTClient;
  namespaces: Informer<any>;
  configMaps: Informer<any>;
  /** the PEM bundle to publish */
  rootCA: string;
  log?: Logger;
}

export class RootCACertPublisher {
  readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'root_ca_cert_publisher');
  private readonly log: Logger;

  constructor(private readonly o: RootCACertPublisherOptions) {
    this.log = o.log ?? nopLogger;
    queueActiveNamespaces(o.namespaces, this.queue);
    const onMap = (cm: any) => {
      const obj = cm instanceof DeletedFinalStateUnknown ? cm.obj : cm;
      if (obj?.metadata?.name === ROOT_CA_CONFIGMAP && obj.metadata.namespace) this.queue.add(obj.metadata.namespace);
    };
    o.configMaps.addEventHandler({ update: (_old, cm) => onMap(cm), delete: onMap });
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    const o = this.o;
    return runQueueWorkers(
      { name: 'root CA cert publisher controller', log: this.log, queue: this.queue, informers: [o.namespaces, o.configMaps], sync: (ns, s) => this.sync(ns, s), failure: 'Publishing the root CA failed' },
      workers,
      signal,
    );
  }

  /** create or correct the ConfigMap of one namespace */
  async sync(namespace: string, signal?: AbortSignal): Promise<void> {
    const ns = this.o.namespaces.getByName('', namespace);
    if (!ns || namespaceTerminating(ns)) return;
    const client = new ResourceClient<any>(this.o.client, CONFIGMAPS, namespace);
    const cur = this.o.configMaps.getByName(namespace, ROOT_CA_CONFIGMAP);
    try {
      if (!cur) {
        await client.create(
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: ROOT_CA_CONFIGMAP, annotations: { 'kubernetes.io/description': DESCRIPTION } },
            data: { 'ca.crt': this.o.rootCA },
          },
          { signal },
        );
        return;
      }
      const data = cur.data ?? {};
      // the data and a description are ours to keep (binaryData is left alone, as Kubernetes leaves it)
      if (data['ca.crt'] === this.o.rootCA && Object.keys(data).length === 1 && cur.metadata?.annotations?.['kubernetes.io/description']) return;
      // the update is conditional on what the cache saw
      const next = structuredClone(cur);
      next.data = { 'ca.crt': this.o.rootCA };
      next.metadata.annotations = { ...(next.metadata.annotations ?? {}), 'kubernetes.io/description': DESCRIPTION };
      await client.update(next, { signal });
    } catch (e) {
      // created meanwhile, the namespace went away, or it is being deleted: nothing to do;
      // a conflict is retried from the queue with a fresher cache
      if (isMootNamespaceWrite(e)) return;
      throw e;
    }
  }
}
