// How the kubelet lets image pulls through (kuberuntime's image puller, with its throttled image
// service): one at a time with serializeImagePulls (the default), else at most
// maxParallelImagePulls at once (0: no limit); and with registryPullQPS (5; 0: no limit) and
// registryBurst (10) a token bucket that is tried, not waited for: a pull past it fails at once
// with "pull QPS exceeded", and the container goes through the image back-off like any failed pull.
import { TokenBucket } from '../client/flowcontrol.js';

export interface ImagePullsOptions {
  serialize: boolean;
  qps: number;
  burst: number;
  maxParallel: number;
}

export class ImagePulls {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly limiter: TokenBucket | undefined;
  private running = 0;
  private readonly slots: (() => void)[] = [];

  constructor(private readonly o: ImagePullsOptions) {
    if (o.qps > 0) this.limiter = new TokenBucket(o.qps, Math.max(1, o.burst));
  }

  /** runs `pull` when the kubelet would, or fails it as the kubelet would */
  run<T>(pull: () => Promise<T>): Promise<T> {
    const throttled = async () => {
      if (this.limiter && !this.limiter.tryAccept()) throw new Error('pull QPS exceeded');
      return pull();
    };
    if (this.o.serialize) {
      const p = this.chain.then(throttled, throttled);
      this.chain = p.catch(() => undefined);
      return p;
    }
    return this.parallel(throttled);
  }

  private async parallel<T>(pull: () => Promise<T>): Promise<T> {
    const max = this.o.maxParallel;
    if (max <= 0) return pull();
    while (this.running >= max) await new Promise<void>((r) => this.slots.push(r));
    this.running++;
    try {
      return await pull();
    } finally {
      this.running--;
      this.slots.shift()?.();
    }
  }
}
