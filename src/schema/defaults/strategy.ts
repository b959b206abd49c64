// Defaults Kubernetes applies in a kind's registry strategy rather than in its scheme defaults,
// because they need server state (the object's uid, the old object, the cluster's service CIDRs).
// The registry calls these from its strategies; each follows Kubernetes 1.33's
// pkg/registry/<group>/<kind>/strategy.go (or the Service REST storage) as we read it.
import { stringifyJSON } from '../../codec/int64.js';
import { isIP } from 'node:net';
import { copyTemplateLabels } from './groups.js';
import { OBJECT_META } from './core.js';
import { isEmpty, isNil, isObject, orderOf, put, putMapKey, sub } from './engine.js';
import { goStrings, invalid, type Errs } from '../validation/errs.js';
import { externallyAccessible, needsHealthCheck } from '../validation/service.js';

// ---------------------------------------------------------------------------------------------
// Job: the generated selector

export const JOB_LABELS = {
  legacyJobName: 'job-name',
  jobName: 'batch.kubernetes.io/job-name',
  legacyControllerUid: 'controller-uid',
  controllerUid: 'batch.kubernetes.io/controller-uid',
} as const;

/**
 * The Job strategy's PrepareForCreate selector: unless spec.manualSelector is true, the pod
 * template gets the labels job-name and batch.kubernetes.io/job-name (the job's name) and
 * controller-uid and batch.kubernetes.io/controller-uid (its uid), each unless already set, and
 * spec.selector.matchLabels gets batch.kubernetes.io/controller-uid. Call it after the store has
 * set metadata.name and metadata.uid, before validation.
 *
 * It then repeats the one scheme default that depends on these labels (a Job without labels of
 * its own takes its template's labels), as Kubernetes shows it when it reads the job back (the
 * stored object is defaulted again on decode).
 */
export function generateJobSelector(job: any): void {
  if (!isObject(job)) return;
  const jobOrd = orderOf('io.k8s.api.batch.v1.Job');
  const spec = sub(job, jobOrd, 'spec');
  if (spec.manualSelector === true) return;
  const name = String(job.metadata?.name ?? '');
  const uid = String(job.metadata?.uid ?? '');
  const template = sub(spec, orderOf('io.k8s.api.batch.v1.JobSpec'), 'template');
  const meta = sub(template, orderOf('io.k8s.api.core.v1.PodTemplateSpec'), 'metadata');
  if (!isObject(meta.labels)) put(meta, orderOf(OBJECT_META), 'labels', {});
  const labels = meta.labels;
  for (const k of [JOB_LABELS.legacyJobName, JOB_LABELS.jobName]) if (!(k in labels)) putMapKey(labels, k, name);
  for (const k of [JOB_LABELS.legacyControllerUid, JOB_LABELS.controllerUid]) if (!(k in labels)) putMapKey(labels, k, uid);
  const selector = sub(spec, orderOf('io.k8s.api.batch.v1.JobSpec'), 'selector');
  if (!isObject(selector.matchLabels)) put(selector, orderOf('io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector'), 'matchLabels', {});
  if (!(JOB_LABELS.controllerUid in selector.matchLabels)) putMapKey(selector.matchLabels, JOB_LABELS.controllerUid, uid);
  copyTemplateLabels(job, jobOrd);
}

/**
 * A Job prepared by generateJobSelector under the generated name `from` that the store then
 * generated again (the first was taken): the job-name labels it gave the template, and the Job's
 * own labels copied from them, take the new name, as a preparation under the new name would have.
 */
export function renameJobSelector(job: any, from: string): void {
  if (!isObject(job) || job.spec?.manualSelector === true) return;
  const name = String(job.metadata?.name ?? '');
  for (const labels of [job.spec?.template?.metadata?.labels, job.metadata?.labels]) {
    if (!isObject(labels)) continue;
    for (const k of [JOB_LABELS.legacyJobName, JOB_LABELS.jobName]) if (labels[k] === from) labels[k] = name;
  }
}

// ---------------------------------------------------------------------------------------------
// DaemonSet: the template generation annotation

export const DAEMONSET_TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';

/**
 * apps/v1 DaemonSets carry their template generation in an annotation (the internal
 * spec.templateGeneration): 1 on create; on update the old value, plus one when the pod template
 * changed. The registry calls this from the DaemonSet strategy's prepareForCreate (old
 * undefined) and prepareForUpdate.
 */
export function setDaemonSetTemplateGeneration(ds: any, old?: any): void {
  if (!isObject(ds)) return;
  let gen = 1;
  if (old !== undefined) {
    const prev = Number.parseInt(String(old?.metadata?.annotations?.[DAEMONSET_TEMPLATE_GENERATION] ?? '0'), 10);
    gen = Number.isFinite(prev) ? prev : 0;
    if (stringifyJSON(old?.spec?.template ?? null) !== stringifyJSON(ds.spec?.template ?? null)) gen += 1;
  }
  const meta = sub(ds, orderOf('io.k8s.api.apps.v1.DaemonSet'), 'metadata');
  if (!isObject(meta.annotations)) put(meta, orderOf(OBJECT_META), 'annotations', {});
  putMapKey(meta.annotations, DAEMONSET_TEMPLATE_GENERATION, String(gen));
}

// ---------------------------------------------------------------------------------------------
// Service: IP families (the REST storage, before cluster IP allocation)

export type IPFamily = 'IPv4' | 'IPv6';

export interface ServiceNetworkConfig {
  /** the families of --service-cluster-ip-range, primary first: ['IPv4'], or ['IPv4', 'IPv6'] when dual-stack */
  families: IPFamily[];
}

const SERVICE_SPEC = 'io.k8s.api.core.v1.ServiceSpec';

function familyOf(ip: string): IPFamily | 'unknown' {
  const v = isIP(ip);
  return v === 4 ? 'IPv4' : v === 6 ? 'IPv6' : 'unknown';
}

function sameList(a: unknown, b: unknown): boolean {
  const x = Array.isArray(a) ? a : [];
  const y = Array.isArray(b) ? b : [];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** put the fields an allocation set (clusterIP, clusterIPs, healthCheckNodePort) where ServiceSpec declares them */
export function orderServiceSpec(svc: any): void {
  const spec = svc?.spec;
  if (!isObject(spec)) return;
  const ord = orderOf(SERVICE_SPEC);
  for (const k of ['clusterIP', 'clusterIPs', 'healthCheckNodePort']) {
    if (!(k in spec)) continue;
    const v = spec[k];
    delete spec[k];
    put(spec, ord, k, v);
  }
}

/**
 * On update, the fields a Service's new type has no use for are cleared when the update left them
 * as they were (so that changing only `type` passes validation, and what they held is released):
 * cluster IPs and IP families for ExternalName, node ports leaving NodePort/LoadBalancer, the
 * health check node port, allocateLoadBalancerNodePorts and loadBalancerClass leaving
 * LoadBalancer, externalTrafficPolicy for a service no longer reachable from outside; the load
 * balancer status goes with the LoadBalancer type. (Kubernetes' dropTypeDependentFields.)
 */
export function dropServiceTypeDependentFields(svc: any, old: any): void {
  const spec = svc?.spec;
  const oldSpec = old?.spec;
  if (!isObject(spec) || !isObject(oldSpec)) return;
  const type = (s: any) => s.type ?? 'ClusterIP';
  if (type(oldSpec) !== 'ExternalName' && type(spec) === 'ExternalName') {
    if ((spec.clusterIP ?? '') === (oldSpec.clusterIP ?? '') && sameList(spec.clusterIPs, oldSpec.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (sameList(spec.ipFamilies, oldSpec.ipFamilies)) delete spec.ipFamilies;
    if ((spec.ipFamilyPolicy ?? '') === (oldSpec.ipFamilyPolicy ?? '')) delete spec.ipFamilyPolicy;
  }
  const nodePorts = (s: any) => new Set<number>((Array.isArray(s.ports) ? s.ports : []).map((p: any) => p?.nodePort).filter((n: unknown) => typeof n === 'number' && n !== 0));
  const usesNodePorts = (s: any) => type(s) === 'NodePort' || type(s) === 'LoadBalancer';
  if (usesNodePorts(oldSpec) && !usesNodePorts(spec)) {
    const before = nodePorts(oldSpec);
    // ports may be added, removed or changed, as long as no node port is new
    if ([...nodePorts(spec)].every((n) => before.has(n))) for (const p of Array.isArray(spec.ports) ? spec.ports : []) if (isObject(p)) delete p.nodePort;
  }
  if (needsHealthCheck(old) && !needsHealthCheck(svc) && (spec.healthCheckNodePort ?? 0) === (oldSpec.healthCheckNodePort ?? 0)) delete spec.healthCheckNodePort;
  if (type(oldSpec) === 'LoadBalancer' && type(spec) !== 'LoadBalancer') {
    if (typeof spec.allocateLoadBalancerNodePorts === 'boolean' && spec.allocateLoadBalancerNodePorts === oldSpec.allocateLoadBalancerNodePorts) delete spec.allocateLoadBalancerNodePorts;
    if ((spec.loadBalancerClass ?? null) === (oldSpec.loadBalancerClass ?? null)) delete spec.loadBalancerClass;
  }
  if (externallyAccessible(old) && !externallyAccessible(svc) && (spec.externalTrafficPolicy ?? '') === (oldSpec.externalTrafficPolicy ?? '')) delete spec.externalTrafficPolicy;
  if (type(spec) !== 'LoadBalancer' && isObject(svc.status)) svc.status.loadBalancer = {};
}

/**
 * On create, a Service that names only spec.clusterIP (an old client) gets spec.clusterIPs from
 * it. Kubernetes does this before allocation (normalizeClusterIPs).
 */
export function normalizeServiceClusterIPs(svc: any): void {
  const spec = svc?.spec;
  if (!isObject(spec)) return;
  if (typeof spec.clusterIP === 'string' && spec.clusterIP !== '' && isEmpty(spec.clusterIPs)) {
    put(spec, orderOf(SERVICE_SPEC), 'clusterIPs', [spec.clusterIP]);
  }
}

/**
 * Kubernetes' initIPFamilyFields: defaults spec.ipFamilyPolicy (SingleStack; RequireDualStack for
 * a headless service without selector; the old policy on update) and spec.ipFamilies (from the
 * given clusterIPs, else the cluster's primary family, plus the secondary one for dual-stack
 * policies on a dual-stack cluster). ExternalName services get neither. Returns the errors
 * Kubernetes reports here (field path and message), empty when all is well.
 *
 * Call it after normalizeServiceClusterIPs and before allocating cluster IPs; the allocator then
 * fills spec.clusterIP/clusterIPs (one per family) and node ports.
 */
export function initServiceIPFamilies(svc: any, cluster: ServiceNetworkConfig, old?: any, preValidate?: (svc: any) => Errs): Errs {
  const spec = svc?.spec;
  if (!isObject(spec) || spec.type === 'ExternalName') return [];
  const ord = orderOf(SERVICE_SPEC);
  const oldSpec = isObject(old?.spec) ? old.spec : undefined;
  const errs: Errs = [];
  const configured = new Set(cluster.families);
  const selectorless = isEmpty(spec.selector);
  const headless = spec.clusterIP === 'None';

  // an unchanged PreferDualStack service is not upgraded or downgraded with the cluster
  if (
    oldSpec &&
    !isNil(spec.ipFamilyPolicy) &&
    oldSpec.type === spec.type &&
    (spec.type === 'ClusterIP' || spec.type === 'NodePort' || spec.type === 'LoadBalancer') &&
    spec.ipFamilyPolicy === 'PreferDualStack' &&
    (isNil(oldSpec.ipFamilyPolicy) || oldSpec.ipFamilyPolicy === 'PreferDualStack') &&
    sameList(oldSpec.clusterIPs, spec.clusterIPs) &&
    sameList(oldSpec.ipFamilies, spec.ipFamilies)
  ) {
    return [];
  }

  if (isNil(spec.ipFamilyPolicy)) {
    if (oldSpec && !isNil(oldSpec.ipFamilyPolicy)) put(spec, ord, 'ipFamilyPolicy', oldSpec.ipFamilyPolicy);
    else if (headless && selectorless) put(spec, ord, 'ipFamilyPolicy', 'RequireDualStack');
    else put(spec, ord, 'ipFamilyPolicy', 'SingleStack');
  }
  const policy: string = spec.ipFamilyPolicy;
  // a loose check of the cluster IP fields first (Kubernetes answers with its errors alone)
  const pre = preValidate?.(svc) ?? [];
  if (pre.length > 0) return pre;

  if (oldSpec) {
    if (policy === 'SingleStack') {
      if (sameList(oldSpec.clusterIPs, spec.clusterIPs) && Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 1) {
        spec.clusterIPs = spec.clusterIPs.slice(0, 1);
      }
      if (sameList(oldSpec.ipFamilies, spec.ipFamilies) && Array.isArray(spec.ipFamilies) && spec.ipFamilies.length > 1) {
        spec.ipFamilies = spec.ipFamilies.slice(0, 1);
      }
    } else {
      const len = (v: unknown) => (Array.isArray(v) ? v.length : 0);
      if (len(spec.clusterIPs) > 0 && len(spec.clusterIPs) < len(oldSpec.clusterIPs)) {
        errs.push(invalid('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary cluster IP"));
      }
      if (len(spec.ipFamilies) > 0 && len(spec.ipFamilies) < len(oldSpec.ipFamilies)) {
        errs.push(invalid('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary IP family"));
      }
    }
  }

  if (policy === 'SingleStack') {
    if (Array.isArray(spec.clusterIPs) && spec.clusterIPs.length === 2) {
      errs.push(invalid('spec.ipFamilyPolicy', policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"));
    }
    if (Array.isArray(spec.ipFamilies) && spec.ipFamilies.length === 2) {
      errs.push(invalid('spec.ipFamilyPolicy', policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"));
    }
  }

  // the families of given cluster IPs
  const families: string[] = Array.isArray(spec.ipFamilies) ? [...spec.ipFamilies] : [];
  if (Array.isArray(spec.clusterIPs)) {
    for (let i = 0; i < spec.clusterIPs.length; i++) {
      const ip = spec.clusterIPs[i];
      if (ip === 'None') break;
      const fam = familyOf(String(ip));
      if (i >= families.length) {
        if (fam === 'unknown' || !configured.has(fam)) errs.push(invalid(`spec.clusterIPs[${i}]`, goStrings(spec.clusterIPs), `${fam} is not configured on this cluster`));
        else families.push(fam);
      }
    }
  }
  if (errs.length > 0) return errs;
  const setFamilies = () => {
    if (families.length > 0) put(spec, ord, 'ipFamilies', families);
  };

  const primary = cluster.families[0] ?? 'IPv4';
  const other = (f: string) => (f === 'IPv4' ? 'IPv6' : 'IPv4');
  if (headless && selectorless) {
    if (families.length === 0) families.push(primary);
    if (families.length < 2 && policy !== 'SingleStack') families.push(other(families[0]!));
    setFamilies();
    return [];
  }

  if (policy === 'RequireDualStack' && configured.size < 2) {
    errs.push(invalid('spec.ipFamilyPolicy', policy, 'this cluster is not configured for dual-stack services'));
  }
  families.forEach((f, i) => {
    if (!configured.has(f as IPFamily)) errs.push(invalid(`spec.ipFamilies[${i}]`, f, 'not configured on this cluster'));
  });
  if (errs.length > 0) return errs;

  if (families.length === 0) families.push(primary);
  if (policy !== 'SingleStack' && families.length === 1 && configured.size === 2) families.push(other(families[0]!));
  setFamilies();
  return [];
}

// ---------------------------------------------------------------------------------------------
// CertificateSigningRequest: the requesting user

export interface RequestUser {
  name: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/**
 * The CertificateSigningRequest strategy on create: spec.username, uid, groups and extra are the
 * authenticated requester's (whatever the client sent), and the status starts empty.
 */
export function setCSRRequester(csr: any, user: RequestUser): void {
  if (!isObject(csr)) return;
  const spec = sub(csr, orderOf('io.k8s.api.certificates.v1.CertificateSigningRequest'), 'spec');
  const so = orderOf('io.k8s.api.certificates.v1.CertificateSigningRequestSpec');
  for (const k of ['username', 'uid', 'groups', 'extra']) delete spec[k];
  if (user.name) put(spec, so, 'username', user.name);
  if (user.uid) put(spec, so, 'uid', user.uid);
  if (user.groups && user.groups.length > 0) put(spec, so, 'groups', [...user.groups]);
  if (user.extra && Object.keys(user.extra).length > 0) {
    const extra: Record<string, string[]> = {};
    for (const k of Object.keys(user.extra).sort()) extra[k] = [...user.extra[k]!];
    put(spec, so, 'extra', extra);
  }
  csr.status = {};
}
