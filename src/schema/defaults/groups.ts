// Defaults of the named API groups: our reading of Kubernetes 1.33 pkg/apis/<group>/<version>/
// defaults.go (apps, batch, networking, rbac, scheduling, storage, discovery, autoscaling,
// admissionregistration, flowcontrol) and apiextensions-apiserver's v1 defaults. Groups without
// defaults in 1.33: policy/v1 (PodDisruptionBudget), coordination/v1 (Lease), certificates/v1,
// events.k8s.io/v1, node.k8s.io/v1, and networking's Ingress, IPAddress and ServiceCIDR.
import { OBJECT_META } from './core.js';
import { defaulter, isEmpty, isNil, isObject, isZero, orderOf, put, sortedMap, sub } from './engine.js';

const A = (n: string) => `io.k8s.api.apps.v1.${n}`;
const B = (n: string) => `io.k8s.api.batch.v1.${n}`;
const NET = (n: string) => `io.k8s.api.networking.v1.${n}`;
const RBAC = (n: string) => `io.k8s.api.rbac.v1.${n}`;
const STO = (n: string) => `io.k8s.api.storage.v1.${n}`;
const ADM = (n: string) => `io.k8s.api.admissionregistration.v1.${n}`;
const FC = (n: string) => `io.k8s.api.flowcontrol.v1.${n}`;
const AS1 = (n: string) => `io.k8s.api.autoscaling.v1.${n}`;
const AS2 = (n: string) => `io.k8s.api.autoscaling.v2.${n}`;
const CRD = (n: string) => `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.${n}`;

// ---------------------------------------------------------------------------------------------
// apps/v1

defaulter(
  A('Deployment'),
  ['spec.replicas', 'spec.strategy.type', 'spec.strategy.rollingUpdate.maxUnavailable', 'spec.strategy.rollingUpdate.maxSurge', 'spec.revisionHistoryLimit', 'spec.progressDeadlineSeconds'],
  (d, ord) => {
    const spec = sub(d, ord, 'spec');
    const so = orderOf(A('DeploymentSpec'));
    if (isNil(spec.replicas)) put(spec, so, 'replicas', 1);
    const strategy = sub(spec, so, 'strategy');
    const sto = orderOf(A('DeploymentStrategy'));
    if (isZero(strategy.type)) put(strategy, sto, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      const ru = sub(strategy, sto, 'rollingUpdate');
      const ro = orderOf(A('RollingUpdateDeployment'));
      if (isNil(ru.maxUnavailable)) put(ru, ro, 'maxUnavailable', '25%');
      if (isNil(ru.maxSurge)) put(ru, ro, 'maxSurge', '25%');
    }
    if (isNil(spec.revisionHistoryLimit)) put(spec, so, 'revisionHistoryLimit', 10);
    if (isNil(spec.progressDeadlineSeconds)) put(spec, so, 'progressDeadlineSeconds', 600);
  },
);

defaulter(
  A('DaemonSet'),
  ['spec.updateStrategy.type', 'spec.updateStrategy.rollingUpdate.maxUnavailable', 'spec.updateStrategy.rollingUpdate.maxSurge', 'spec.revisionHistoryLimit'],
  (ds, ord) => {
    const spec = sub(ds, ord, 'spec');
    const so = orderOf(A('DaemonSetSpec'));
    const us = sub(spec, so, 'updateStrategy');
    const uo = orderOf(A('DaemonSetUpdateStrategy'));
    if (isZero(us.type)) put(us, uo, 'type', 'RollingUpdate');
    if (us.type === 'RollingUpdate') {
      const ru = sub(us, uo, 'rollingUpdate');
      const ro = orderOf(A('RollingUpdateDaemonSet'));
      if (isNil(ru.maxUnavailable)) put(ru, ro, 'maxUnavailable', 1);
      if (isNil(ru.maxSurge)) put(ru, ro, 'maxSurge', 0);
    }
    if (isNil(spec.revisionHistoryLimit)) put(spec, so, 'revisionHistoryLimit', 10);
  },
);

defaulter(
  A('StatefulSet'),
  [
    'spec.podManagementPolicy',
    'spec.updateStrategy.type',
    'spec.updateStrategy.rollingUpdate.partition',
    'spec.persistentVolumeClaimRetentionPolicy.whenDeleted',
    'spec.persistentVolumeClaimRetentionPolicy.whenScaled',
    'spec.replicas',
    'spec.revisionHistoryLimit',
  ],
  (ss, ord) => {
    const spec = sub(ss, ord, 'spec');
    const so = orderOf(A('StatefulSetSpec'));
    // (independent defaults, written in Go field order)
    if (isNil(spec.replicas)) put(spec, so, 'replicas', 1);
    if (isEmpty(spec.podManagementPolicy)) put(spec, so, 'podManagementPolicy', 'OrderedReady');
    const us = sub(spec, so, 'updateStrategy');
    const uo = orderOf(A('StatefulSetUpdateStrategy'));
    if (isZero(us.type)) {
      put(us, uo, 'type', 'RollingUpdate');
      // only a defaulted type brings a rollingUpdate block with it
      if (isNil(us.rollingUpdate)) put(us, uo, 'rollingUpdate', {});
    }
    if (us.type === 'RollingUpdate' && isObject(us.rollingUpdate) && isNil(us.rollingUpdate.partition)) {
      put(us.rollingUpdate, orderOf(A('RollingUpdateStatefulSetStrategy')), 'partition', 0);
    }
    if (isNil(spec.revisionHistoryLimit)) put(spec, so, 'revisionHistoryLimit', 10);
    // StatefulSetAutoDeletePVC is GA in 1.32
    const rp = sub(spec, so, 'persistentVolumeClaimRetentionPolicy');
    const rpo = orderOf(A('StatefulSetPersistentVolumeClaimRetentionPolicy'));
    if (isEmpty(rp.whenDeleted)) put(rp, rpo, 'whenDeleted', 'Retain');
    if (isEmpty(rp.whenScaled)) put(rp, rpo, 'whenScaled', 'Retain');
  },
);

defaulter(A('ReplicaSet'), ['spec.replicas'], (rs, ord) => {
  const spec = sub(rs, ord, 'spec');
  if (isNil(spec.replicas)) put(spec, orderOf(A('ReplicaSetSpec')), 'replicas', 1);
});

// ---------------------------------------------------------------------------------------------
// batch/v1

const MAX_INT32 = 2147483647;

defaulter(
  B('Job'),
  [
    'spec.completions',
    'spec.parallelism',
    'spec.backoffLimit',
    'metadata.labels',
    'spec.completionMode',
    'spec.suspend',
    'spec.podReplacementPolicy',
    'spec.manualSelector',
  ],
  (job, ord) => {
    const spec = sub(job, ord, 'spec');
    const so = orderOf(B('JobSpec'));
    // (independent defaults, written in Go field order)
    if (isNil(spec.completions) && isNil(spec.parallelism)) {
      put(spec, so, 'parallelism', 1);
      put(spec, so, 'completions', 1);
    }
    if (isNil(spec.parallelism)) put(spec, so, 'parallelism', 1);
    if (isNil(spec.backoffLimit)) put(spec, so, 'backoffLimit', isNil(spec.backoffLimitPerIndex) ? 6 : MAX_INT32);
    // the job takes its pod template's labels when it has none of its own
    copyTemplateLabels(job, ord);
    if (isNil(spec.manualSelector)) put(spec, so, 'manualSelector', false);
    if (isNil(spec.completionMode)) put(spec, so, 'completionMode', 'NonIndexed');
    if (isNil(spec.suspend)) put(spec, so, 'suspend', false);
    // JobPodReplacementPolicy: beta, on by default in 1.33
    if (isNil(spec.podReplacementPolicy)) put(spec, so, 'podReplacementPolicy', isNil(spec.podFailurePolicy) ? 'TerminatingOrFailed' : 'Failed');
  },
);

/** metadata.labels of a Job default to its pod template's labels */
export function copyTemplateLabels(job: any, ord = orderOf(B('Job'))): void {
  const labels = job.spec?.template?.metadata?.labels;
  if (isNil(labels)) return;
  const meta = sub(job, ord, 'metadata');
  if (isEmpty(meta.labels)) put(meta, orderOf(OBJECT_META), 'labels', sortedMap(labels));
}

defaulter(B('PodFailurePolicyOnPodConditionsPattern'), ['status'], (p, ord) => {
  if (isZero(p.status)) put(p, ord, 'status', 'True');
});

defaulter(
  B('CronJob'),
  ['spec.concurrencyPolicy', 'spec.suspend', 'spec.successfulJobsHistoryLimit', 'spec.failedJobsHistoryLimit'],
  (cj, ord) => {
    const spec = sub(cj, ord, 'spec');
    const so = orderOf(B('CronJobSpec'));
    if (isZero(spec.concurrencyPolicy)) put(spec, so, 'concurrencyPolicy', 'Allow');
    if (isNil(spec.suspend)) put(spec, so, 'suspend', false);
    if (isNil(spec.successfulJobsHistoryLimit)) put(spec, so, 'successfulJobsHistoryLimit', 3);
    if (isNil(spec.failedJobsHistoryLimit)) put(spec, so, 'failedJobsHistoryLimit', 1);
  },
);

// ---------------------------------------------------------------------------------------------
// networking.k8s.io/v1

defaulter(NET('NetworkPolicyPort'), ['protocol'], (p, ord) => {
  if (isNil(p.protocol)) put(p, ord, 'protocol', 'TCP');
});

defaulter(NET('NetworkPolicy'), ['spec.policyTypes'], (np, ord) => {
  const spec = sub(np, ord, 'spec');
  if (isEmpty(spec.policyTypes)) {
    // a policy without policyTypes is an Ingress policy, and an Egress one if it has egress rules
    const types = ['Ingress'];
    if (!isEmpty(spec.egress)) types.push('Egress');
    put(spec, orderOf(NET('NetworkPolicySpec')), 'policyTypes', types);
  }
});

defaulter(NET('IngressClass'), ['spec.parameters.scope'], (ic) => {
  const p = ic.spec?.parameters;
  if (isObject(p) && isNil(p.scope)) put(p, orderOf(NET('IngressClassParametersReference')), 'scope', 'Cluster');
});

// ---------------------------------------------------------------------------------------------
// rbac.authorization.k8s.io/v1

const RBAC_GROUP = 'rbac.authorization.k8s.io';
for (const kind of ['ClusterRoleBinding', 'RoleBinding']) {
  defaulter(RBAC(kind), ['roleRef.apiGroup'], (b, ord) => {
    const ref = sub(b, ord, 'roleRef');
    if (isEmpty(ref.apiGroup)) put(ref, orderOf(RBAC('RoleRef')), 'apiGroup', RBAC_GROUP);
  });
}

defaulter(RBAC('Subject'), ['apiGroup'], (s, ord) => {
  if (!isEmpty(s.apiGroup)) return;
  // ServiceAccount subjects keep the core group ""; users and groups are RBAC's
  if (s.kind === 'User' || s.kind === 'Group') put(s, ord, 'apiGroup', RBAC_GROUP);
});

// ---------------------------------------------------------------------------------------------
// scheduling.k8s.io/v1, storage.k8s.io/v1, discovery.k8s.io/v1

defaulter('io.k8s.api.scheduling.v1.PriorityClass', ['preemptionPolicy'], (pc, ord) => {
  if (isNil(pc.preemptionPolicy)) put(pc, ord, 'preemptionPolicy', 'PreemptLowerPriority');
});

defaulter(STO('StorageClass'), ['reclaimPolicy', 'volumeBindingMode'], (sc, ord) => {
  if (isNil(sc.reclaimPolicy)) put(sc, ord, 'reclaimPolicy', 'Delete');
  if (isNil(sc.volumeBindingMode)) put(sc, ord, 'volumeBindingMode', 'Immediate');
});

defaulter(
  STO('CSIDriver'),
  [
    'spec.attachRequired',
    'spec.podInfoOnMount',
    'spec.storageCapacity',
    'spec.fsGroupPolicy',
    'spec.volumeLifecycleModes',
    'spec.requiresRepublish',
    'spec.seLinuxMount',
  ],
  (d, ord) => {
    const spec = sub(d, ord, 'spec');
    const so = orderOf(STO('CSIDriverSpec'));
    if (isNil(spec.attachRequired)) put(spec, so, 'attachRequired', true);
    if (isNil(spec.podInfoOnMount)) put(spec, so, 'podInfoOnMount', false);
    if (isEmpty(spec.volumeLifecycleModes)) put(spec, so, 'volumeLifecycleModes', ['Persistent']);
    if (isNil(spec.storageCapacity)) put(spec, so, 'storageCapacity', false);
    if (isNil(spec.fsGroupPolicy)) put(spec, so, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
    if (isNil(spec.requiresRepublish)) put(spec, so, 'requiresRepublish', false);
    // SELinuxMountReadWriteOncePod: beta, on by default in 1.33
    if (isNil(spec.seLinuxMount)) put(spec, so, 'seLinuxMount', false);
  },
);

defaulter('io.k8s.api.discovery.v1.EndpointPort', ['name', 'protocol'], (p, ord) => {
  if (isNil(p.name)) put(p, ord, 'name', '');
  if (isNil(p.protocol)) put(p, ord, 'protocol', 'TCP');
});

// ---------------------------------------------------------------------------------------------
// autoscaling

const DEFAULT_CPU_UTILIZATION = 80;

defaulter(AS1('HorizontalPodAutoscaler'), ['spec.minReplicas', 'spec.targetCPUUtilizationPercentage'], (hpa, ord) => {
  const spec = sub(hpa, ord, 'spec');
  const so = orderOf(AS1('HorizontalPodAutoscalerSpec'));
  if (isNil(spec.minReplicas)) put(spec, so, 'minReplicas', 1);
  // Kubernetes applies the CPU default when it converts autoscaling/v1 to its stored form (a
  // metrics list); reading the object back as v1 shows it as targetCPUUtilizationPercentage.
  // An HPA that carries other metrics (in the autoscaling.alpha.kubernetes.io/metrics
  // annotation) gets no CPU default.
  const annotations = hpa.metadata?.annotations;
  const otherMetrics = isObject(annotations) && typeof annotations['autoscaling.alpha.kubernetes.io/metrics'] === 'string';
  if (isNil(spec.targetCPUUtilizationPercentage) && !otherMetrics) put(spec, so, 'targetCPUUtilizationPercentage', DEFAULT_CPU_UTILIZATION);
});

function scaleUpRules() {
  return {
    stabilizationWindowSeconds: 0,
    selectPolicy: 'Max',
    policies: [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
  };
}

function scaleDownRules() {
  return { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };
}

/** every unset part of a scaling rule from the defaults (stabilizationWindowSeconds stays unset
 *  for scale-down: the controller's --horizontal-pod-autoscaler-downscale-stabilization decides) */
function fillRules(from: any, to: Record<string, unknown>): Record<string, unknown> {
  if (isObject(from)) {
    if (!isNil(from.selectPolicy)) to.selectPolicy = from.selectPolicy;
    if (!isNil(from.stabilizationWindowSeconds)) to.stabilizationWindowSeconds = from.stabilizationWindowSeconds;
    if (!isNil(from.policies)) to.policies = from.policies;
    if (!isNil(from.tolerance)) to.tolerance = from.tolerance;
  }
  const ord = orderOf(AS2('HPAScalingRules'));
  const out: Record<string, unknown> = {};
  for (const k of [...Object.keys(to)].sort((a, b) => (ord.get(a) ?? 99) - (ord.get(b) ?? 99))) out[k] = to[k];
  return out;
}

defaulter(AS2('HorizontalPodAutoscaler'), ['spec.minReplicas', 'spec.metrics', 'spec.behavior.scaleUp', 'spec.behavior.scaleDown'], (hpa, ord) => {
  const spec = sub(hpa, ord, 'spec');
  const so = orderOf(AS2('HorizontalPodAutoscalerSpec'));
  if (isNil(spec.minReplicas)) put(spec, so, 'minReplicas', 1);
  if (isEmpty(spec.metrics)) {
    put(spec, so, 'metrics', [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } },
    ]);
  }
  if (isObject(spec.behavior)) {
    const bo = orderOf(AS2('HorizontalPodAutoscalerBehavior'));
    put(spec.behavior, bo, 'scaleUp', fillRules(spec.behavior.scaleUp, scaleUpRules()));
    put(spec.behavior, bo, 'scaleDown', fillRules(spec.behavior.scaleDown, scaleDownRules()));
  }
});

// ---------------------------------------------------------------------------------------------
// admissionregistration.k8s.io/v1

for (const kind of ['ValidatingWebhook', 'MutatingWebhook']) {
  const mutating = kind === 'MutatingWebhook';
  defaulter(
    ADM(kind),
    ['failurePolicy', 'matchPolicy', 'namespaceSelector', 'objectSelector', 'timeoutSeconds', ...(mutating ? ['reinvocationPolicy'] : [])],
    (w, ord) => {
      if (isNil(w.failurePolicy)) put(w, ord, 'failurePolicy', 'Fail');
      if (isNil(w.matchPolicy)) put(w, ord, 'matchPolicy', 'Equivalent');
      if (isNil(w.namespaceSelector)) put(w, ord, 'namespaceSelector', {});
      if (isNil(w.objectSelector)) put(w, ord, 'objectSelector', {});
      if (isNil(w.timeoutSeconds)) put(w, ord, 'timeoutSeconds', 10);
      if (mutating && isNil(w.reinvocationPolicy)) put(w, ord, 'reinvocationPolicy', 'Never');
    },
  );
}

defaulter(ADM('Rule'), ['scope'], (r, ord) => {
  if (isNil(r.scope)) put(r, ord, 'scope', '*');
});

defaulter(ADM('ServiceReference'), ['port'], (s, ord) => {
  if (isNil(s.port)) put(s, ord, 'port', 443);
});

defaulter(ADM('ValidatingAdmissionPolicySpec'), ['failurePolicy'], (s, ord) => {
  if (isNil(s.failurePolicy)) put(s, ord, 'failurePolicy', 'Fail');
});

defaulter(ADM('MatchResources'), ['matchPolicy', 'namespaceSelector', 'objectSelector'], (m, ord) => {
  if (isNil(m.matchPolicy)) put(m, ord, 'matchPolicy', 'Equivalent');
  if (isNil(m.namespaceSelector)) put(m, ord, 'namespaceSelector', {});
  if (isNil(m.objectSelector)) put(m, ord, 'objectSelector', {});
});

// ---------------------------------------------------------------------------------------------
// flowcontrol.apiserver.k8s.io/v1

defaulter(FC('FlowSchemaSpec'), ['matchingPrecedence'], (s, ord) => {
  if (isZero(s.matchingPrecedence)) put(s, ord, 'matchingPrecedence', 1000);
});

defaulter(FC('ExemptPriorityLevelConfiguration'), ['nominalConcurrencyShares', 'lendablePercent'], (e, ord) => {
  if (isNil(e.nominalConcurrencyShares)) put(e, ord, 'nominalConcurrencyShares', 0);
  if (isNil(e.lendablePercent)) put(e, ord, 'lendablePercent', 0);
});

defaulter(FC('LimitedPriorityLevelConfiguration'), ['nominalConcurrencyShares', 'lendablePercent'], (l, ord) => {
  if (isNil(l.nominalConcurrencyShares)) put(l, ord, 'nominalConcurrencyShares', 30);
  if (isNil(l.lendablePercent)) put(l, ord, 'lendablePercent', 0);
});

defaulter(FC('QueuingConfiguration'), ['handSize', 'queues', 'queueLengthLimit'], (q, ord) => {
  if (isZero(q.handSize)) put(q, ord, 'handSize', 8);
  if (isZero(q.queues)) put(q, ord, 'queues', 64);
  if (isZero(q.queueLengthLimit)) put(q, ord, 'queueLengthLimit', 50);
});

// ---------------------------------------------------------------------------------------------
// apiextensions.k8s.io/v1

function crdSpecDefaults(spec: any): void {
  const names = sub(spec, orderOf(CRD('CustomResourceDefinitionSpec')), 'names');
  const no = orderOf(CRD('CustomResourceDefinitionNames'));
  if (isEmpty(names.singular) && !isEmpty(names.kind)) put(names, no, 'singular', String(names.kind).toLowerCase());
  if (isEmpty(names.listKind) && !isEmpty(names.kind)) put(names, no, 'listKind', `${names.kind}List`);
  if (isNil(spec.conversion)) put(spec, orderOf(CRD('CustomResourceDefinitionSpec')), 'conversion', { strategy: 'None' });
}

defaulter(CRD('CustomResourceDefinition'), ['spec.names.singular', 'spec.names.listKind', 'spec.conversion', 'status.storedVersions'], (crd, ord) => {
  const spec = sub(crd, ord, 'spec');
  crdSpecDefaults(spec);
  const status = sub(crd, ord, 'status');
  if (isEmpty(status.storedVersions) && Array.isArray(spec.versions)) {
    const storage = spec.versions.find((v: any) => isObject(v) && v.storage === true);
    if (storage) put(status, orderOf(CRD('CustomResourceDefinitionStatus')), 'storedVersions', [storage.name]);
  }
});

defaulter(CRD('ServiceReference'), ['port'], (s, ord) => {
  if (isNil(s.port)) put(s, ord, 'port', 443);
});
