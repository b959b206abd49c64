// The service accounts controller: every active namespace has a `default` ServiceAccount, which
// pods use when they name none (the ServiceAccount admission plugin refuses pods whose account
// does not exist). Like kube-controller-manager's, it creates the account when a namespace
// appears and again when the account is deleted.
import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import type { RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { namespaceTerminating, isMootNamespaceWrite, queueActiveNamespaces, runQueueWorkers } from './workers.js';

const SERVICE_ACCOUNTS = { group: '', version: 'v1', resource: 'serviceaccounts' };

export interface ServiceAccountsControllerOptions {
  client: RESTClient;
  namespaces: Informer<any>;
  serviceAccounts: Informer<any>;
  /** the accounts every namespace gets */
  accounts?: string[];
  log?: Logger;
}

export class ServiceAccountsController {
  readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'serviceaccount');
  private readonly accounts: string[];
  private readonly log: Logger;

  constructor(private readonly o: ServiceAccountsControllerOptions) {
    this.accounts = o.accounts ?? ['default'];
    this.log = o.log ?? nopLogger;
    queueActiveNamespaces(o.namespaces, this.queue);
    o.serviceAccounts.addEventHandler({
      delete: (sa) => {
        const obj = sa instanceof DeletedFinalStateUnknown ? sa.obj : sa;
        const ns = obj?.metadata?.namespace;
        if (ns && this.accounts.includes(obj.metadata.name)) this.queue.add(ns);
      },
    });
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    const o = this.o;
    return runQueueWorkers(
      { name: 'service account controller', log: this.log, queue: this.queue, informers: [o.namespaces, o.serviceAccounts], sync: (ns, s) => this.sync(ns, s), failure: 'Syncing service accounts failed' },
      workers,
      signal,
    );
  }

  /** create the missing accounts of one namespace */
  async sync(namespace: string, signal?: AbortSignal): Promise<void> {
    const ns = this.o.namespaces.getByName('', namespace);
    if (!ns || namespaceTerminating(ns)) return;
    const client = new ResourceClient<any>(this.o.client, SERVICE_ACCOUNTS, namespace);
    for (const name of this.accounts) {
      if (this.o.serviceAccounts.getByName(namespace, name)) continue;
      try {
        await client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } }, { signal });
      } catch (e) {
        // created meanwhile, the namespace went away, or it is being deleted: nothing to do
        if (isMootNamespaceWrite(e)) continue;
        throw e;
      }
    }
  }
}
