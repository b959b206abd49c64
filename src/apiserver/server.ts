// The API server: an HTTPS listener, the request chain (request info, authentication,
// routing), the resource API over the generic stores, discovery, OpenAPI, version and health.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { newUUID } from '../machinery/uuid.js';
import { warningHeaderValue } from '../machinery/warning.js';
import { errors, StatusError } from '../machinery/errors.js';
import { BUILTIN_KINDS } from '../schema/kinds.js';
import type { KindDecl } from '../schema/model.js';
import type { Backend } from '../storage/interface.js';
import { Discovery } from './discovery.js';
import {
  handleCreate,
  handleDelete,
  handleDeleteCollection,
  handleGet,
  handleList,
  handleUpdate,
  handleWatch,
  handlePatch,
  methodNotAllowed,
  sendError,
  outputChoice,
  type HandlerContext,
  type Request,
} from './handlers.js';
import { Health, type HealthCheck } from './health.js';
import { ResourceStore } from './registry/store.js';
import type { EncryptionConfig } from './encryption/config.js';
import { endpointServiceResolver } from './admission/webhook.js';
import { buildAdmissionChain, type AdmissionChain } from './admission/chain.js';
import { storeReader, storeWriter } from './admission/wiring.js';
import { equivalentResolver } from './admission/equivalent.js';
import { ClusterAuthenticationTrust, type ClusterAuthenticationInfo } from './authinfo.js';
import { FlowControlConfig } from './flowcontrol.js';
import { EventExpiry } from './eventttl.js';
import { DefaultServiceCIDR } from './servicecidr.js';
import { IPAddressRepair, ServiceIPAddresses, serviceCIDRRanges } from './ipaddresses.js';
import { IdentityLease } from './identitylease.js';
import { MeteredBackend } from './storagemetrics.js';
import { markServiceAllocations, strategyFor, type ServiceAllocators } from './registry/strategies.js';
import { IPAllocator, PortAllocator } from './registry/allocator.js';
import { WatchRegistry } from './watch.js';
import { CRDManager } from './crd/manager.js';
import { withCRDStrategy } from './crd/strategy.js';
import { routeCustom } from './crd/route.js';
import { buildOpenAPI, handleOpenAPI, type OpenAPIBuild, type OpenAPIDocs } from './openapi/index.js';
import { withRemote } from './openapi/aggregated.js';
import { apiServiceStoreOf, AUTOMANAGED_LABEL, localAPIServices, servedGroupVersions, syncLocalAPIServices } from './apiservices.js';
import { CacheFollower } from './cachefollower.js';
import { APIServerMetrics, metricScope, metricVerb } from './metrics.js';
import { Aggregator, type ProxyIdentity } from './aggregator/index.js';
import { registerAggregatorMetrics } from './aggregator/metrics.js';
import { setResponseCompression } from './encode.js';
import { type Authorizer, type UserInfo } from './authz.js';
import {
  Authorization,
  forbiddenError,
  requestAttributes,
  storeAggregationWriter,
  storePolicyWriter,
  type RBACResource,
} from './rbac/index.js';
import { admitSubresourceCreate, bind, evict, handleComponentStatuses, handleVirtualCreate, type VirtualContext } from './virtual.js';
import { handlePodConnect, handleProxy, POD_CONNECT_SUBRESOURCES, PROXY_KINDS, type ConnectContext, type KubeletClientConfig } from './connect.js';
import { decodeBody, dryRunOf, fieldValidationOf, normalizeBody, readBody } from './handlers.js';
import { writeObject } from './encode.js';
import { prepareServing, SecureListener, type SecureServingOptions } from './tls.js';
import { InFlightLimiter, RequestDeadline, requestScope, requestTimeoutMs, TIMEOUT_STATUS, withStorageRequestLimit, writeTooManyRequests, type RequestScope } from './limits.js';
import { auditIDOf, authenticationFailureMessage, type Auditor, type BodyTap, type RequestAudit } from './audit/index.js';
import { createTokenRequest, hasImpersonationHeaders, impersonate, ImpersonationInternalError, JWKS_PATH, OPENID_CONFIGURATION_PATH, type ObjectReader, type RequestAuthenticator, type TokenRequestOptions } from './authn/index.js';
import { goFormatDuration } from '../machinery/gostrings.js';
import { serveDebugFlags, serveDebugPprof } from '../client/profiling.js';
import { LocalMetadataSource } from './localwatch.js';
import { MetricsServer } from './metricsserver/index.js';
import type { GroupVersionResource } from '../client/resources.js';

export type { UserInfo } from './authz.js';

/** the serving certificate, client CA bundle and TLS options of the secure port (tls.ts) */
export type TLSMaterial = SecureServingOptions;

/**
 * How long the watch cache keeps events: two compaction intervals (what storage still has).
 * With compaction off (an interval of 0 or less, as kube-apiserver reads it) storage keeps every
 * revision; the cache keeps the default interval's two, not none.
 */
function historyWindowMs(compactionIntervalMs: number): number {
  return compactionIntervalMs > 0 ? compactionIntervalMs * 2 : 2 * 5 * 60_000;
}

export interface APIServerConfig {
  backend: Backend;
  bindAddress: string;
  port: number;
  tls: TLSMaterial;
  /** history kept for watches and continue tokens; storage is compacted at this interval */
  compactionIntervalMs: number;
  livezGraceMs: number;
  shutdownDelayMs: number;
  minRequestTimeoutMs: number;
  featureGates: Map<string, boolean>;
  /** --service-cluster-ip-range and --service-node-port-range */
  serviceClusterIPRange: string;
  serviceNodePortRange: string;
  /** the address other members of the cluster reach this server at (the kubernetes Service's endpoint) */
  advertiseAddress: string;
  version: VersionInfo;
  log: Logger;
  /** the authentication chain (authn/buildAuthenticatorFromFlags); without it only client certificates of tls.clientCA authenticate */
  authenticator?: RequestAuthenticator;
  /** --authorization-mode, resolved (AlwaysAllow when absent) */
  authorizationModes?: string[];
  /** service account issuer discovery (authn/oidc.ts); absent when the issuer is not an https URL */
  issuerDiscovery?: import('./authn/index.js').IssuerDiscovery;
  /** TokenRequest issuing (serviceaccounts/<name>/token); the reader is the server's */
  tokenRequest?: Omit<TokenRequestOptions, 'reader'>;
  /** how pods/log reaches kubelets (--kubelet-client-certificate and the other --kubelet-* flags; connect.ts) */
  kubeletClient?: KubeletClientConfig;
  /** what kube-system/extension-apiserver-authentication publishes (authinfo.ts); absent: the cluster CA of tls.clientCA only */
  authenticationInfo?: ClusterAuthenticationInfo;
  /** --encryption-provider-config, loaded: encryption at rest of the resources it names */
  encryption?: EncryptionConfig;
  /** --encryption-provider-config-automatic-reload: the reload's post-start hook is reported */
  encryptionReload?: boolean;
  /** --event-ttl in milliseconds: an Event not written for this long is deleted (0 or absent: one hour) */
  eventTTLMs?: number;
  /** --enable-garbage-collector: deletes leave the orphan and foregroundDeletion finalizers for a garbage collector (default true) */
  garbageCollection?: boolean;
  /** --profiling: /debug/pprof/ (client/profiling.ts); the caller starts the heap sampling */
  profiling?: boolean;
  /** with --profiling: PUT /debug/flags/v sets the log verbosity with this (absent: /debug/flags is not served) */
  setVerbosity?: (v: number) => void;
  /** --request-timeout in milliseconds (0: none; the `timeout` parameter of a request may shorten it) */
  requestTimeoutMs?: number;
  /** --max-requests-inflight and --max-mutating-requests-inflight (0: no limit) */
  maxRequestsInFlight?: number;
  maxMutatingRequestsInFlight?: number;
  /** the audit log (--audit-policy-file with --audit-log-path); absent: nothing is audited */
  audit?: Auditor;
  /** the built-in Resource Metrics API (metricsserver/; keelson server): enabled, or disabled and its objects removed; absent: neither */
  metricsServer?: { enabled: boolean; resolutionMs: number };
  /** the aggregation layer: --enable-aggregator-routing and the front-proxy client certificate (--proxy-client-cert-file, --proxy-client-key-file) */
  aggregator?: { endpointRouting: boolean; identity?: ProxyIdentity };
  /** --enable-admission-plugins, --disable-admission-plugins and the plugins' own flags (Kubernetes' default chain when absent) */
  admission?: {
    enable: string[];
    disable: string[];
    defaultNotReadyTolerationSeconds?: number;
    defaultUnreachableTolerationSeconds?: number;
  };
}

/** the transformer of a kind's stored values (events.k8s.io Events are stored as core events, as in Kubernetes) */
function encryptionTransformer(enc: EncryptionConfig | undefined, k: KindDecl) {
  if (!enc) return undefined;
  return k.group === 'events.k8s.io' ? enc.transformerFor('', 'events') : enc.transformerFor(k.group, k.resource);
}

/** a new encryption configuration (automatic reload): every store takes its new transformer */
export function applyEncryptionConfig(stores: Iterable<ResourceStore>, enc: EncryptionConfig | undefined): void {
  for (const s of stores) s.setTransformer(encryptionTransformer(enc, s.kind));
}

export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
  [k: string]: string;
}

export interface Logger {
  info(msg: string, kv?: Record<string, unknown>): void;
  warn(msg: string, kv?: Record<string, unknown>): void;
  error(err: unknown, msg: string, kv?: Record<string, unknown>): void;
  v(level: number): { info(msg: string, kv?: Record<string, unknown>): void; enabled: boolean };
}

const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);

/**
 * An Eviction body that says it is policy/v1beta1: its apiVersion member in JSON or YAML, or the
 * Protobuf envelope's type meta (field 1, 14 bytes). Only the apiVersion: a label or annotation
 * holding that text does not count.
 */
const EVICTION_V1BETA1 = /(?:^|[\s{,])["']?apiVersion["']?\s*:\s*["']?policy\/v1beta1(?:["'\s,}]|$)|\x0a\x0epolicy\/v1beta1/m;

/**
 * Non-resource paths kube-apiserver counts in its request metrics, by the subresource label it
 * gives them: the health endpoints' root handlers (not the single checks) with their path, and the
 * OpenAPI v3 handlers of its aggregator, `openapi/v3` for the list and `openapi/v3/` for a group
 * version's document. All as GET, with empty scope and component. The objects are the series'
 * keys in APIServerMetrics.observe.
 */
const NON_RESOURCE_METRIC_LINES = new Map(['/healthz', '/livez', '/readyz', 'openapi/v3', 'openapi/v3/'].map((p) => [p, { subresource: p }]));

/** the metrics series of a non-resource request kube-apiserver counts, if it does */
function nonResourceMetricLine(path: string): { subresource: string } | undefined {
  if (path.startsWith('/openapi/v3')) return NON_RESOURCE_METRIC_LINES.get(path === '/openapi/v3' ? 'openapi/v3' : path.startsWith('/openapi/v3/') ? 'openapi/v3/' : '');
  return NON_RESOURCE_METRIC_LINES.get(path);
}

/** what the request chain carries for one request */
interface ChainState {
  scope: RequestScope;
  auditID: string;
  tap?: BodyTap;
  audit?: RequestAudit;
  /** the in-flight slot the request holds (released when its handler is done) */
  release?: () => void;
  /** what is done when the response closes, besides the in-flight count (its metrics) */
  onClose?: () => void;
  /** the request's verb as kube-apiserver's metrics and request log name it (LIST, WATCH, APPLY, ...), once routed */
  verb?: string;
}

export class APIServer {
  /** the store of each built-in group/kind in its preferred version (the first one declared) */
  readonly stores = new Map<string, ResourceStore>();
  /** every built-in store, one per group/version/kind (autoscaling/v1 and v2 HorizontalPodAutoscalers share their stored objects) */
  readonly allStores: ResourceStore[] = [];
  private readonly byGVR = new Map<string, ResourceStore>();
  private readonly virtualByGVR = new Map<string, KindDecl>();
  readonly authorization: Authorization;
  readonly authorizer: Authorizer;
  private rbacBootstrapped = false;
  private authInfo?: ClusterAuthenticationTrust;
  /** the request log's logger when -v is 3 or more (undefined: no request is logged, nothing is timed) */
  private httpLog?: { info(msg: string, kv?: Record<string, unknown>): void };
  private flowControl?: FlowControlConfig;
  private eventExpiry?: EventExpiry;
  private defaultServiceCIDR?: DefaultServiceCIDR;
  private ipAddressRepair?: IPAddressRepair;
  /** the IPAddress objects of the Services' cluster IPs (ipaddresses.ts) */
  private readonly ipAddressBook: ServiceIPAddresses;
  /** follows the automanaged APIServices of the CRDs (crd/manager.ts syncAPIServices) */
  private apiServiceKeeper?: CacheFollower;
  private identityLease?: IdentityLease;
  /** the proxying, availability and discovery of remote APIServices (aggregator/) */
  private aggregator?: Aggregator;
  /** the built-in metrics.k8s.io (metricsserver/) */
  private metricsServer?: MetricsServer;
  private crdsStarted = false;
  /** the local APIServices not yet seen Available (autoregister-completion); undefined: not yet known */
  private autoregisterWaiting?: Set<string>;
  private readonly components = new Map<string, () => Promise<{ healthy: boolean; message: string; error?: string }>>();
  private virtualCtx!: VirtualContext;
  private connectCtx!: ConnectContext;
  private readonly discovery: Discovery;
  private readonly watches = new WatchRegistry();
  private readonly health: Health;
  private readonly ctx: HandlerContext;
  private openapi?: OpenAPIBuild;
  /** `openapi` with the extension servers' documents (openapi/aggregated.ts), for the `openapi` it was made of */
  private served?: { of: OpenAPIBuild; docs: OpenAPIDocs };
  /** the kinds served from CustomResourceDefinitions (crd/) */
  private crds?: CRDManager;
  private readonly storageBackend: Backend;
  private listener?: SecureListener;
  private shuttingDown = false;
  /** /readyz fails from the signal on, while the components in the same process stop (announceShutdown) */
  private shutdownAnnounced = false;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private compactTimer?: NodeJS.Timeout;
  private lastCompactCandidate = 0;
  private bootstrapped = false;
  private readonly users = new WeakMap<TLSSocket, UserInfo | null>();
  readonly metrics = new APIServerMetrics();
  readonly kinds: KindDecl[];
  readonly serviceAllocators: ServiceAllocators;
  readonly admission: AdmissionChain;
  /** --max-requests-inflight, --max-mutating-requests-inflight */
  private readonly limiter?: InFlightLimiter;
  address = '';

  /** the request log (httplog's, at -v 3) is decided once per verbosity, not once per request */
  private refreshVerbosity(): void {
    const httpLog = this.cfg.log.v(3);
    this.httpLog = httpLog.enabled ? httpLog : undefined;
  }

  private setVerbosity(v: number): void {
    this.cfg.setVerbosity!(v);
    this.refreshVerbosity();
  }

  constructor(private readonly cfg: APIServerConfig) {
    this.refreshVerbosity();
    this.kinds = BUILTIN_KINDS;
    this.authorization = new Authorization({ modes: cfg.authorizationModes ?? ['AlwaysAllow'], nodeGetServiceAccounts: cfg.featureGates.get('KubeletServiceAccountTokenForCredentialProviders') === true });
    this.authorizer = this.authorization.authorizer;
    this.serviceAllocators = {
      ips: new IPAllocator(cfg.serviceClusterIPRange),
      ports: new PortAllocator(cfg.serviceNodePortRange),
      log: (e, msg) => cfg.log.error(e, msg),
    };
    // writes larger than etcd accepts fail as they fail on etcd, whatever the backend
    const storage = new MeteredBackend(withStorageRequestLimit(cfg.backend), this.metrics);
    this.storageBackend = storage;
    this.metrics.storageSize = () => storage.sizeBytes();
    if (cfg.maxRequestsInFlight || cfg.maxMutatingRequestsInFlight) this.limiter = new InFlightLimiter(cfg.maxRequestsInFlight ?? 0, cfg.maxMutatingRequestsInFlight ?? 0, this.metrics);
    this.metrics.setBuildInfo(cfg.version);
    this.watches.events = this.metrics;
    for (const k of this.kinds) {
      if (k.virtual) {
        this.virtualByGVR.set(`${k.group}/${k.version}/${k.resource}`, k);
        continue;
      }
      let strategy = strategyFor(k, { services: this.serviceAllocators });
      if (k.group === 'apiextensions.k8s.io' && k.kind === 'CustomResourceDefinition') strategy = withCRDStrategy(strategy);
      const store = new ResourceStore(k, strategy, storage, {}, {
        historyWindowMs: historyWindowMs(cfg.compactionIntervalMs),
        transformer: encryptionTransformer(cfg.encryption, k),
        allowUnsafeMalformedObjectDeletion: cfg.featureGates.get('AllowUnsafeMalformedObjectDeletion') === true,
        garbageCollection: cfg.garbageCollection !== false,
      });
      if (!this.stores.has(`${k.group}/${k.kind}`)) this.stores.set(`${k.group}/${k.kind}`, store);
      storage.declareResource(store.prefix, k.group, k.resource);
      this.allStores.push(store);
      this.byGVR.set(`${k.group}/${k.version}/${k.resource}`, store);
    }
    // admission: every user's write passes the chain (NamespaceLifecycle keeps content out of
    // missing and terminating namespaces); the server's own writes do not
    this.admission = buildAdmissionChain({
      enable: cfg.admission?.enable ?? [],
      disable: cfg.admission?.disable ?? [],
      defaultNotReadyTolerationSeconds: cfg.admission?.defaultNotReadyTolerationSeconds,
      defaultUnreachableTolerationSeconds: cfg.admission?.defaultUnreachableTolerationSeconds,
      reader: storeReader(this.stores.values()),
      writer: storeWriter(this.stores.values()),
      webhook: { log: cfg.log },
      authorizer: this.authorizer,
      serviceAccountNodeAudienceRestriction: cfg.featureGates.get('ServiceAccountNodeAudienceRestriction') !== false,
      kinds: () => [...this.kinds, ...(this.crds?.kinds() ?? [])],
      customReader: () => storeReader(this.crds?.stores() ?? []),
      equivalents: equivalentResolver(() => [...this.allStores, ...(this.crds?.stores() ?? [])]),
    });
    // cluster IPs come from the ServiceCIDRs and are held by IPAddress objects (ipaddresses.ts)
    this.ipAddressBook = new ServiceIPAddresses(this.store('networking.k8s.io', 'IPAddress'));
    this.serviceAllocators.ips.attach(serviceCIDRRanges(this.store('networking.k8s.io', 'ServiceCIDR')), this.ipAddressBook);
    this.discovery = new Discovery(this.kinds);
    setResponseCompression(cfg.featureGates.get('APIResponseCompression') !== false);
    this.components.set('etcd-0', async () =>
      (await cfg.backend.healthy()) ? { healthy: true, message: '{"health":"true","reason":""}' } : { healthy: false, message: '', error: 'storage is not reachable' },
    );
    this.connectCtx = { nodes: this.store('', 'Node'), endpoints: this.store('', 'Endpoints'), pods: this.store('', 'Pod'), kubelet: cfg.kubeletClient };
    this.virtualCtx = {
      authorizer: this.authorizer,
      pods: this.store('', 'Pod'),
      pdbs: this.store('policy', 'PodDisruptionBudget'),
      authenticator: cfg.authenticator,
      components: async () => {
        const out = [];
        for (const [name, probe] of [...this.components.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) out.push({ name, ...(await probe()) });
        return out;
      },
    };
    this.ctx = {
      watches: this.watches,
      minRequestTimeoutMs: cfg.minRequestTimeoutMs,
      cbor: cfg.featureGates.get('CBORServingAndStorage') === true,
      watchList: cfg.featureGates.get('WatchList') !== false,
      currentRevision: () => cfg.backend.currentRevision(),
      revisionNow: () => cfg.backend.revisionNow?.(),
      checkWrite: (w) => this.authorization.checkWrite(w),
      authorizer: () => this.authorizer,
      admission: this.admission,
    };
    const storageCheck: HealthCheck = {
      name: 'etcd',
      check: async () => ((await cfg.backend.healthy()) ? undefined : 'storage is not reachable'),
    };
    const hook = (name: string, done: () => boolean): HealthCheck => ({
      name: `poststarthook/${name}`,
      postStart: true,
      check: () => (done() ? undefined : 'not finished'),
    });
    const started = () => this.bootstrapped;
    const crdsStarted = () => this.crdsStarted;
    // kube-apiserver 1.33's checks in its order (the hooks of the parts Keelson has; requests are
    // limited as with --enable-priority-and-fairness=false, whose hook is max-in-flight-filter)
    this.health = new Health(
      [
        { name: 'ping', check: () => undefined },
        { name: 'log', check: () => undefined },
        storageCheck,
        { name: 'etcd-readiness', check: storageCheck.check, readyOnly: true },
        { name: 'informer-sync', check: () => (this.bootstrapped ? undefined : 'caches are not synced'), readyOnly: true },
        hook('start-kube-apiserver-admission-initializer', started),
        hook('generic-apiserver-start-informers', started),
        hook('max-in-flight-filter', started),
        ...(cfg.encryptionReload ? [hook('start-encryption-provider-config-automatic-reload', started)] : []),
        hook('storage-object-count-tracker-hook', started),
        hook('start-apiextensions-informers', () => this.crds !== undefined),
        hook('start-apiextensions-controllers', crdsStarted),
        hook('crd-informer-synced', crdsStarted),
        hook('start-system-namespaces-controller', started),
        hook('start-cluster-authentication-info-controller', () => this.authInfo !== undefined),
        hook('start-kube-apiserver-identity-lease-controller', () => this.identityLease !== undefined),
        hook('start-service-ip-repair-controllers', () => this.ipAddressRepair !== undefined),
        hook('rbac/bootstrap-roles', () => this.rbacBootstrapped),
        hook('scheduling/bootstrap-system-priority-classes', started),
        hook('priority-and-fairness-config-producer', () => this.flowControl?.produced === true),
        hook('bootstrap-controller', started),
        hook('start-kubernetes-service-cidr-controller', () => this.defaultServiceCIDR !== undefined),
        ...(cfg.aggregator?.identity ? [hook('aggregator-reload-proxy-client-cert', started)] : []),
        hook('start-kube-aggregator-informers', started),
        hook('apiservice-status-available-controller', started),
        hook('apiservice-registration-controller', started),
        hook('apiservice-discovery-controller', () => this.aggregator !== undefined),
        hook('kube-apiserver-autoregistration', started),
        { name: 'autoregister-completion', check: () => this.autoregisterPending(), postStart: true },
        hook('apiservice-openapi-controller', started),
        { name: 'shutdown', check: () => (this.shuttingDown || this.shutdownAnnounced ? 'process is shutting down' : undefined), readyOnly: true },
      ],
      cfg.livezGraceMs,
    );
  }

  /** the objects token checks look up: service accounts, secrets, pods, nodes */
  readonly objectReader: ObjectReader = (resource, namespace, name) => {
    const kind = { serviceaccounts: 'ServiceAccount', secrets: 'Secret', pods: 'Pod', nodes: 'Node' }[resource];
    return this.store('', kind).get(namespace, name)?.obj;
  };

  /** new serving certificates (the files of --tls-cert-file or --tls-sni-cert-key changed): new connections get them */
  reloadServingCertificates(tls: Partial<Pick<TLSMaterial, 'cert' | 'key' | 'sniCertKeys'>>): void {
    this.cfg.tls = { ...this.cfg.tls, ...tls };
    this.listener?.updateCertificates(prepareServing(this.cfg.tls));
  }

  /** a component whose health `kubectl get componentstatuses` reports (controller-manager, scheduler) */
  registerComponent(name: string, probe: () => Promise<{ healthy: boolean; message: string; error?: string }>): void {
    this.components.set(name, probe);
  }

  /** the paths GET / lists: the API's group versions (custom resources' too), health checks and the other endpoints, sorted */
  private rootPaths(): string[] {
    const paths = new Set(['/api', '/api/v1', '/apis', '/apis/', '/metrics', '/metrics/slis', '/openapi/v2', '/openapi/v3', '/openapi/v3/', '/version', ...this.health.paths()]);
    for (const gv of this.discovery.groupVersions()) {
      if (gv.group === '') continue;
      paths.add(`/apis/${gv.group}`);
      paths.add(`/apis/${gv.group}/${gv.version}`);
    }
    if (this.cfg.issuerDiscovery) {
      paths.add(OPENID_CONFIGURATION_PATH);
      paths.add(JWKS_PATH);
    }
    return [...paths].sort();
  }

  /**
   * autoregister-completion, as kube-apiserver reports it: a local APIService the server registers
   * counts once it has been seen Available; until every one has, the check fails naming those left
   */
  private autoregisterPending(): string | undefined {
    if (!this.bootstrapped) return 'not finished';
    const waiting = (this.autoregisterWaiting ??= new Set(localAPIServices(servedGroupVersions(this.kinds)).map((o) => o.metadata.name as string)));
    if (waiting.size === 0) return undefined;
    const apiServices = this.store('apiregistration.k8s.io', 'APIService');
    for (const name of [...waiting]) {
      const conditions = apiServices.get('', name)?.obj?.status?.conditions;
      if (Array.isArray(conditions) && conditions.some((c: any) => c?.type === 'Available' && c?.status === 'True')) waiting.delete(name);
    }
    return waiting.size ? `missing APIService: [${[...waiting].sort().join(' ')}]` : undefined;
  }

  /**
   * An informer source of a resource's PartialObjectMetadata straight from its watch cache, for a
   * controller in this process (localwatch.ts); undefined when no store here serves the version
   * (an aggregated API, a virtual resource): such a resource is watched over HTTP.
   */
  localMetadataSource(gvr: GroupVersionResource): LocalMetadataSource | undefined {
    if (!this.byGVR.has(`${gvr.group}/${gvr.version}/${gvr.resource}`) && !this.crds?.store(gvr.group, gvr.version, gvr.resource)) return undefined;
    return new LocalMetadataSource((g, r) => this.byGVR.get(`${g}/${gvr.version}/${r}`) ?? this.crds?.store(g, gvr.version, r), gvr);
  }

  store(group: string, kind: string): ResourceStore {
    const s = this.stores.get(`${group}/${kind}`);
    if (!s) throw new Error(`no store for ${group}/${kind}`);
    return s;
  }

  async start(): Promise<void> {
    const { cfg } = this;
    await Promise.all(this.allStores.map((s) => s.start()));
    // the allocations are the stored Services' addresses and ports (the first address, the API
    // server's own Service's, is taken by the bootstrap below; random allocation avoids the low range)
    const svcs = this.store('', 'Service');
    for (const e of svcs.cacher.list({ prefix: svcs.prefix }).items) markServiceAllocations(this.serviceAllocators, e.obj);
    await this.bootstrap();
    // the CustomResourceDefinitions stored are served before the server is ready
    this.crds = new CRDManager({
      crds: this.store('apiextensions.k8s.io', 'CustomResourceDefinition'),
      backend: this.storageBackend,
      historyWindowMs: historyWindowMs(cfg.compactionIntervalMs),
      garbageCollection: cfg.garbageCollection !== false,
      builtin: (g, r) => this.byGVR.has(`${g}/v1/${r}`) || [...this.byGVR.values()].some((st) => st.kind.group === g && st.kind.resource === r),
      onChange: () => {
        this.discovery.setCustomKinds(this.crds?.kinds() ?? []);
        if (this.openapi) this.openapi = this.buildOpenAPI();
      },
      log: cfg.log,
      apiServices: apiServiceStoreOf(this.store('apiregistration.k8s.io', 'APIService')),
      // conversion webhooks are reached as admission webhooks are (a ready endpoint of the Service)
      resolveService: endpointServiceResolver(storeReader(this.stores.values())),
    });
    await this.crds.start();
    // the CRDs' APIServices are kept continuously, as kube-aggregator's autoregistration keeps them
    const crds = this.crds;
    this.apiServiceKeeper = new CacheFollower(
      [this.store('apiregistration.k8s.io', 'APIService')],
      () => crds.syncAPIServices(),
      (e) => cfg.log.error(e, 'Keeping the APIServices of CustomResourceDefinitions failed'),
      (e) => e.obj?.metadata?.labels?.[AUTOMANAGED_LABEL] === 'true',
    );
    this.apiServiceKeeper.start();
    this.crdsStarted = true;
    // kube-system/extension-apiserver-authentication: how this server authenticates (authinfo.ts)
    const cms = this.store('', 'ConfigMap');
    this.authInfo = new ClusterAuthenticationTrust(
      {
        get: (ns, name) => cms.get(ns, name)?.obj,
        create: (obj) => cms.create(obj, { dryRun: false }),
        update: (obj) => cms.update(obj.metadata.namespace, obj.metadata.name, obj, { dryRun: false }),
      },
      cfg.authenticationInfo ?? { clientCA: typeof cfg.tls.clientCA === 'string' ? cfg.tls.clientCA : cfg.tls.clientCA?.toString('utf8') },
      (e) => cfg.log.error(e, 'Unable to write kube-system/extension-apiserver-authentication'),
    );
    await this.authInfo.start();
    // API Priority and Fairness configuration objects (flowcontrol.ts)
    this.flowControl = new FlowControlConfig(this.store('flowcontrol.apiserver.k8s.io', 'PriorityLevelConfiguration'), this.store('flowcontrol.apiserver.k8s.io', 'FlowSchema'), (e) =>
      cfg.log.error(e, 'Keeping the FlowSchemas\' Dangling conditions failed'),
    );
    await this.flowControl.start();
    // the default ServiceCIDR of --service-cluster-ip-range (servicecidr.ts)
    this.defaultServiceCIDR = new DefaultServiceCIDR(this.store('networking.k8s.io', 'ServiceCIDR'), cfg.serviceClusterIPRange.split(',').map((c) => c.trim()).filter(Boolean), (e) =>
      cfg.log.error(e, 'Keeping the default ServiceCIDR failed'),
    );
    await this.defaultServiceCIDR.start();
    // every Service's cluster IP has its IPAddress, and the allocator's IPAddresses a Service (ipaddresses.ts)
    this.ipAddressRepair = new IPAddressRepair(
      this.store('networking.k8s.io', 'IPAddress'),
      this.store('', 'Service'),
      (ip) => this.serviceAllocators.ips.contains(ip),
      cfg.log,
      this.ipAddressBook.claiming,
    );
    await this.ipAddressRepair.start();
    // this server's identity lease in kube-system (identitylease.ts)
    this.identityLease = new IdentityLease(this.store('coordination.k8s.io', 'Lease'), (e) => cfg.log.error(e, 'Renewing the API server identity lease failed'));
    await this.identityLease.start();
    // Events expire after --event-ttl (eventttl.ts)
    this.eventExpiry = new EventExpiry(this.store('', 'Event'), cfg.eventTTLMs || 60 * 60_000, (e) => cfg.log.error(e, 'Deleting expired events failed'));
    this.eventExpiry.start();
    // authorization: RBAC fed from the watch caches, the bootstrap policy reconciled, aggregation running
    const rbacStore = (r: RBACResource) => this.byGVR.get(`rbac.authorization.k8s.io/v1/${r}`)!;
    this.authorization.attach((g, r) => [...this.stores.values()].find((st) => st.kind.group === g && st.kind.resource === r), (e) =>
      this.cfg.log.error(e, 'Authorization feed failed'),
    );
    await this.authorization.bootstrap(storePolicyWriter(rbacStore), (l) => this.cfg.log.v(2).info(l));
    this.authorization.startAggregation(storeAggregationWriter(rbacStore('clusterroles')), (name, e) => this.cfg.log.error(e, 'ClusterRole aggregation failed', { name }));
    this.rbacBootstrapped = true;
    this.bootstrapped = true;
    this.openapi = this.buildOpenAPI();
    // the secure port: TLS with HTTP/2 and HTTP/1.1 (tls.ts)
    const handshakeLog = cfg.log.v(5);
    const listener = new SecureListener(
      prepareServing(cfg.tls),
      (req, res) => this.handle(req, res),
      handshakeLog.enabled ? (m) => handshakeLog.info(m) : undefined,
    );
    this.listener = listener;
    await listener.listen(cfg.port, cfg.bindAddress);
    this.address = listener.address;
    // remote APIServices: proxied, checked, in discovery (aggregator/)
    this.aggregator = new Aggregator({
      apiServices: this.store('apiregistration.k8s.io', 'APIService'),
      services: this.store('', 'Service'),
      endpoints: this.store('', 'Endpoints'),
      endpointRouting: cfg.aggregator?.endpointRouting ?? false,
      identity: cfg.aggregator?.identity,
      loopback: () => ({ host: cfg.bindAddress === '0.0.0.0' || cfg.bindAddress === '::' || cfg.bindAddress === '' ? '127.0.0.1' : cfg.bindAddress, port: cfg.port }),
      onDiscoveryChange: (remote) => this.discovery.setRemote(remote),
      metrics: registerAggregatorMetrics(this.metrics.registry, this.store('apiregistration.k8s.io', 'APIService')),
      log: cfg.log,
    });
    this.aggregator.start();
    // the built-in Resource Metrics API (metricsserver/): keelson server's metrics-server
    if (cfg.metricsServer) {
      this.metricsServer = new MetricsServer({
        ...cfg.metricsServer,
        nodes: this.store('', 'Node'),
        pods: this.store('', 'Pod'),
        apiServices: this.store('apiregistration.k8s.io', 'APIService'),
        clusterRoles: this.store('rbac.authorization.k8s.io', 'ClusterRole'),
        kubelet: cfg.kubeletClient,
        cbor: this.ctx.cbor,
        watchList: this.ctx.watchList,
        setDiscovery: (extra) => this.discovery.setExtra(extra),
        log: cfg.log,
      });
      await this.metricsServer.start();
    }
    this.scheduleCompaction();
  }

  /** the OpenAPI documents served: the server's own, and the extension servers' through the aggregator */
  private servedOpenAPI(): OpenAPIDocs | undefined {
    const own = this.openapi;
    if (!own || !this.aggregator) return own;
    if (this.served?.of !== own) this.served = { of: own, docs: withRemote(own, this.aggregator.openapi) };
    return this.served.docs;
  }

  /** the OpenAPI documents of the built-in kinds and of the custom resources served (built on first use) */
  private buildOpenAPI(): OpenAPIBuild {
    return buildOpenAPI([...this.kinds, ...(this.crds?.kinds() ?? [])], { gitVersion: this.cfg.version.gitVersion, cbor: this.ctx.cbor, types: this.crds?.typeSource() });
  }

  /** The system namespaces and priority classes every cluster has. */
  private async bootstrap(): Promise<void> {
    // the writes go together, to share the storage's group commits
    const nsStore = this.store('', 'Namespace');
    await Promise.all(
      ['default', 'kube-system', 'kube-public', 'kube-node-lease'].map(async (ns) => {
        if (nsStore.get('', ns)) return;
        try {
          await nsStore.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { dryRun: false });
        } catch (e) {
          if (!(e instanceof StatusError && e.code === 409)) throw e;
        }
      }),
    );
    await this.bootstrapKubernetesService();
    await syncLocalAPIServices(apiServiceStoreOf(this.store('apiregistration.k8s.io', 'APIService')), servedGroupVersions(this.kinds));
    const pcStore = this.store('scheduling.k8s.io', 'PriorityClass');
    const classes = [
      { name: 'system-node-critical', value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.' },
      { name: 'system-cluster-critical', value: 2000000000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
    ];
    await Promise.all(
      classes.map(async (pc) => {
        if (pcStore.get('', pc.name)) return;
        try {
          await pcStore.create(
            { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: pc.name }, value: pc.value, description: pc.description, preemptionPolicy: 'PreemptLowerPriority' },
            { dryRun: false },
          );
        } catch (e) {
          if (!(e instanceof StatusError && e.code === 409)) throw e;
        }
      }),
    );
  }

  /**
   * The `kubernetes` Service in `default`, on the first address of the service range, with the
   * endpoints (Endpoints and EndpointSlice) of this API server, as kube-apiserver's bootstrap
   * controller keeps them.
   */
  private async bootstrapKubernetesService(): Promise<void> {
    const port = this.cfg.port;
    const ip = this.cfg.advertiseAddress;
    const svcStore = this.store('', 'Service');
    const ignoreExists = (e: unknown) => {
      if (!(e instanceof StatusError && e.code === 409)) throw e;
    };
    if (!svcStore.get('default', 'kubernetes')) {
      await svcStore
        .create(
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
            spec: {
              ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: port }],
              clusterIP: this.serviceAllocators.ips.serviceIP,
              clusterIPs: [this.serviceAllocators.ips.serviceIP],
              type: 'ClusterIP',
              sessionAffinity: 'None',
              ipFamilies: ['IPv4'],
              ipFamilyPolicy: 'SingleStack',
              internalTrafficPolicy: 'Cluster',
            },
          },
          { dryRun: false },
        )
        .catch(ignoreExists);
    }
    const subsets = [{ addresses: [{ ip }], ports: [{ name: 'https', port, protocol: 'TCP' }] }];
    const epStore = this.store('', 'Endpoints');
    const ep = epStore.get('default', 'kubernetes');
    if (!ep) {
      await epStore
        .create({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'kubernetes', namespace: 'default', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } }, subsets }, { dryRun: false })
        .catch(ignoreExists);
    } else if (JSON.stringify(ep.obj.subsets) !== JSON.stringify(subsets)) {
      await epStore.guaranteedUpdate('default', 'kubernetes', (cur) => ({ ...cur, subsets }), { dryRun: false });
    }
    const sliceStore = this.store('discovery.k8s.io', 'EndpointSlice');
    const endpoints = [{ addresses: [ip], conditions: { ready: true } }];
    const ports = [{ name: 'https', protocol: 'TCP', port }];
    const slice = sliceStore.get('default', 'kubernetes');
    if (!slice) {
      await sliceStore
        .create(
          {
            apiVersion: 'discovery.k8s.io/v1',
            kind: 'EndpointSlice',
            metadata: { name: 'kubernetes', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
            addressType: 'IPv4',
            endpoints,
            ports,
          },
          { dryRun: false },
        )
        .catch(ignoreExists);
    } else if (JSON.stringify(slice.obj.endpoints?.map((e: any) => e.addresses)) !== JSON.stringify([[ip]]) || slice.obj.ports?.[0]?.port !== port) {
      await sliceStore.guaranteedUpdate('default', 'kubernetes', (cur) => ({ ...cur, endpoints, ports }), { dryRun: false });
    }
  }

  /**
   * Compaction as kube-apiserver does it: every interval, compact to the revision seen at the
   * previous interval, so history of at least one interval is always kept.
   */
  private scheduleCompaction(): void {
    const ms = this.cfg.compactionIntervalMs;
    if (ms <= 0) return;
    this.compactTimer = setInterval(() => {
      void (async () => {
        try {
          const cur = await this.cfg.backend.currentRevision();
          const target = this.lastCompactCandidate;
          this.lastCompactCandidate = cur;
          if (target > 0) {
            await this.cfg.backend.compact(target);
            this.cfg.log.v(2).info('Compacted storage', { revision: target });
          }
        } catch (e) {
          this.cfg.log.error(e, 'Compaction failed');
        }
      })();
    }, ms);
    this.compactTimer.unref();
  }

  /**
   * SIGTERM, at once: /readyz fails (kube-apiserver's ShutdownInitiated) while the components that
   * share the process (node agent, controller manager, scheduler) stop; shutdown() follows.
   */
  announceShutdown(): void {
    if (this.shutdownAnnounced || this.shuttingDown) return;
    this.shutdownAnnounced = true;
    this.cfg.log.info('Shutdown requested: /readyz now fails', { delay: `${this.cfg.shutdownDelayMs}ms` });
  }

  /** SIGTERM: fail readyz, wait the shutdown delay, stop listening, end watches, finish in-flight requests. */
  async shutdown(): Promise<void> {
    if (this.shuttingDown) return;
    this.announceShutdown();
    this.shuttingDown = true;
    if (this.cfg.shutdownDelayMs > 0) await new Promise((r) => setTimeout(r, this.cfg.shutdownDelayMs));
    if (this.compactTimer) clearInterval(this.compactTimer);
    this.authInfo?.stop();
    this.flowControl?.stop();
    this.eventExpiry?.stop();
    this.defaultServiceCIDR?.stop();
    this.ipAddressRepair?.stop();
    this.apiServiceKeeper?.stop();
    this.identityLease?.stop();
    this.aggregator?.stop();
    this.metricsServer?.stop();
    // stop listening, GOAWAY to HTTP/2 connections, idle HTTP/1.1 connections closed; watches end; in-flight requests finish
    const listener = this.listener;
    const closed = listener ? listener.beginShutdown() : Promise.resolve();
    this.watches.closeAll();
    if (this.inFlight > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
    listener?.closeAll();
    await closed;
    this.authorization.stop();
    this.crds?.stop();
    this.limiter?.stop();
    this.cfg.audit?.shutdown();
    for (const s of this.allStores) s.stop();
    await this.cfg.backend.close();
    this.cfg.log.info('Shutdown complete');
  }

  private authenticate(req: IncomingMessage): UserInfo | null {
    const sock = req.socket as TLSSocket;
    const cached = this.users.get(sock);
    if (cached !== undefined) return cached;
    let user: UserInfo | null = null;
    if (sock.authorized) {
      const cert = sock.getPeerCertificate();
      const subj = cert?.subject as unknown as Record<string, string | string[]> | undefined;
      if (subj && subj['CN']) {
        const cn = Array.isArray(subj['CN']) ? subj['CN'][0]! : subj['CN'];
        const o = subj['O'];
        const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
        user = { name: cn, groups: [...groups, 'system:authenticated'] };
      }
    }
    this.users.set(sock, user);
    return user;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.inFlight++;
    const st: ChainState = { scope: requestScope(req), auditID: auditIDOf(req, newUUID) };
    const httpLog = this.httpLog;
    const started = httpLog ? performance.now() : 0;
    // (read now: an HTTP/2 stream's socket is gone by the time it closes)
    const srcIP = httpLog ? `${req.socket?.remoteAddress ?? ''}:${req.socket?.remotePort ?? ''}` : '';
    // the one 'close' listener of the request: its deadline, its metrics, the in-flight count
    // ('on', not 'once': a response closes once, and once's wrapper costs a call through apply)
    res.on('close', () => {
      st.scope.deadline?.cancel();
      st.onClose?.();
      // kube-apiserver's request log (httplog) at -v=3 and above
      if (httpLog) {
        httpLog.info('HTTP', {
          // (NormalizedVerb: LIST, WATCH, APPLY, CONNECT where the request is a resource request)
          verb: st.verb ?? req.method,
          URI: req.url,
          latency: goFormatDuration(BigInt(Math.round((performance.now() - started) * 1e6))),
          userAgent: req.headers['user-agent'] ?? '',
          'audit-ID': st.auditID,
          srcIP,
          resp: res.statusCode,
        });
      }
      if (--this.inFlight === 0 && this.idleWaiters.length) {
        const w = this.idleWaiters;
        this.idleWaiters = [];
        for (const f of w) f();
      }
    });
    res.setHeader('Audit-Id', st.auditID);
    // the body is tapped as it arrives, for the audit event (only when auditing)
    if (this.cfg.audit) st.tap = this.cfg.audit.tap(req, st.scope.method);
    this.route(req, res, st)
      .catch((err) => {
        if (!(err instanceof StatusError)) this.cfg.log.error(err, 'Unhandled error serving request', { method: req.method, path: req.url });
        st.audit?.fail(err);
        try {
          sendError({ req, res }, err, this.ctx.cbor);
        } catch (e) {
          // the error could not be written either (its headers, say): the request ends, the server does not
          this.cfg.log.error(e, 'Could not write the error of a request', { method: req.method, path: req.url });
          res.destroy();
        }
      })
      .finally(() => st.release?.());
  }

  /** the authorizer's decision on a request, audited; a denial is thrown as kube-apiserver's 403 */
  private authorizeOrRefuse(req: IncomingMessage, st: ChainState, attrs: ReturnType<typeof requestAttributes>): void {
    const decision = this.authorizer.authorize(attrs);
    st.audit?.authorized(decision.decision === 'allow', decision.reason);
    if (decision.decision !== 'allow') {
      req.resume();
      throw forbiddenError(attrs, decision.reason);
    }
  }

  /** counts a non-resource request in the request metrics when it ends, if kube-apiserver counts it */
  private countNonResource(path: string, res: ServerResponse, st: ChainState): void {
    const line = nonResourceMetricLine(path);
    if (!line) return;
    const started = performance.now();
    st.onClose = () => {
      const seconds = (performance.now() - started) / 1000;
      this.metrics.observe(line, false, false, res.statusCode, seconds, seconds, () => ({ verb: 'GET', group: '', version: '', resource: '', subresource: line.subresource, scope: '', component: '' }));
    };
  }

  private async route(req: IncomingMessage, res: ServerResponse, st: ChainState): Promise<void> {
    const { path, query, method, info } = st.scope;

    // the deadline of a request that is not long-running: --request-timeout, or a shorter `timeout`
    if (!st.scope.longRunning) {
      let ms: number;
      try {
        ms = requestTimeoutMs(query, this.cfg.requestTimeoutMs ?? 0);
      } catch (e) {
        req.resume();
        this.cfg.audit?.failed(req, st.scope, st.auditID, 400, (e as Error).message);
        throw e;
      }
      if (ms > 0) st.scope.deadline = new RequestDeadline(res, ms, st.scope.receivedAt, () => st.audit?.timedOut(TIMEOUT_STATUS));
    }

    let user: UserInfo | null;
    let authnWarnings: string[] = [];
    if (this.cfg.authenticator) {
      // (a connection's kept answer comes back synchronously: no promise to wait for)
      const pending = this.cfg.authenticator(req);
      const r = pending instanceof Promise ? await pending : pending;
      user = r?.user ?? null;
      authnWarnings = r?.warnings ?? [];
      // as Kubernetes' warning recorder: they go out with any answer (a 403 too), not only the handler's
      if (authnWarnings.length) res.setHeader('Warning', authnWarnings.map(warningHeaderValue));
    } else user = this.authenticate(req);
    if (!user) {
      req.resume();
      this.cfg.audit?.failed(req, st.scope, st.auditID, 401, authenticationFailureMessage(req));
      throw errors.unauthorized();
    }
    if (this.cfg.audit) {
      try {
        st.audit = this.cfg.audit.begin(req, res, st.scope, st.auditID, user, st.tap);
      } catch {
        req.resume();
        throw errors.internal(new Error('failed to store audit event'));
      }
    }
    if (hasImpersonationHeaders(req)) {
      try {
        const as = await impersonate(user, req, (_u, a) => {
          const d = this.authorizer.authorize(a);
          return { allowed: d.decision === 'allow', reason: d.reason };
        });
        if (as) {
          user = as;
          st.audit?.impersonated(as);
        }
      } catch (e) {
        req.resume();
        if (e instanceof ImpersonationInternalError) {
          res.statusCode = e.code;
          res.setHeader('Content-Type', e.contentType);
          res.setHeader('X-Content-Type-Options', 'nosniff');
          res.end(e.body + '\n');
          return;
        }
        throw e;
      }
    }

    // health and /version: authenticated and authorized as every request (anonymous clients reach
    // them through system:public-info-viewer), but never refused by the in-flight limits
    if (PUBLIC_PATHS.has(path) || path.startsWith('/livez/') || path.startsWith('/readyz/') || path.startsWith('/healthz/')) {
      this.authorizeOrRefuse(req, st, requestAttributes(user, info, method, query));
      // (a request refused above never reached kube-apiserver's instrumented health handler either)
      this.countNonResource(path, res, st);
      if (path === '/version') {
        const body = Buffer.from(JSON.stringify(this.cfg.version, null, 2));
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('Content-Length', body.length);
        res.end(body);
        return;
      }
      if (await this.health.handle(req, res, path, query)) return;
    }

    // the in-flight limits (long-running requests take no slot; system:masters is never refused)
    if (this.limiter) {
      st.release = this.limiter.acquire(st.scope, user);
      if (!st.release) {
        st.audit?.refused();
        writeTooManyRequests(req, res);
        return;
      }
    }

    this.authorizeOrRefuse(req, st, requestAttributes(user, info, method, query));

    // the group versions of remote APIServices go to their extension servers (aggregator/)
    const proxied = this.aggregator?.handle(req, res, path, query, user, st.auditID);
    if (proxied) return proxied;
    // metrics.k8s.io while the built-in serves it (metricsserver/)
    const metrics = this.metricsServer?.handle(req, res, info, query);
    if (metrics) return metrics;

    if (path === '/' && (method === 'GET' || method === 'HEAD')) {
      // the index of the paths served, as kube-apiserver lists them
      const body = Buffer.from(JSON.stringify({ paths: this.rootPaths() }, null, 2));
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Content-Length', body.length);
      res.end(body);
      return;
    }
    if (path === '/api' || path === '/api/') {
      this.discovery.serveRoot(req, res, true, this.address);
      return;
    }
    if (path === '/apis' || path === '/apis/') {
      this.discovery.serveRoot(req, res, false, this.address);
      return;
    }
    if (path === '/metrics/slis') {
      const body = Buffer.from(this.health.slisText());
      res.setHeader('Content-Type', this.metrics.contentType);
      res.setHeader('Content-Length', body.length);
      res.end(body);
      return;
    }
    if (path === '/metrics') {
      for (const st of [...this.stores.values(), ...(this.crds?.stores() ?? [])]) {
        this.metrics.storageObjects.set({ resource: st.kind.group ? `${st.kind.resource}.${st.kind.group}` : st.kind.resource }, st.cacher.count());
      }
      const body = Buffer.from(await this.metrics.text());
      res.setHeader('Content-Type', this.metrics.contentType);
      res.setHeader('Content-Length', body.length);
      res.end(body);
      return;
    }
    // --profiling: Go's /debug/pprof over V8's profilers (client/profiling.ts), as k8s.io/apiserver's routes.Profiling installs it
    if (this.cfg.profiling && path.startsWith('/debug/pprof') && (await serveDebugPprof(req, res, path, query, { bare: 'redirect' }))) return;
    // and /debug/flags/v, klog's verbosity (routes.DebugFlags)
    if (this.cfg.profiling && this.cfg.setVerbosity && path.startsWith('/debug/flags') && (await serveDebugFlags(req, res, path, (v) => this.setVerbosity(v), { index: true }))) return;
    if (method === 'GET' && this.cfg.issuerDiscovery?.serve(path, res)) return;
    if (path.startsWith('/openapi/')) {
      this.countNonResource(path, res, st);
      const docs = this.servedOpenAPI();
      if (docs && handleOpenAPI(req, res, docs)) return;
      throw errors.notFoundPath();
    }

    if (!info.isResourceRequest) {
      if (info.apiPrefix && method === 'GET') {
        const doc = this.discovery.apiResourceList(info.apiGroup, info.apiVersion);
        if (doc) {
          const body = Buffer.from(JSON.stringify(doc));
          res.setHeader('Content-Type', 'application/json');
          res.setHeader('Content-Length', body.length);
          res.end(body);
          return;
        }
      }
      const m = /^\/apis\/([^/]+)\/?$/.exec(path);
      if (m && method === 'GET' && this.discovery.hasGroup(m[1]!)) {
        const body = Buffer.from(JSON.stringify(this.discovery.apiGroupDoc(m[1]!)));
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('Content-Length', body.length);
        res.end(body);
        return;
      }
      if (!/^\/apis?(\/|$)/.test(path)) {
        // a path outside the API reaches kube-apiserver's NotFoundHandler: Go's http.NotFound
        req.resume();
        const body = Buffer.from('404 page not found\n');
        res.statusCode = 404;
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.setHeader('Content-Length', body.length);
        res.end(body);
        return;
      }
      throw errors.notFoundPath();
    }
    // a built-in resource first (a custom resource never takes a built-in one's name)
    const builtin = this.byGVR.get(st.scope.gvr);
    const custom = builtin ? undefined : this.crds?.store(info.apiGroup, info.apiVersion, info.resource);
    if (custom) authnWarnings = [...authnWarnings, ...routeCustom(req, info, custom, this.crds!)];
    const store = builtin ?? custom;
    if (!store) {
      const vk = this.virtualByGVR.get(st.scope.gvr);
      if (!vk) throw errors.notFoundPath();
      if (info.namespace && !vk.namespaced) throw errors.notFoundPath();
      const vr = { req, res, info, query, ctx: this.ctx, warnings: [...authnWarnings], user };
      this.withWarnings(res, vr.warnings);
      if (info.subresource || !vk.verbs.includes(info.verb)) {
        req.resume();
        throw methodNotAllowed();
      }
      if (vk.group === '' && vk.kind === 'ComponentStatus') return handleComponentStatuses(vr, vk, this.virtualCtx);
      return handleVirtualCreate(vr, vk, this.virtualCtx);
    }
    if (info.namespace && !store.kind.namespaced && info.resource !== 'namespaces') throw errors.notFoundPath();
    // an object of a namespaced resource has no path outside its namespace (kube-apiserver installs none)
    if (info.name && !info.namespace && store.kind.namespaced) throw errors.notFoundPath();
    if (info.subresource && !store.kind.subresources.some((s) => s.name === info.subresource)) {
      // a custom resource's handler answers a subresource its CRD does not enable as an absent object
      if (store.kind.custom) throw errors.notFound(store.groupResource, info.name);
      throw errors.notFoundPath();
    }
    // (a path below a subresource is only the proxy's: /pods/<name>/proxy/<path>)
    if (info.parts.length && info.subresource !== 'proxy') throw errors.notFoundPath();
    const r: Request = { req, res, info, query, store, ctx: this.ctx, warnings: [...authnWarnings], user };
    const started = performance.now();
    // kube-apiserver reports a patch with the apply content type as APPLY (exactly that type, as it compares)
    const applyPatch = info.verb === 'patch' && req.headers['content-type'] === 'application/apply-patch+yaml';
    if (this.httpLog) st.verb = metricVerb(info, applyPatch);
    const labels = () => ({ verb: metricVerb(info, applyPatch), group: info.apiGroup, version: info.apiVersion, resource: info.resource, subresource: info.subresource, scope: metricScope(info) });
    const endLong = info.verb === 'watch' ? this.metrics.watchStarted(labels()) : undefined;
    // the body of a get or a list is counted for apiserver_response_sizes, as sent (gzipped, when it is)
    const sized = info.verb === 'get' || info.verb === 'list' ? countSent(res) : undefined;
    st.onClose = () => {
      endLong?.();
      const seconds = (performance.now() - started) / 1000;
      // the SLI latency leaves out the time spent calling admission webhooks, as kube-apiserver's
      this.metrics.observe(info, query.get('dryRun') === 'All', applyPatch, res.statusCode, seconds, Math.max(0, seconds - st.scope.webhookMs / 1000), labels, sized?.bytes);
    };
    this.withWarnings(res, r.warnings);
    try {
      await this.dispatch(r);
    } catch (err) {
      st.audit?.fail(err);
      sendError(r, err, this.ctx.cbor);
    }
  }

  /** the request's warnings go out as Warning headers with the response */
  private withWarnings(res: ServerResponse, warnings: string[]): void {
    const origWriteHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: any[]) {
      if (warnings.length) res.setHeader('Warning', warnings.map(warningHeaderValue));
      return (origWriteHead as any).apply(this, args);
    } as any;
  }

  // (not async: the handler's own promise is returned, and awaited by route, without the two
  // extra turns of the microtask queue an async function takes to adopt a returned promise; a
  // throw here is caught by route's try as a rejection would be)
  private dispatch(r: Request): Promise<void> | void {
    const { info } = r;
    // a Pod's log, exec, attach and portforward, and the proxy of pods, services and nodes (connect.ts)
    if (info.subresource && r.store.kind.group === '') {
      if (POD_CONNECT_SUBRESOURCES.has(info.subresource) && r.store.kind.kind === 'Pod') return handlePodConnect(r, this.connectCtx);
      if (info.subresource === 'proxy' && PROXY_KINDS.has(r.store.kind.kind)) return handleProxy(r, this.connectCtx);
    }
    const verbs = r.store.kind.verbs;
    const need = info.verb === 'watch' ? 'watch' : info.verb;
    if (!info.subresource && need && !verbs.includes(need)) {
      r.req.resume();
      throw methodNotAllowed();
    }
    // the routes kube-apiserver installs on a collection: list, watch, create and deletecollection,
    // and on the all-namespaces path of a namespaced resource only list and watch (a PUT or PATCH
    // of a collection, a POST or DELETE across namespaces, is 405)
    if (!info.name && !info.subresource && info.verb !== 'list' && info.verb !== 'watch') {
      const writable = (info.verb === 'create' || info.verb === 'deletecollection') && (!r.store.kind.namespaced || info.namespace !== '');
      if (!writable) {
        r.req.resume();
        throw methodNotAllowed();
      }
    }
    switch (info.verb) {
      case 'get':
        return handleGet(r);
      case 'list':
        return handleList(r);
      case 'watch':
        return handleWatch(r);
      case 'create':
        if (info.subresource) return this.createSubresource(r);
        if (info.name) throw methodNotAllowed();
        return handleCreate(r);
      case 'update':
        return handleUpdate(r);
      case 'delete':
        return handleDelete(r);
      case 'deletecollection':
        return handleDeleteCollection(r);
      case 'patch':
        return handlePatch(r);
      default:
        r.req.resume();
        throw methodNotAllowed();
    }
  }

  /** a create on a subresource: a Pod's binding or eviction, a ServiceAccount's token */
  private async createSubresource(r: Request): Promise<void> {
    const { info } = r;
    if (info.subresource === 'binding' && r.store.kind.group === '' && r.store.kind.kind === 'Pod') {
      const bk = this.kinds.find((k) => k.group === '' && k.kind === 'Binding')!;
      // (typed as every body: a value of the wrong type is a 400, not a fault further on)
      const binding = normalizeBody(r, decodeBody(r, await readBody(r.req), bk), bk, fieldValidationOf(r.query, r.req.method));
      if (binding.metadata?.name && binding.metadata.name !== info.name) {
        throw errors.badRequest('name in URL does not match name in Binding object');
      }
      return bind(r, binding, this.virtualCtx, info.namespace, info.name);
    }
    if (info.subresource === 'eviction' && r.store.kind.group === '' && r.store.kind.kind === 'Pod') {
      // policy/v1, or policy/v1beta1 (older clients; the same fields)
      const body = await readBody(r.req);
      const version = EVICTION_V1BETA1.test(body.subarray(0, 4096).toString('latin1')) ? 'v1beta1' : 'v1';
      const ek = { group: 'policy', version, kind: 'Eviction', type: 'io.k8s.api.policy.v1.Eviction' };
      const eviction = normalizeBody(r, decodeBody(r, body, ek as any), ek, fieldValidationOf(r.query, r.req.method));
      return evict(r, eviction, this.virtualCtx, info.namespace, info.name);
    }
    if (info.subresource === 'token' && r.store.kind.group === '' && r.store.kind.kind === 'ServiceAccount') {
      if (!this.cfg.tokenRequest) throw methodNotAllowed();
      const trKind = { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', type: 'io.k8s.api.authentication.v1.TokenRequest' };
      const body = normalizeBody(r, decodeBody(r, await readBody(r.req), trKind as any), trKind, fieldValidationOf(r.query, r.req.method));
      // admission: the mutating plugins on the body, the validating ones inside (after validation)
      const admission = await admitSubresourceCreate(r, r.store.kind, info.namespace, info.name, 'token', body, dryRunOf(r.query));
      const out = await createTokenRequest({ ...this.cfg.tokenRequest, reader: this.objectReader }, info.namespace, info.name, body, (req) => admission.validate(req));
      r.warnings.push(...out.warnings);
      writeObject(r.res, 201, out.object, outputChoice(r, false), 'io.k8s.api.authentication.v1.TokenRequest');
      return;
    }
    if (info.name) throw methodNotAllowed();
    return handleCreate(r);
  }
}

/**
 * Count the body bytes a response sends (its write and end calls): what kube-apiserver's response
 * writer delegate counts for apiserver_response_sizes.
 */
function countSent(res: ServerResponse): { bytes: number } {
  const sent = { bytes: 0 };
  const size = (chunk: unknown, enc?: unknown): number =>
    typeof chunk === 'string' ? Buffer.byteLength(chunk, typeof enc === 'string' ? (enc as BufferEncoding) : 'utf8') : chunk instanceof Uint8Array ? chunk.byteLength : 0;
  const write = res.write;
  const end = res.end;
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    sent.bytes += size(chunk, rest[0]);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof res.write;
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== 'function') sent.bytes += size(chunk, rest[0]);
    return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as typeof res.end;
  return sent;
}
