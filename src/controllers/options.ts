// The controller manager's options (kube-controller-manager's flags that Keelson's controllers
// use), with Kubernetes' defaults. Flag parsing lives in cli/; this is the plain value.

export interface ControllerManagerOptions {
  /** --controllers: `*` (every controller on by default), `name` enables, `-name` disables */
  controllers: string[];
  /** --leader-elect */
  leaderElect: boolean;
  /** --leader-elect-lease-duration */
  leaseDurationMs: number;
  /** --leader-elect-renew-deadline */
  renewDeadlineMs: number;
  /** --leader-elect-retry-period */
  retryPeriodMs: number;
  /** --leader-elect-resource-lock (only `leases`) */
  resourceLock: string;
  /** --leader-elect-resource-name */
  resourceName: string;
  /** --leader-elect-resource-namespace */
  resourceNamespace: string;
  /** --kube-api-qps */
  kubeAPIQPS: number;
  /** --kube-api-burst */
  kubeAPIBurst: number;
  /** --min-resync-period: shared informers resync between this and twice this */
  minResyncPeriodMs: number;
  /** --concurrent-namespace-syncs */
  concurrentNamespaceSyncs: number;
  /** --namespace-sync-period */
  namespaceSyncPeriodMs: number;
  /** --concurrent-resource-quota-syncs */
  concurrentResourceQuotaSyncs: number;
  /** --resource-quota-sync-period */
  resourceQuotaSyncPeriodMs: number;
  /** --enable-garbage-collector: the garbage collector runs (it must match the API server's flag) */
  enableGarbageCollector: boolean;
  /** --concurrent-gc-syncs */
  concurrentGCSyncs: number;
  /** --concurrent-rc-syncs: ReplicationControllers synced at once */
  concurrentRCSyncs: number;
  /** --concurrent-replicaset-syncs */
  concurrentReplicaSetSyncs: number;
  /** --concurrent-deployment-syncs */
  concurrentDeploymentSyncs: number;
  /** --concurrent-daemonset-syncs */
  concurrentDaemonSetSyncs: number;
  /** --concurrent-endpoint-syncs: Services whose Endpoints are synced at once */
  concurrentEndpointSyncs: number;
  /** --concurrent-service-endpoint-syncs: Services whose EndpointSlices are synced at once */
  concurrentServiceEndpointSyncs: number;
  /** --endpoint-updates-batch-period: pod changes batched per Service before its Endpoints are synced (0: none) */
  endpointUpdatesBatchPeriodMs: number;
  /** --endpointslice-updates-batch-period */
  endpointSliceUpdatesBatchPeriodMs: number;
  /** --max-endpoints-per-slice */
  maxEndpointsPerSlice: number;
  /** --concurrent-statefulset-syncs */
  concurrentStatefulSetSyncs: number;
  /** --concurrent-job-syncs */
  concurrentJobSyncs: number;
  /** --concurrent-cron-job-syncs */
  concurrentCronJobSyncs: number;
  /** --concurrent-ttl-after-finished-syncs */
  concurrentTTLAfterFinishedSyncs: number;
  /** --concurrent-ephemeralvolume-syncs: ephemeral-volume-controller workers */
  concurrentEphemeralVolumeSyncs: number;
  /** --cluster-signing-duration: the longest validity of a certificate the CSR signer gives */
  clusterSigningDurationMs: number;
  /** --concurrent-serviceaccount-token-syncs */
  concurrentSATokenSyncs: number;
  /** --controller-start-interval: the wait between the starts of two controllers */
  controllerStartIntervalMs: number;
  /** --terminated-pod-gc-threshold: terminated pods kept before the pod garbage collector deletes the oldest (<= 0: never) */
  terminatedPodGCThreshold: number;
  /** --pvclaimbinder-sync-period: the persistent volume binder's resync of every claim and volume */
  pvClaimBinderSyncPeriodMs: number;
  /** --enable-hostpath-provisioner: the binder provisions volumes of StorageClasses of kubernetes.io/host-path */
  enableHostPathProvisioner: boolean;
  /** --enable-dynamic-provisioning: false, the binder provisions nothing and hands no claim to an external provisioner */
  enableDynamicProvisioning: boolean;
  /** --use-service-account-credentials: each controller acts as its service account kube-system/<controller> */
  useServiceAccountCredentials: boolean;
  /** timeout of each non-watch request to the API server (Keelson; 0: none) */
  requestTimeoutMs: number;
  /** --node-monitor-period, --node-monitor-grace-period, --node-startup-grace-period (node-lifecycle-controller) */
  nodeMonitorPeriodMs: number;
  nodeMonitorGracePeriodMs: number;
  nodeStartupGracePeriodMs: number;
  /** --node-eviction-rate, --secondary-node-eviction-rate (nodes per second given NoExecute taints), --large-cluster-size-threshold, --unhealthy-zone-threshold */
  nodeEvictionRate: number;
  secondaryNodeEvictionRate: number;
  largeClusterSizeThreshold: number;
  unhealthyZoneThreshold: number;
}

export function defaultControllerManagerOptions(): ControllerManagerOptions {
  return {
    controllers: ['*'],
    leaderElect: true,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    resourceLock: 'leases',
    resourceName: 'kube-controller-manager',
    resourceNamespace: 'kube-system',
    kubeAPIQPS: 20,
    kubeAPIBurst: 30,
    minResyncPeriodMs: 12 * 3600_000,
    concurrentNamespaceSyncs: 10,
    namespaceSyncPeriodMs: 5 * 60_000,
    concurrentResourceQuotaSyncs: 5,
    resourceQuotaSyncPeriodMs: 5 * 60_000,
    enableGarbageCollector: true,
    concurrentGCSyncs: 20,
    concurrentRCSyncs: 5,
    concurrentReplicaSetSyncs: 5,
    concurrentDeploymentSyncs: 5,
    concurrentDaemonSetSyncs: 2,
    concurrentEndpointSyncs: 5,
    concurrentServiceEndpointSyncs: 5,
    endpointUpdatesBatchPeriodMs: 0,
    endpointSliceUpdatesBatchPeriodMs: 0,
    maxEndpointsPerSlice: 100,
    useServiceAccountCredentials: false,
    pvClaimBinderSyncPeriodMs: 15_000,
    enableHostPathProvisioner: false,
    enableDynamicProvisioning: true,
    terminatedPodGCThreshold: 12500,
    concurrentSATokenSyncs: 5,
    controllerStartIntervalMs: 0,
    clusterSigningDurationMs: 8760 * 3600_000,
    concurrentStatefulSetSyncs: 5,
    concurrentJobSyncs: 5,
    concurrentCronJobSyncs: 5,
    concurrentTTLAfterFinishedSyncs: 5,
    concurrentEphemeralVolumeSyncs: 5,
    requestTimeoutMs: 60_000,
    nodeMonitorPeriodMs: 5_000,
    nodeMonitorGracePeriodMs: 50_000,
    nodeStartupGracePeriodMs: 60_000,
    nodeEvictionRate: 0.1,
    secondaryNodeEvictionRate: 0.01,
    largeClusterSizeThreshold: 50,
    unhealthyZoneThreshold: 0.55,
  };
}

/** Controllers Keelson has, by name; `aliases` are the names older releases used. */
export const KNOWN_CONTROLLERS: { name: string; aliases: string[]; disabledByDefault?: boolean }[] = [
  { name: 'namespace-controller', aliases: ['namespace'] },
  { name: 'serviceaccount-controller', aliases: ['serviceaccount'] },
  { name: 'root-ca-certificate-publisher-controller', aliases: ['root-ca-cert-publisher'] },
  { name: 'disruption-controller', aliases: ['disruption'] },
  { name: 'service-cidr-controller', aliases: [] },
  { name: 'serviceaccount-token-controller', aliases: ['serviceaccount-token'] },
  { name: 'resourcequota-controller', aliases: ['resourcequota'] },
  { name: 'garbage-collector-controller', aliases: ['garbagecollector'] },
  { name: 'replicationcontroller-controller', aliases: ['replicationcontroller'] },
  { name: 'replicaset-controller', aliases: ['replicaset'] },
  { name: 'deployment-controller', aliases: ['deployment'] },
  { name: 'daemonset-controller', aliases: ['daemonset'] },
  { name: 'endpoints-controller', aliases: ['endpoint'] },
  { name: 'endpointslice-controller', aliases: ['endpointslice'] },
  { name: 'pod-garbage-collector-controller', aliases: ['podgc'] },
  { name: 'node-lifecycle-controller', aliases: ['nodelifecycle'] },
  { name: 'taint-eviction-controller', aliases: [] },
  { name: 'statefulset-controller', aliases: ['statefulset'] },
  { name: 'job-controller', aliases: ['job'] },
  { name: 'cronjob-controller', aliases: ['cronjob'] },
  { name: 'ttl-after-finished-controller', aliases: ['ttl-after-finished'] },
  { name: 'persistentvolume-binder-controller', aliases: ['persistentvolume-binder'] },
  { name: 'persistentvolumeclaim-protection-controller', aliases: ['pvc-protection'] },
  { name: 'persistentvolume-protection-controller', aliases: ['pv-protection'] },
  { name: 'ephemeral-volume-controller', aliases: ['ephemeral-volume'] },
  { name: 'certificatesigningrequest-signing-controller', aliases: ['csrsigning'] },
  { name: 'certificatesigningrequest-approving-controller', aliases: ['csrapproving'] },
  { name: 'certificatesigningrequest-cleaner-controller', aliases: ['csrcleaner'] },
];

/**
 * The other controllers kube-controller-manager 1.33 knows (canonical names, then the names older
 * releases used). Keelson does not run them; naming one in --controllers is accepted, as
 * kube-controller-manager accepts it (kubeadm passes `*,bootstrapsigner,tokencleaner`), and the
 * start says it does not run.
 */
export const OTHER_KUBE_CONTROLLERS: { name: string; aliases: string[] }[] = [
  ['endpointslice-mirroring-controller', 'endpointslicemirroring'],
  ['horizontal-pod-autoscaler-controller', 'horizontalpodautoscaling'],
  ['ttl-controller', 'ttl'],
  ['bootstrap-signer-controller', 'bootstrapsigner'],
  ['token-cleaner-controller', 'tokencleaner'],
  ['node-ipam-controller', 'nodeipam'],
  ['persistentvolume-attach-detach-controller', 'attachdetach'],
  ['persistentvolume-expander-controller', 'persistentvolume-expander'],
  ['clusterrole-aggregation-controller', 'clusterrole-aggregation'],
  ['storageversion-garbage-collector-controller', 'storage-version-gc'],
  ['resourceclaim-controller', 'resource-claim-controller'],
  ['legacy-serviceaccount-token-cleaner-controller', 'legacy-service-account-token-cleaner'],
  ['validatingadmissionpolicy-status-controller'],
  ['storage-version-migrator-controller'],
  ['selinux-warning-controller'],
  ['volumeattributesclass-protection-controller'],
  ['service-lb-controller', 'service'],
  ['node-route-controller', 'route'],
  ['cloud-node-lifecycle-controller', 'cloud-node-lifecycle'],
].map(([name, ...aliases]) => ({ name: name!, aliases }));

function canonical(name: string): string | undefined {
  for (const c of KNOWN_CONTROLLERS) if (c.name === name || c.aliases.includes(name)) return c.name;
  return undefined;
}

/** the canonical name of a controller kube-controller-manager has and Keelson does not run */
export function otherKubeController(name: string): string | undefined {
  for (const c of OTHER_KUBE_CONTROLLERS) if (c.name === name || c.aliases.includes(name)) return c.name;
  return undefined;
}

/** kube-controller-manager's IsControllerEnabled: the first explicit choice wins; `*` turns on the defaults. */
export function isControllerEnabled(name: string, controllers: string[]): boolean {
  const want = canonical(name) ?? name;
  let star = false;
  for (const c of controllers) {
    const neg = c.startsWith('-');
    const n = neg ? c.slice(1) : c;
    if (n === '*') {
      if (!neg) star = true;
      continue;
    }
    if ((canonical(n) ?? n) === want) return !neg;
  }
  if (!star) return false;
  return !KNOWN_CONTROLLERS.find((c) => c.name === want)?.disabledByDefault;
}

/** Errors in the options, in kube-controller-manager's words where it has them. */
export function validateControllerManagerOptions(o: ControllerManagerOptions): string[] {
  const errs: string[] = [];
  // (kube-controller-manager's order: the lock, then the names)
  if (o.leaderElect && o.resourceLock !== 'leases') errs.push('resourceLock value must be "leases"');
  for (const c of o.controllers) {
    const n = c.startsWith('-') ? c.slice(1) : c;
    if (n === '*') continue;
    if (!canonical(n) && !otherKubeController(n)) errs.push(`${JSON.stringify(n)} is not in the list of known controllers`);
  }
  if (o.leaderElect) {
    if (o.leaseDurationMs <= o.renewDeadlineMs) errs.push('leaseDuration must be greater than renewDeadline');
    if (o.renewDeadlineMs <= 1.2 * o.retryPeriodMs) errs.push('renewDeadline must be greater than retryPeriod*JitterFactor');
    if (!o.resourceName) errs.push('--leader-elect-resource-name must not be empty');
    if (!o.resourceNamespace) errs.push('--leader-elect-resource-namespace must not be empty');
  }
  if (o.concurrentNamespaceSyncs < 1) errs.push('--concurrent-namespace-syncs must be at least 1');
  if (o.namespaceSyncPeriodMs < 0) errs.push('--namespace-sync-period must not be negative');
  if (o.concurrentResourceQuotaSyncs < 1) errs.push('--concurrent-resource-quota-syncs must be at least 1');
  if (o.resourceQuotaSyncPeriodMs < 0) errs.push('--resource-quota-sync-period must not be negative');
  if (o.concurrentGCSyncs < 1) errs.push('--concurrent-gc-syncs must be at least 1');
  if (o.concurrentRCSyncs < 1) errs.push('--concurrent-rc-syncs must be at least 1');
  if (o.concurrentReplicaSetSyncs < 1) errs.push('--concurrent-replicaset-syncs must be at least 1');
  if (o.concurrentDeploymentSyncs < 1) errs.push('--concurrent-deployment-syncs must be at least 1');
  if (o.concurrentDaemonSetSyncs < 1) errs.push('--concurrent-daemonset-syncs must be at least 1');
  if (o.concurrentEndpointSyncs < 1) errs.push('--concurrent-endpoint-syncs must be at least 1');
  if (o.concurrentServiceEndpointSyncs < 1) errs.push('--concurrent-service-endpoint-syncs must be at least 1');
  if (o.concurrentStatefulSetSyncs < 1) errs.push('--concurrent-statefulset-syncs must be at least 1');
  if (o.concurrentJobSyncs < 1) errs.push('--concurrent-job-syncs must be at least 1');
  if (o.concurrentCronJobSyncs < 1) errs.push('--concurrent-cron-job-syncs must be at least 1');
  if (o.concurrentTTLAfterFinishedSyncs < 1) errs.push('--concurrent-ttl-after-finished-syncs must be at least 1');
  if (o.concurrentEphemeralVolumeSyncs < 1) errs.push('--concurrent-ephemeralvolume-syncs must be at least 1');
  if (o.pvClaimBinderSyncPeriodMs <= 0) errs.push('--pvclaimbinder-sync-period must be greater than 0');
  if (o.endpointUpdatesBatchPeriodMs < 0) errs.push('--endpoint-updates-batch-period must not be negative');
  if (o.endpointSliceUpdatesBatchPeriodMs < 0) errs.push('--endpointslice-updates-batch-period must not be negative');
  // (kube-controller-manager's EndpointSliceControllerOptions.Validate)
  if (o.maxEndpointsPerSlice < 1 || o.maxEndpointsPerSlice > 1000) errs.push(`--max-endpoints-per-slice must be between 1 and 1000, was ${o.maxEndpointsPerSlice}`);
  return errs;
}
