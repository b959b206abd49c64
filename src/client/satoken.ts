// Credentials of a service account, for a component that acts as one (kube-controller-manager's
// --use-service-account-credentials, client-go's SAControllerClientBuilder): the account is made
// in its namespace when missing, a token is asked for through the TokenRequest API with the
// component's own credentials, and a new one is asked for when 80% of its life has passed or the
// API server refuses it (401).
import type { Logger } from './log.js';
import { isAlreadyExists, isNotFound, type RESTClient } from './rest.js';
import { ResourceClient } from './resources.js';

/** the lifetime asked for (client-go asks for an hour) */
const EXPIRATION_SECONDS = 3600;

/** what RESTConfig.credentials reads: a bearer token, refreshed on demand */
export interface TokenSource {
  get(): Promise<{ token?: string }>;
  refresh(): Promise<{ token?: string }>;
}

export class ServiceAccountTokenSource implements TokenSource {
  private token?: string;
  private renewAt = 0;
  private inflight?: Promise<{ token?: string }>;

  constructor(
    /** a client with the component's own credentials (the one that may make accounts and ask for tokens) */
    private readonly root: RESTClient,
    readonly namespace: string,
    readonly name: string,
    private readonly log?: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<{ token?: string }> {
    if (this.token && this.now() < this.renewAt) return Promise.resolve({ token: this.token });
    return this.refresh();
  }

  refresh(): Promise<{ token?: string }> {
    this.inflight ??= this.request().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async request(): Promise<{ token?: string }> {
    const accounts = new ResourceClient<any>(this.root, { group: '', version: 'v1', resource: 'serviceaccounts' }, this.namespace);
    try {
      await accounts.get(this.name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      try {
        await accounts.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: this.name, namespace: this.namespace } });
        this.log?.v(2).info('Created the service account of a controller', { serviceAccount: `${this.namespace}/${this.name}` });
      } catch (e2) {
        if (!isAlreadyExists(e2)) throw e2;
      }
    }
    const started = this.now();
    const tr = await this.root.json<any>({
      method: 'POST',
      path: `${accounts.path(this.name)}/token`,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: EXPIRATION_SECONDS } },
    });
    const token = tr?.status?.token;
    if (typeof token !== 'string' || !token) throw new Error(`no token in the TokenRequest answer for service account ${this.namespace}/${this.name}`);
    const expires = Date.parse(tr.status.expirationTimestamp ?? '');
    const life = Number.isFinite(expires) ? expires - started : EXPIRATION_SECONDS * 1000;
    this.token = token;
    this.renewAt = started + Math.max(1000, life * 0.8);
    return { token };
  }
}
