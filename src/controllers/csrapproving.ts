// Two more of kube-controller-manager's certificate controllers (pkg/controller/certificates):
//
// certificatesigningrequest-approving-controller (csrapproving): a pending request of the
// kubernetes.io/kube-apiserver-client-kubelet signer that is a node's client certificate
// (O=system:nodes, CN=system:node:<name>, no subject alternative names, the kubelet client
// usages) is approved when a SubjectAccessReview allows its requester to create
// certificatesigningrequests/selfnodeclient (a node asking for its own name) or
// certificatesigningrequests/nodeclient (a bootstrap token asking for any node): condition
// Approved, reason AutoApproved. Anything else is left for a person (`kubectl certificate
// approve`).
//
// certificatesigningrequest-cleaner-controller (csrcleaner): every hour (and at its start),
// requests approved, denied or failed more than an hour ago, pending for more than a day, or
// whose issued certificate has expired are deleted.
import type { Informer } from '../client/informer.js';
import { pause } from '../client/flowcontrol.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { loadX509 } from '../codec/x509.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import { parseRequest, signerRefusal, trueCondition as condition } from './csrsigning.js';
import { runQueueWorkers } from './workers.js';

const CSRS = { group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests' };
const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
const HOUR = 3600_000;

const rfc3339 = (t: number) => new Date(t).toISOString().replace(/\.\d+Z$/, 'Z');

export class CSRApprover {
  readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'certificate');
  private readonly log: Logger;

  constructor(private readonly o: { client: RESTClient; csrs: Informer<any>; log?: Logger }) {
    this.log = o.log ?? nopLogger;
    const add = (csr: any) => {
      if (csr?.metadata?.name) this.queue.add(csr.metadata.name);
    };
    o.csrs.addEventHandler({ add, update: (_old, csr) => add(csr) });
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    await runQueueWorkers({ name: 'certificate controller "csrapproving"', log: this.log, queue: this.queue, informers: [this.o.csrs], sync: (k, s) => this.sync(k, s), failure: 'Approving a CertificateSigningRequest failed' }, workers, signal);
  }

  async sync(name: string, signal: AbortSignal): Promise<void> {
    const cached = this.o.csrs.get(name);
    if (!cached || cached.spec?.signerName !== KUBELET_CLIENT) return;
    if (condition(cached, 'Approved') || condition(cached, 'Denied') || cached.status?.certificate) return;
    let req;
    try {
      req = await parseRequest(String(cached.spec?.request ?? ''));
    } catch (e) {
      throw new Error(`unable to parse csr "${name}": ${(e as Error).message}`);
    }
    // (only a node's client certificate, as its signer would issue it)
    if (signerRefusal(KUBELET_CLIENT, req, cached.spec?.usages ?? [])) return;
    const self = req.cn === cached.spec?.username;
    for (const [subresource, message] of [
      ...(self ? [['selfnodeclient', 'Auto approving self kubelet client certificate after SubjectAccessReview.']] : []),
      ['nodeclient', 'Auto approving kubelet client certificate after SubjectAccessReview.'],
    ] as [string, string][]) {
      if (!(await this.allowed(cached, subresource, signal))) continue;
      const csr = structuredClone(cached);
      const now = rfc3339(Date.now());
      csr.status ??= {};
      csr.status.conditions = [...(csr.status.conditions ?? []), { type: 'Approved', status: 'True', reason: 'AutoApproved', message, lastUpdateTime: now, lastTransitionTime: now }];
      try {
        await new ResourceClient<any>(this.o.client, CSRS).updateSubresource(csr, 'approval', { signal });
        this.log.v(2).info('Approved a kubelet client certificate request', { csr: name, subresource });
      } catch (e) {
        if (isNotFound(e) || isConflict(e)) return;
        throw e;
      }
      return;
    }
  }

  /** whether the requester may create certificatesigningrequests/<subresource> */
  private async allowed(csr: any, subresource: string, signal: AbortSignal): Promise<boolean> {
    const spec: Record<string, unknown> = {
      user: csr.spec?.username,
      uid: csr.spec?.uid,
      groups: csr.spec?.groups,
      extra: csr.spec?.extra,
      resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', verb: 'create', subresource },
    };
    const review = await this.o.client.json<any>({ method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec }, signal });
    return review?.status?.allowed === true;
  }
}

/** why a request is to be deleted now (its log words), or undefined */
export async function cleanupReason(csr: any, now: number): Promise<string | undefined> {
  const since = (c: any) => Date.parse(c?.lastUpdateTime ?? c?.lastTransitionTime ?? '') || Date.parse(csr?.metadata?.creationTimestamp ?? '');
  for (const type of ['Approved', 'Denied', 'Failed']) {
    const c = condition(csr, type);
    if (c && since(c) + HOUR < now && (type !== 'Approved' || csr.status?.certificate)) return `more than 1h0m0s old and ${type.toLowerCase()}`;
  }
  const pending = !condition(csr, 'Approved') && !condition(csr, 'Denied') && !condition(csr, 'Failed');
  if (pending && Date.parse(csr?.metadata?.creationTimestamp ?? '') + 24 * HOUR < now) return 'more than 24h0m0s old and unhandled';
  if (csr?.status?.certificate) {
    try {
      const x509 = await loadX509();
      const cert = new x509.X509Certificate(Buffer.from(csr.status.certificate, 'base64').toString('utf8'));
      if (cert.notAfter.getTime() < now) return 'its issued certificate has expired';
    } catch {
      // (a certificate that does not parse is not judged expired)
    }
  }
  return undefined;
}

export class CSRCleaner {
  private readonly log: Logger;
  constructor(private readonly o: { client: RESTClient; csrs: Informer<any>; log?: Logger; periodMs?: number }) {
    this.log = o.log ?? nopLogger;
  }

  async run(signal: AbortSignal): Promise<void> {
    if (!(await this.o.csrs.waitForSync({ signal }))) return;
    while (!signal.aborted) {
      for (const csr of this.o.csrs.list()) {
        const why = await cleanupReason(csr, Date.now());
        if (!why) continue;
        try {
          await new ResourceClient<any>(this.o.client, CSRS).delete(csr.metadata.name, { preconditions: { uid: csr.metadata.uid }, signal });
          this.log.info(`Cleaning CSR as it is ${why}.`, { csr: csr.metadata.name });
        } catch (e) {
          if (!isNotFound(e) && !isConflict(e) && !signal.aborted) this.log.error(e, 'Cleaning a CertificateSigningRequest failed', { csr: csr.metadata.name });
        }
      }
      await pause(this.o.periodMs ?? HOUR, signal);
    }
  }
}

export const csrApprovingControllerDescriptor: ControllerDescriptor = {
  name: 'certificatesigningrequest-approving-controller',
  async run(ctx) {
    await withClient(ctx, 'certificate-controller', undefined, async (client) => {
      await new CSRApprover({ client, csrs: informerOf<any>(ctx, CSRS), log: ctx.log }).run(5, ctx.signal);
    });
  },
};

export const csrCleanerControllerDescriptor: ControllerDescriptor = {
  name: 'certificatesigningrequest-cleaner-controller',
  async run(ctx) {
    await withClient(ctx, 'certificate-controller', undefined, async (client) => {
      await new CSRCleaner({ client, csrs: informerOf<any>(ctx, CSRS), log: ctx.log }).run(ctx.signal);
    });
  },
};
