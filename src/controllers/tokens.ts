// The service account token controller (kube-controller-manager's serviceaccount-token-controller):
// a Secret of type kubernetes.io/service-account-token that names a ServiceAccount (annotation
// kubernetes.io/service-account.name) gets the account's legacy token (`token`, a JWT of issuer
// kubernetes/serviceaccount), the cluster CA (`ca.crt`) and its namespace (`namespace`), and the
// account's uid in the annotation kubernetes.io/service-account.uid. A token Secret whose account
// does not exist (or is another account of the same name) is deleted, and so are an account's
// token Secrets when the account is deleted.
//
// The token is signed by whoever starts the controller (TokenGenerator): the manager holds the
// service account signing key, as kube-controller-manager holds --service-account-private-key-file.
import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { runQueueWorkers } from './workers.js';

export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
const NAME_ANNOTATION = 'kubernetes.io/service-account.name';
const UID_ANNOTATION = 'kubernetes.io/service-account.uid';
const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
const SERVICE_ACCOUNTS = { group: '', version: 'v1', resource: 'serviceaccounts' };

/** signs the legacy token of a Secret of an account (serviceaccount.LegacyClaims) */
export type LegacyTokenGenerator = (sa: { namespace: string; name: string; uid: string }, secretName: string) => string;

export interface TokensControllerOptions {
  client: RESTClient;
  serviceAccounts: Informer<any>;
  /** the token Secrets only (field selector type=kubernetes.io/service-account-token) */
  secrets: Informer<any>;
  generate: LegacyTokenGenerator;
  /** the CA bundle put in ca.crt (PEM) */
  rootCA?: string;
  log?: Logger;
}

export class TokensController {
  readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'serviceaccount_tokens_secret');
  private readonly log: Logger;

  constructor(private readonly o: TokensControllerOptions) {
    this.log = o.log ?? nopLogger;
    const onSecret = (s: any) => {
      const obj = s instanceof DeletedFinalStateUnknown ? s.obj : s;
      if (obj?.type === SERVICE_ACCOUNT_TOKEN_TYPE && obj.metadata?.name) this.queue.add(`${obj.metadata.namespace}/${obj.metadata.name}`);
    };
    o.secrets.addEventHandler({ add: onSecret, update: (_old, s) => onSecret(s) });
    // an account that goes takes its token Secrets with it (syncServiceAccount)
    o.serviceAccounts.addEventHandler({
      delete: (sa) => {
        const obj = sa instanceof DeletedFinalStateUnknown ? sa.obj : sa;
        for (const s of this.tokensOf(obj)) this.queue.add(`${s.metadata.namespace}/${s.metadata.name}`);
      },
    });
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return runQueueWorkers(
      { name: 'tokens controller', log: this.log, queue: this.queue, informers: [this.o.serviceAccounts, this.o.secrets], sync: (k, s) => this.sync(k, s), failure: 'Syncing a service account token Secret failed' },
      workers,
      signal,
    );
  }

  /** the token Secrets that name an account (and its uid, where they record one) */
  private tokensOf(sa: any): any[] {
    const ns = sa?.metadata?.namespace;
    const name = sa?.metadata?.name;
    if (!ns || !name) return [];
    return this.o.secrets.list().filter((s) => {
      const a = s.metadata?.annotations ?? {};
      return s.metadata?.namespace === ns && a[NAME_ANNOTATION] === name && (!a[UID_ANNOTATION] || a[UID_ANNOTATION] === sa.metadata.uid);
    });
  }

  /** syncSecret: delete a token Secret without its account, fill in one with it */
  async sync(key: string, signal?: AbortSignal): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const secret = this.o.secrets.getByName(ns, name);
    if (!secret || secret.type !== SERVICE_ACCOUNT_TOKEN_TYPE) return;
    const ann = secret.metadata?.annotations ?? {};
    const saName: string | undefined = ann[NAME_ANNOTATION];
    const saUID: string | undefined = ann[UID_ANNOTATION];
    const secrets = new ResourceClient<any>(this.o.client, SECRETS, ns);
    let sa = saName ? this.o.serviceAccounts.getByName(ns, saName) : undefined;
    if (saName && !sa) {
      // (not in the cache yet, perhaps: asked of the server before the Secret goes)
      try {
        sa = await new ResourceClient<any>(this.o.client, SERVICE_ACCOUNTS, ns).get(saName, { signal });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    try {
      if (!sa || (saUID && sa.metadata?.uid !== saUID)) {
        this.log.v(4).info('The service account of a token Secret does not exist, deleting the token', { secret: key });
        await secrets.delete(name, { preconditions: { uid: secret.metadata.uid }, signal });
        return;
      }
      const data: Record<string, string> = { ...(secret.data ?? {}) };
      const ca = this.o.rootCA ? Buffer.from(this.o.rootCA).toString('base64') : undefined;
      const needsCA = ca !== undefined && data['ca.crt'] !== ca;
      const needsNamespace = !data.namespace;
      const needsToken = !data.token;
      if (!needsCA && !needsNamespace && !needsToken) return;
      if (needsCA) data['ca.crt'] = ca!;
      if (needsNamespace) data.namespace = Buffer.from(ns).toString('base64');
      if (needsToken) data.token = Buffer.from(this.o.generate({ namespace: ns, name: sa.metadata.name, uid: sa.metadata.uid }, name)).toString('base64');
      const next = structuredClone(secret);
      next.data = data;
      next.metadata.annotations = { ...ann, [NAME_ANNOTATION]: sa.metadata.name, [UID_ANNOTATION]: sa.metadata.uid };
      // (conditional on what the cache saw: a conflict is retried from the queue)
      await secrets.update(next, { signal });
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
  }
}
