// The ephemeral volume controller of kube-controller-manager (pkg/controller/volume/ephemeral,
// `ephemeral-volume-controller`, alias `ephemeral-volume`), as 1.33 behaves.
//
// A pod's generic ephemeral volume (`spec.volumes[].ephemeral.volumeClaimTemplate`) is backed by
// a PersistentVolumeClaim named `<pod name>-<volume name>` in the pod's namespace, which this
// controller makes from the template: its labels, annotations and spec, owned by the pod
// (ownerReference apiVersion v1, kind Pod, controller and blockOwnerDeletion true). The scheduler
// (VolumeBinding) and the kubelet then use it as any claim, once they have checked that the pod
// controls it; the garbage collector deletes it with the pod, once the PVC protection controller
// lets it go. A claim of that name that the pod does not control is not touched: the pod gets a
// Warning event FailedBinding (`ephemeral volume data: PVC ns/pod-data was not created for pod
// ns/pod (pod is not owner)`), and the pod is retried with backoff. Pods being deleted are
// skipped; pod updates are ignored (a pod's volumes cannot change). A deleted claim queues again
// the pods whose ephemeral volume it was, so it is made again while such a pod waits.
//
// Kubernetes' controller keeps an informer over every pod of the cluster. Here the pods are those
// not scheduled yet (field selector `spec.nodeName=`): a pod with an ephemeral volume cannot be
// scheduled before its claim exists (VolumeBinding waits for this controller), so every pod that
// goes through the scheduler is seen here, while the writes of scheduled pods (their status, the
// bulk of a cluster's pod writes) do not reach this controller. Not seen: a pod created with
// spec.nodeName already set, whose claim is then never made (its kubelet reports the claim not
// found, as it would with this controller off).

import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { EventRecorder } from '../client/events.js';
import { nopLogger, type Logger } from '../client/log.js';
import type { RESTClient } from '../client/rest.js';
import { ResourceClient, objectKey, splitKey } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import { PODS } from './podwatch.js';
import { PERSISTENT_VOLUME_CLAIMS, claimIsForPod, ephemeralClaimName } from './pvprotection.js';
import { runQueueWorkers } from './workers.js';

/** the error of a claim of the volume's name that the pod does not control (ephemeral.VolumeIsForPod) */
export function volumeIsForPodError(pod: any, pvc: any): string | undefined {
  if (claimIsForPod(pod, pvc)) return undefined;
  return `PVC ${pvc?.metadata?.namespace ?? ''}/${pvc?.metadata?.name ?? ''} was not created for pod ${pod?.metadata?.namespace ?? ''}/${pod?.metadata?.name ?? ''} (pod is not owner)`;
}

/** the claim the controller makes for a pod's ephemeral volume */
export function ephemeralClaimFor(pod: any, volume: any): any {
  const template = volume?.ephemeral?.volumeClaimTemplate ?? {};
  const md = template.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: ephemeralClaimName(pod, volume),
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid, controller: true, blockOwnerDeletion: true }],
      ...(md.annotations ? { annotations: md.annotations } : {}),
      ...(md.labels ? { labels: md.labels } : {}),
    },
    spec: template.spec ?? {},
  };
}

const hasEphemeralVolume = (pod: any): boolean => (pod?.spec?.volumes ?? []).some((v: any) => v?.ephemeral);

export interface EphemeralVolumeOptions {
  client: RESTClient;
  /** the pods not scheduled yet (spec.nodeName=) */
  pods: Informer<any>;
  pvcs: Informer<any>;
  recorder?: EventRecorder;
  log?: Logger;
}

export class EphemeralVolumeController {
  readonly queue: RateLimitingQueue<string>;
  private readonly log: Logger;
  private readonly regs: { remove(): void }[] = [];

  constructor(private readonly o: EphemeralVolumeOptions) {
    this.log = o.log ?? nopLogger;
    this.queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'ephemeral_volume');
    // (updates are ignored: the volumes of a pod cannot change, and the claim's deletion with the
    // pod is the garbage collector's)
    this.regs.push(o.pods.addEventHandler({ add: (pod) => this.enqueuePod(pod) }));
    this.regs.push(o.pvcs.addEventHandler({ delete: (d) => this.pvcDeleted(d instanceof DeletedFinalStateUnknown ? d.obj : d) }));
  }

  private enqueuePod(pod: any): void {
    if (!pod?.metadata || pod.metadata.deletionTimestamp) return;
    if (hasEphemeralVolume(pod)) this.queue.add(objectKey(pod));
  }

  /** a claim was deleted: the pods whose ephemeral volume it was need it made again */
  private pvcDeleted(pvc: any): void {
    const ns = pvc?.metadata?.namespace;
    const name = pvc?.metadata?.name;
    if (!ns || !name) return;
    for (const pod of this.o.pods.list()) {
      if (pod?.metadata?.namespace !== ns) continue;
      if ((pod.spec?.volumes ?? []).some((v: any) => v?.ephemeral && ephemeralClaimName(pod, v) === name)) this.enqueuePod(pod);
    }
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    try {
      await runQueueWorkers(
        {
          name: 'ephemeral volume controller',
          log: this.log,
          queue: this.queue,
          informers: [this.o.pods, this.o.pvcs],
          sync: (key, signal) => this.syncPod(key, signal),
          onError: (key, e, signal) => {
            if (signal.aborted) return;
            this.log.error(e, `${key} failed with: ${e instanceof Error ? e.message : String(e)}`);
            this.queue.addRateLimited(key);
          },
        },
        workers,
        signal,
      );
    } finally {
      for (const r of this.regs.splice(0)) r.remove();
    }
  }

  /** one pod: a claim for each of its ephemeral volumes that has none */
  async syncPod(key: string, signal: AbortSignal): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pod = this.o.pods.getByName(namespace, name);
    if (!pod) {
      // (gone, or scheduled: a scheduled pod has its claims, else it could not have been scheduled)
      this.log.v(5).info('Ephemeral: nothing to do for pod, it is gone', { podKey: key });
      return;
    }
    if (pod.metadata?.deletionTimestamp) {
      this.log.v(5).info('Ephemeral: nothing to do for pod, it is marked for deletion', { podKey: key });
      return;
    }
    for (const v of pod.spec?.volumes ?? []) {
      try {
        await this.handleVolume(pod, v, signal);
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        void this.o.recorder?.event({ kind: 'Pod', apiVersion: 'v1', metadata: pod.metadata }, 'Warning', 'FailedBinding', `ephemeral volume ${v?.name}: ${msg}`);
        throw new Error(`pod ${key}, ephemeral volume ${v?.name}: ${msg}`);
      }
    }
  }

  private async handleVolume(pod: any, v: any, signal: AbortSignal): Promise<void> {
    if (!v?.ephemeral) return;
    this.log.v(5).info('Ephemeral: checking volume', { volumeName: v.name });
    const claimName = ephemeralClaimName(pod, v);
    const existing = this.o.pvcs.getByName(pod.metadata.namespace, claimName);
    if (existing) {
      const err = volumeIsForPodError(pod, existing);
      if (err) throw new Error(err);
      this.log.v(5).info('Ephemeral: PVC already created', { volumeName: v.name, PVC: objectKey(existing) });
      return;
    }
    try {
      await new ResourceClient<any>(this.o.client, PERSISTENT_VOLUME_CLAIMS, pod.metadata.namespace).create(ephemeralClaimFor(pod, v), { signal });
    } catch (e) {
      throw new Error(`create PVC ${claimName}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

export const ephemeralVolumeControllerDescriptor: ControllerDescriptor = {
  name: 'ephemeral-volume-controller',
  async run(ctx) {
    await withClient(ctx, 'ephemeral-volume-controller', undefined, async (client) => {
      const c = new EphemeralVolumeController({
        client,
        pods: informerOf<any>(ctx, PODS, { fieldSelector: 'spec.nodeName=' }),
        pvcs: informerOf<any>(ctx, PERSISTENT_VOLUME_CLAIMS),
        recorder: new EventRecorder(client, 'ephemeral_volume', ctx.log),
        log: ctx.log,
      });
      await c.run(ctx.options.concurrentEphemeralVolumeSyncs, ctx.signal);
    });
  },
};
