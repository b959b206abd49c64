// The controller manager: leader election on a Lease, shared informers, and the start of each
// enabled controller, as kube-controller-manager does. It is a client of the API server like any
// other, over HTTPS through client/.
//
// Leadership: with leader election on, controllers run only while this manager holds the Lease
// (`kube-system/kube-controller-manager` by default). kube-controller-manager exits when it
// loses the Lease; a Keelson manager embedded in `keelson server` instead stops its controllers
// and informers and campaigns again, so the server process stays up. On stop it releases the
// Lease so another manager can take over at once.

import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { InformerFactory } from '../client/informer.js';
import { runCampaign, type LeaderElector } from '../client/leaderelection.js';
import { pause } from '../client/flowcontrol.js';
import { nopLogger, type Logger } from '../client/log.js';
import { RESTClient, type RESTConfig } from '../client/rest.js';
import { EventRecorder } from '../client/events.js';
import { NamespaceController, type Namespace } from './namespace.js';
import { ServiceAccountsController } from './serviceaccounts.js';
import { DisruptionController } from './disruption.js';
import { ROOT_CA_CONFIGMAP, RootCACertPublisher } from './rootcacertpublisher.js';
import { ServiceCIDRController } from './servicecidrs.js';
import { ResourceQuotaController } from './resourcequota.js';
import { GarbageCollector } from './garbagecollector.js';
import { NamespacedPods } from './podwatch.js';
import { ServiceAccountTokenSource } from '../client/satoken.js';
import { informerOf, withClient, type ControllerContext, type ControllerDescriptor, type MetadataSourceFinder } from './context.js';

export type { ControllerContext, ControllerDescriptor } from './context.js';
import { replicaSetControllerDescriptor, replicationControllerDescriptor } from './replicaset.js';
import { deploymentControllerDescriptor } from './deployment.js';
import { daemonSetControllerDescriptor } from './daemonset.js';
import { endpointsControllerDescriptor } from './endpoints.js';
import { endpointSliceControllerDescriptor } from './endpointslice.js';
import { podGCControllerDescriptor } from './podgc.js';
import { nodeLifecycleControllerDescriptor } from './nodelifecycle.js';
import { taintEvictionControllerDescriptor } from './tainteviction.js';
import { jobControllerDescriptor } from './job.js';
import { statefulSetControllerDescriptor } from './statefulset.js';
import { cronJobControllerDescriptor } from './cronjob.js';
import { ttlAfterFinishedControllerDescriptor } from './ttlafterfinished.js';
import { pvcProtectionControllerDescriptor, pvProtectionControllerDescriptor } from './pvprotection.js';
import { persistentVolumeBinderControllerDescriptor } from './pvbinder.js';
import { ephemeralVolumeControllerDescriptor } from './ephemeral.js';
import { csrSigningControllerDescriptor, type SigningCA } from './csrsigning.js';
import { csrApprovingControllerDescriptor, csrCleanerControllerDescriptor } from './csrapproving.js';
import { TokensController, SERVICE_ACCOUNT_TOKEN_TYPE, type LegacyTokenGenerator } from './tokens.js';
import { defaultControllerManagerOptions, isControllerEnabled, KNOWN_CONTROLLERS, otherKubeController, validateControllerManagerOptions, type ControllerManagerOptions } from './options.js';

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
/** the clients that keep the manager's own credentials with --use-service-account-credentials */
const ROOT_CLIENTS = new Set(['shared-informers', 'leader-election', 'tokens-controller', 'service-account-credentials']);

export const namespaceControllerDescriptor: ControllerDescriptor = {
  name: 'namespace-controller',
  async run(ctx) {
    // the namespace controller is chatty (discovery, then a delete per resource): kube-controller-manager
    // gives its client 20 times the QPS and 100 times the burst
    const scale = { qps: 20, burst: 100 };
    await withClient(ctx, 'namespace-controller', scale, async (client) => {
      const informer = informerOf<Namespace>(ctx, NAMESPACES);
      const c = new NamespaceController({ client, informer, resyncPeriodMs: ctx.options.namespaceSyncPeriodMs, log: ctx.log });
      await c.run(ctx.options.concurrentNamespaceSyncs, ctx.signal);
    });
  },
};

export const serviceAccountControllerDescriptor: ControllerDescriptor = {
  name: 'serviceaccount-controller',
  async run(ctx) {
    await withClient(ctx, 'service-account-controller', undefined, async (client) => {
      const c = new ServiceAccountsController({
        client,
        namespaces: informerOf<any>(ctx, NAMESPACES),
        serviceAccounts: informerOf<any>(ctx, { group: '', version: 'v1', resource: 'serviceaccounts' }),
        log: ctx.log,
      });
      await c.run(1, ctx.signal);
    });
  },
};

export const rootCACertPublisherDescriptor: ControllerDescriptor = {
  name: 'root-ca-certificate-publisher-controller',
  async run(ctx) {
    const rootCA = ctx.rootCA;
    if (!rootCA) {
      ctx.log.warn('No root CA to publish: the root CA certificate publisher is not started');
      return;
    }
    await withClient(ctx, 'root-ca-cert-publisher', undefined, async (client) => {
      const c = new RootCACertPublisher({
        client,
        namespaces: informerOf<any>(ctx, NAMESPACES),
        // only the ConfigMap it keeps: Kubernetes' publisher watches every ConfigMap through the
        // shared informer, which here would cost every ConfigMap write a watch event sent to and
        // decoded by this process while no other controller reads ConfigMaps
        configMaps: informerOf<any>(ctx, { group: '', version: 'v1', resource: 'configmaps' }, {
          fieldSelector: `metadata.name=${ROOT_CA_CONFIGMAP}`,
        }),
        rootCA,
        log: ctx.log,
      });
      await c.run(1, ctx.signal);
    });
  },
};

export const disruptionControllerDescriptor: ControllerDescriptor = {
  name: 'disruption-controller',
  async run(ctx) {
    await withClient(ctx, 'disruption-controller', undefined, async (client) => {
      const c = new DisruptionController({
        client,
        informerClient: ctx.informerClient,
        pdbs: informerOf<any>(ctx, { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' }),
        // (kube-controller-manager's disruption controller records as "controllermanager")
        recorder: new EventRecorder(client, 'controllermanager', ctx.log),
        log: ctx.log,
      });
      await c.run(1, ctx.signal);
    });
  },
};

export const serviceCIDRControllerDescriptor: ControllerDescriptor = {
  name: 'service-cidr-controller',
  async run(ctx) {
    await withClient(ctx, 'service-cidrs-controller', undefined, async (client) => {
      const c = new ServiceCIDRController({
        client,
        serviceCIDRs: informerOf<any>(ctx, { group: 'networking.k8s.io', version: 'v1', resource: 'servicecidrs' }),
        ipAddresses: informerOf<any>(ctx, { group: 'networking.k8s.io', version: 'v1', resource: 'ipaddresses' }),
        log: ctx.log,
      });
      // (kube-controller-manager runs five workers)
      await c.run(5, ctx.signal);
    });
  },
};

export const serviceAccountTokenControllerDescriptor: ControllerDescriptor = {
  name: 'serviceaccount-token-controller',
  async run(ctx) {
    const generate = ctx.legacyTokenGenerator;
    if (!generate) {
      ctx.log.warn('Controller is disabled because there is no private key', { controller: 'serviceaccount-token-controller' });
      return;
    }
    await withClient(ctx, 'tokens-controller', undefined, async (client) => {
      const c = new TokensController({
        client,
        serviceAccounts: informerOf<any>(ctx, { group: '', version: 'v1', resource: 'serviceaccounts' }),
        // (the token Secrets only: every Secret's events would reach this process for nothing)
        secrets: informerOf<any>(ctx, { group: '', version: 'v1', resource: 'secrets' }, { fieldSelector: `type=${SERVICE_ACCOUNT_TOKEN_TYPE}` }),
        generate,
        rootCA: ctx.rootCA,
        log: ctx.log,
      });
      await c.run(ctx.options.concurrentSATokenSyncs, ctx.signal);
    });
  },
};

export const resourceQuotaControllerDescriptor: ControllerDescriptor = {
  name: 'resourcequota-controller',
  async run(ctx) {
    await withClient(ctx, 'resourcequota-controller', undefined, async (client) => {
      const c = new ResourceQuotaController({
        client,
        quotas: informerOf<any>(ctx, { group: '', version: 'v1', resource: 'resourcequotas' }),
        informers: ctx.informers,
        informerClient: ctx.informerClient,
        resyncPeriodMs: ctx.options.resourceQuotaSyncPeriodMs,
        log: ctx.log,
      });
      await c.run(ctx.options.concurrentResourceQuotaSyncs, ctx.signal);
    });
  },
};

export const garbageCollectorControllerDescriptor: ControllerDescriptor = {
  name: 'garbage-collector-controller',
  async run(ctx) {
    if (!ctx.options.enableGarbageCollector) {
      ctx.log.info('Garbage collector: all resource monitors will be disabled (--enable-garbage-collector=false)');
      return;
    }
    await withClient(ctx, 'generic-garbage-collector', undefined, async (client) => {
      const c = new GarbageCollector({ client, informers: ctx.informers, informerClient: ctx.informerClient, localMetadataSource: ctx.localMetadataSource, log: ctx.log });
      await c.run(ctx.options.concurrentGCSyncs, ctx.signal);
    });
  },
};

/** Every controller Keelson has, in start order. */
export const CONTROLLER_DESCRIPTORS: ControllerDescriptor[] = [
  // (kube-controller-manager starts the token controller first)
  serviceAccountTokenControllerDescriptor,
  namespaceControllerDescriptor,
  serviceAccountControllerDescriptor,
  rootCACertPublisherDescriptor,
  disruptionControllerDescriptor,
  serviceCIDRControllerDescriptor,
  resourceQuotaControllerDescriptor,
  garbageCollectorControllerDescriptor,
  endpointsControllerDescriptor,
  endpointSliceControllerDescriptor,
  replicationControllerDescriptor,
  replicaSetControllerDescriptor,
  deploymentControllerDescriptor,
  daemonSetControllerDescriptor,
  podGCControllerDescriptor,
  nodeLifecycleControllerDescriptor,
  taintEvictionControllerDescriptor,
  statefulSetControllerDescriptor,
  jobControllerDescriptor,
  cronJobControllerDescriptor,
  persistentVolumeBinderControllerDescriptor,
  pvcProtectionControllerDescriptor,
  pvProtectionControllerDescriptor,
  ephemeralVolumeControllerDescriptor,
  ttlAfterFinishedControllerDescriptor,
  csrSigningControllerDescriptor,
  csrApprovingControllerDescriptor,
  csrCleanerControllerDescriptor,
];

export interface ControllerManagerConfig {
  /** where and how to reach the API server (TLS, credentials); qps/burst/userAgent are set here */
  rest: RESTConfig;
  /** base User-Agent: `kube-controller-manager/v1.33.0+keelson.0.1.0 (linux/amd64) kubernetes/abcdef0` */
  userAgent: string;
  options?: Partial<ControllerManagerOptions>;
  log?: Logger;
  /** leader election identity (default `<hostname>_<uuid>`) */
  identity?: string;
  /** the CA bundle the root CA publisher puts in every namespace (default: rest.ca) */
  rootCA?: string;
  /** signs legacy service account tokens: without it the token controller does not run */
  legacyTokenGenerator?: LegacyTokenGenerator;
  /** the CA of each kubernetes.io signer whose approved CSRs are signed */
  signingCAs?: Record<string, SigningCA>;
  /** controllers to run (default: CONTROLLER_DESCRIPTORS filtered by --controllers) */
  descriptors?: ControllerDescriptor[];
  /**
   * the manager inside the API server's process: metadata-only informers of a resource fed from the
   * server's watch cache (APIServer.localMetadataSource), undefined for a resource to watch over HTTP
   */
  localMetadataSource?: MetadataSourceFinder;
  /**
   * called when leadership is lost, once the controllers have stopped: `keelson controller-manager`
   * exits then, as kube-controller-manager does; without it (the manager inside `keelson server`)
   * the manager campaigns again
   */
  onLostLeadership?: () => void;
}

export class ControllerManager {
  readonly options: ControllerManagerOptions;
  readonly identity: string;
  private readonly log: Logger;
  private readonly abort = new AbortController();
  private loopDone?: Promise<void>;
  private readonly clients: RESTClient[] = [];
  private readonly terms = new Set<RESTClient[]>();
  private leading = false;
  private elector?: LeaderElector;
  /** the client that makes controllers' service accounts and asks for their tokens */
  private tokenRoot?: RESTClient;
  /** the controllers started in the current term of leadership, in start order */
  private started: string[] = [];

  constructor(private readonly cfg: ControllerManagerConfig) {
    this.options = { ...defaultControllerManagerOptions(), ...(cfg.options ?? {}) };
    const errs = validateControllerManagerOptions(this.options);
    if (errs.length) throw new Error(errs.join('; '));
    this.log = cfg.log ?? nopLogger;
    this.identity = cfg.identity ?? `${hostname()}_${randomUUID()}`;
  }

  /** A client for one component, with the manager's QPS/burst (times `scale`). */
  private client(name: string, scale: { qps?: number; burst?: number } = {}, term?: RESTClient[]): RESTClient {
    const c = new RESTClient({
      ...this.credentialsFor(name),
      userAgent: `${this.cfg.userAgent}/${name}`,
      qps: this.options.kubeAPIQPS * (scale.qps ?? 1),
      burst: this.options.kubeAPIBurst * (scale.burst ?? 1),
      timeoutMs: this.cfg.rest.timeoutMs ?? this.options.requestTimeoutMs,
    });
    (term ?? this.clients).push(c);
    return c;
  }

  /**
   * The connection a client named `name` uses: the manager's own credentials, or with
   * --use-service-account-credentials the tokens of the service account kube-system/<name>
   * (made when missing), except for the clients kube-controller-manager keeps on its own
   * credentials: the shared informers, leader election, and the token controller (which makes
   * the tokens the others need).
   */
  private credentialsFor(name: string): RESTConfig {
    if (!this.options.useServiceAccountCredentials || ROOT_CLIENTS.has(name)) return this.cfg.rest;
    this.tokenRoot ??= this.client('service-account-credentials');
    const { cert: _cert, key: _key, headers, execProvider: _exec, ...connection } = this.cfg.rest;
    const { Authorization: _auth, authorization: _auth2, ...others } = headers ?? {};
    return { ...connection, headers: others, execProvider: new ServiceAccountTokenSource(this.tokenRoot, 'kube-system', name, this.log) };
  }

  /** Whether this manager holds the Lease (always true without leader election once started). */
  isLeader(): boolean {
    return this.leading;
  }

  /** The controllers running now (kube-controller-manager adds a health check named after each). */
  startedControllers(): string[] {
    return [...this.started];
  }

  /** The leader election's health (kube-controller-manager's leaderElection check, 20 s of tolerance): undefined when healthy. */
  leaderElectionHealth(toleranceMs = 20_000): string | undefined {
    return this.elector?.healthCheck(toleranceMs);
  }

  /** Starts campaigning (or the controllers at once without leader election). Returns at once. */
  start(): void {
    if (this.loopDone) return;
    this.loopDone = this.loop().catch((e) => this.log.error(e, 'Controller manager stopped unexpectedly'));
  }

  /** Stops the controllers, releases the Lease, closes the clients. */
  async stop(): Promise<void> {
    this.abort.abort(new Error('controller manager stopping'));
    await this.loopDone;
    for (const c of this.clients) c.close();
    for (const t of this.terms) for (const c of t) c.close();
  }

  private async loop(): Promise<void> {
    const signal = this.abort.signal;
    if (!this.options.leaderElect) {
      this.leading = true;
      await this.runControllers(signal);
      this.leading = false;
      return;
    }
    // leadership is recorded as kube-controller-manager records it: an event on the Lease
    await runCampaign({
      client: this.client('leader-election'),
      namespace: this.options.resourceNamespace,
      name: this.options.resourceName,
      identity: this.identity,
      leaseDurationMs: this.options.leaseDurationMs,
      renewDeadlineMs: this.options.renewDeadlineMs,
      retryPeriodMs: this.options.retryPeriodMs,
      log: this.log,
      component: 'kube-controller-manager',
      lead: (leadSignal) => this.runControllers(leadSignal),
      leading: (on) => (this.leading = on),
      elector: (e) => (this.elector = e),
      onLostLeadership: this.cfg.onLostLeadership,
      lostMessage: 'leaderelection lost',
      work: 'controllers',
    }, signal);
  }

  /** Starts every enabled controller and the shared informers; resolves once all stopped. */
  private async runControllers(signal: AbortSignal): Promise<void> {
    // every request of every worker listens on this signal
    setMaxListeners(0, signal);
    // clients of this term (of leadership), closed when it ends
    const term: RESTClient[] = [];
    this.terms.add(term);
    const informerClient = this.client('shared-informers', {}, term);
    // informers resync at a random period between --min-resync-period and twice it
    const resync = Math.floor(this.options.minResyncPeriodMs * (1 + Math.random()));
    // (managed fields trimmed, as kube-controller-manager's shared and metadata informers trim them)
    const informers = new InformerFactory({ resyncPeriodMs: resync, log: this.log, trimManagedFields: true });
    const pods = new NamespacedPods(informerClient, this.log);
    const ctx: ControllerContext = {
      options: this.options,
      informers,
      informerClient,
      pods,
      clientFor: (name, scale) => this.client(name, scale, term),
      log: this.log,
      signal,
      rootCA: this.cfg.rootCA ?? (this.cfg.rest.ca === undefined ? undefined : String(this.cfg.rest.ca)),
      legacyTokenGenerator: this.cfg.legacyTokenGenerator,
      signingCAs: this.cfg.signingCAs,
      localMetadataSource: this.cfg.localMetadataSource,
    };
    const descriptors = (this.cfg.descriptors ?? CONTROLLER_DESCRIPTORS).filter((d) => isControllerEnabled(d.name, this.options.controllers));
    const runs: Promise<void>[] = [];
    this.started = [];
    for (const [i, d] of descriptors.entries()) {
      // (--controller-start-interval: kube-controller-manager's pause between two starts)
      if (i > 0 && this.options.controllerStartIntervalMs > 0) {
        await pause(this.options.controllerStartIntervalMs, signal);
        if (signal.aborted) break;
      }
      this.log.info('Starting controller', { controller: d.name });
      this.started.push(d.name);
      runs.push(d.run(ctx).catch((e) => this.log.error(e, 'Controller failed', { controller: d.name })));
    }
    const skipped = KNOWN_CONTROLLERS.filter((k) => !descriptors.some((d) => d.name === k.name)).map((k) => k.name);
    if (skipped.length) this.log.v(1).info('Controllers not started', { controllers: skipped });
    // kube-controller-manager's controllers that Keelson does not have, named in --controllers
    const absent = this.options.controllers.filter((c) => !c.startsWith('-')).map((c) => otherKubeController(c)).filter((c): c is string => c !== undefined);
    if (absent.length) this.log.warn('Controllers of kube-controller-manager that Keelson does not have were asked for and do not run', { controllers: absent });
    informers.start();
    await Promise.all(runs);
    this.started = [];
    await Promise.all([informers.stop(), pods.stop()]);
    for (const c of term) c.close();
    this.terms.delete(term);
  }
}
