// The API server's identity lease, as kube-apiserver 1.33 keeps it (APIServerIdentity): a Lease in
// kube-system named `apiserver-` and the first 16 bytes of the SHA-256 of the host name in
// lower-case unpadded base32, labelled apiserver.kubernetes.io/identity=kube-apiserver and
// kubernetes.io/hostname, held by `<name>_<uuid of this process>` for 3600 s and renewed every
// 10 s. Clients read the set of these leases as the set of API servers of the cluster.
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { microTime } from '../client/leaderelection.js';
import { lostRace } from './apiservices.js';
import type { ResourceStore } from './registry/store.js';
import { base32 } from '../machinery/base32.js';

const LEASE_DURATION_SECONDS = 3600;
const RENEW_INTERVAL_MS = 10_000;

/** the lease name of the API server on this host */
export function identityLeaseName(host: string = hostname()): string {
  return `apiserver-${base32(createHash('sha256').update(host).digest().subarray(0, 16)).toLowerCase()}`;
}

export class IdentityLease {
  readonly name: string;
  readonly holder: string;
  private timer?: NodeJS.Timeout;
  private readonly host = hostname();

  constructor(
    private readonly store: ResourceStore,
    private readonly onError: (e: unknown) => void,
  ) {
    this.name = identityLeaseName(this.host);
    this.holder = `${this.name}_${randomUUID()}`;
  }

  async start(): Promise<void> {
    await this.renew();
    this.timer = setInterval(() => this.renew().catch(this.onError), RENEW_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** create the lease, or take it and renew it */
  async renew(): Promise<void> {
    const now = microTime(Date.now());
    const labels = { 'apiserver.kubernetes.io/identity': 'kube-apiserver', 'kubernetes.io/hostname': this.host };
    if (!this.store.get('kube-system', this.name)) {
      try {
        await this.store.create(
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.name, namespace: 'kube-system', labels },
            spec: { holderIdentity: this.holder, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: now },
          },
          { dryRun: false },
        );
        return;
      } catch (e) {
        if (!lostRace(e)) throw e;
      }
    }
    try {
      await this.store.guaranteedUpdate(
        'kube-system',
        this.name,
        (o) => {
          o.metadata.labels = { ...(o.metadata.labels ?? {}), ...labels };
          o.spec = { ...(o.spec ?? {}), holderIdentity: this.holder, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: now };
          return o;
        },
        { dryRun: false },
      );
    } catch (e) {
      if (!lostRace(e)) throw e;
    }
  }
}
