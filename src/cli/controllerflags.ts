// The controller manager's flags that `keelson server` (for its embedded manager) and `keelson
// controller-manager` share, declared once: the generic ones (which controllers, the client's
// rate limits, leader election) and those of the control loops Keelson runs.
import type { FlagSet } from './flags.js';
import { KNOWN_CONTROLLERS, type ControllerManagerOptions } from '../controllers/options.js';

export function declareControllerManagerFlags(generic: FlagSet, loops: FlagSet, m: ControllerManagerOptions): void {
  generic.durationVar(m, 'controllerStartIntervalMs', 'controller-start-interval', 'Interval between starting controller managers.');
  generic.stringsVar(m, 'controllers', 'controllers', `A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'.\nAll controllers: ${KNOWN_CONTROLLERS.map((c) => c.name).join(', ')}\nDisabled-by-default controllers: ${KNOWN_CONTROLLERS.filter((c) => c.disabledByDefault).map((c) => c.name).join(', ')}\n(The other names kube-controller-manager knows are accepted, and said not to run.)`);
  generic.float64Var(m, 'kubeAPIQPS', 'kube-api-qps', 'QPS to use while talking with kubernetes apiserver.');
  generic.int32Var(m, 'kubeAPIBurst', 'kube-api-burst', 'Burst to use while talking with kubernetes apiserver.');
  generic.boolVar(m, 'leaderElect', 'leader-elect', 'Start a leader election client and gain leadership before executing the main loop. Enable this when running replicated components for high availability.');
  generic.durationVar(m, 'leaseDurationMs', 'leader-elect-lease-duration', 'The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot. This is effectively the maximum duration that a leader can be stopped before it is replaced by another candidate. This is only applicable if leader election is enabled.');
  generic.durationVar(m, 'renewDeadlineMs', 'leader-elect-renew-deadline', 'The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than the lease duration. This is only applicable if leader election is enabled.');
  generic.stringVar(m, 'resourceLock', 'leader-elect-resource-lock', "The type of resource object that is used for locking during leader election. Supported options are 'leases'.");
  generic.stringVar(m, 'resourceName', 'leader-elect-resource-name', 'The name of resource object that is used for locking during leader election.');
  generic.stringVar(m, 'resourceNamespace', 'leader-elect-resource-namespace', 'The namespace of resource object that is used for locking during leader election.');
  generic.durationVar(m, 'retryPeriodMs', 'leader-elect-retry-period', 'The duration the clients should wait between attempting acquisition and renewal of a leadership. This is only applicable if leader election is enabled.');
  generic.durationVar(m, 'minResyncPeriodMs', 'min-resync-period', 'The resync period in reflectors will be random between MinResyncPeriod and 2*MinResyncPeriod.');
  loops.int32Var(m, 'concurrentNamespaceSyncs', 'concurrent-namespace-syncs', 'The number of namespace objects that are allowed to sync concurrently. Larger number = more responsive namespace termination, but more CPU (and network) load');
  loops.durationVar(m, 'namespaceSyncPeriodMs', 'namespace-sync-period', 'The period for syncing namespace life-cycle updates');
  loops.int32Var(m, 'concurrentResourceQuotaSyncs', 'concurrent-resource-quota-syncs', 'The number of resource quotas that are allowed to sync concurrently. Larger number = more responsive quota management, but more CPU (and network) load');
  loops.durationVar(m, 'resourceQuotaSyncPeriodMs', 'resource-quota-sync-period', 'The period for syncing quota usage status in the system');
  loops.int32Var(m, 'concurrentGCSyncs', 'concurrent-gc-syncs', 'The number of garbage collector workers that are allowed to sync concurrently.');
  loops.int32Var(m, 'concurrentRCSyncs', 'concurrent-rc-syncs', 'The number of replication controllers that are allowed to sync concurrently. Larger number = more responsive replica management, but more CPU (and network) load');
  loops.int32Var(m, 'concurrentReplicaSetSyncs', 'concurrent-replicaset-syncs', 'The number of replica sets that are allowed to sync concurrently. Larger number = more responsive replica management, but more CPU (and network) load');
  loops.int32Var(m, 'concurrentDeploymentSyncs', 'concurrent-deployment-syncs', 'The number of deployment objects that are allowed to sync concurrently. Larger number = more responsive deployments, but more CPU (and network) load');
  loops.int32Var(m, 'concurrentEndpointSyncs', 'concurrent-endpoint-syncs', 'The number of endpoint syncing operations that will be done concurrently. Larger number = faster endpoint updating, but more CPU (and network) load');
  loops.int32Var(m, 'concurrentServiceEndpointSyncs', 'concurrent-service-endpoint-syncs', 'The number of service endpoint syncing operations that will be done concurrently. Larger number = faster endpoint slice updating, but more CPU (and network) load.');
  loops.durationVar(m, 'endpointUpdatesBatchPeriodMs', 'endpoint-updates-batch-period', 'The length of endpoint updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated');
  loops.durationVar(m, 'endpointSliceUpdatesBatchPeriodMs', 'endpointslice-updates-batch-period', 'The length of endpoint slice updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated');
  loops.int32Var(m, 'maxEndpointsPerSlice', 'max-endpoints-per-slice', 'The maximum number of endpoints that will be added to an EndpointSlice. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.');
  loops.int32Var(m, 'concurrentJobSyncs', 'concurrent-job-syncs', 'The number of job objects that are allowed to sync concurrently. Larger number = more responsive jobs, but more CPU (and network) load');
  loops.int32Var(m, 'concurrentCronJobSyncs', 'concurrent-cron-job-syncs', 'The number of cron job objects that are allowed to sync concurrently. Larger number = more responsive jobs, but more CPU (and network) load');
  loops.int32Var(m, 'concurrentTTLAfterFinishedSyncs', 'concurrent-ttl-after-finished-syncs', 'The number of ttl-after-finished-controller workers that are allowed to sync concurrently.');
  loops.int32Var(m, 'terminatedPodGCThreshold', 'terminated-pod-gc-threshold', 'Number of terminated pods that can exist before the terminated pod garbage collector starts deleting terminated pods. If <= 0, the terminated pod garbage collector is disabled.');
  loops.int32Var(m, 'concurrentSATokenSyncs', 'concurrent-serviceaccount-token-syncs', 'The number of service account token objects that are allowed to sync concurrently. Larger number = more responsive token generation, but more CPU (and network) load');
  loops.durationVar(m, 'clusterSigningDurationMs', 'cluster-signing-duration', 'The max length of duration signed certificates will be given. Individual CSRs may request shorter certs by setting spec.expirationSeconds.');
  loops.durationVar(m, 'nodeMonitorPeriodMs', 'node-monitor-period', 'The period for syncing NodeStatus in the node lifecycle controller.');
  loops.durationVar(m, 'nodeMonitorGracePeriodMs', 'node-monitor-grace-period', 'Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N times more than kubelet\'s nodeStatusUpdateFrequency, where N means number of retries allowed for kubelet to post node status.');
  loops.durationVar(m, 'nodeStartupGracePeriodMs', 'node-startup-grace-period', 'Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.');
}
