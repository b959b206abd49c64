// The kubelet's predicate admission (pkg/kubelet/lifecycle/predicate.go): before a pod's first
// sandbox, the node is asked whether the pod may run on it at all. The checks, in the kubelet's
// order, and what a refusal says (the first reason only):
//
//   the pod's `kubernetes.io/os` label (a label of the pod, as the kubelet reads it) other than
//     linux: PodOSSelectorNodeLabelDoesNotMatch; spec.os.name other than linux: PodOSNotSupported
//   spec.securityContext.supplementalGroupsPolicy Strict on a node whose
//     status.features.supplementalGroupsPolicy is not true: SupplementalGroupsPolicyNotSupported
//   the scheduler's AdmissionCheck over the node and the other pods admitted here and not ended
//     (the kubelet's active pods), the pod's extended resources the node has none of left out:
//       resources (pods, cpu, memory, ephemeral-storage, then the scalar resources): OutOf<name>,
//         `Node didn't have enough resource: <name>, requested: <n>, used: <n>, capacity: <n>`
//         (cpu in millicores, the others in units)
//       required node affinity and spec.nodeSelector (NodeAffinity), spec.nodeName (NodeName),
//         host ports (NodePorts): `Predicate <plugin> failed: <the plugin's reason>`
//   a NoExecute taint the pod does not tolerate (not asked of static pods): TaintToleration
//
// The node is the API server's Node (the kubelet's node lister), read with a GET and kept for a
// second (a NodeAffinity refusal on a kept Node is asked again of a fresh read, so that labels
// just added count); without an API server, or when it cannot be read, the node the kubelet would
// register (its labels, taints and resources: getNodeAnyWay's initialNode).
//
// Left out: the kubelet's critical pod admission handler, which admits a critical pod (static,
// mirror, or priority 2000000000 and more) refused for resources alone by preempting pods of lower
// priority. Here such a pod is refused as any other (OutOf<name>).
import { readFileSync, statSync } from 'node:fs';
import type { Logger } from '../client/log.js';
import { appArmorRequired } from './podspec.js';
import { isCriticalPod, isStaticPod } from './staticpods.js';
import { isObject } from '../schema/defaults/engine.js';
import type { RESTClient } from '../client/rest.js';
import { resourceList } from '../schema/resourcelist.js';
import {
  ERR_NODE_AFFINITY,
  ERR_NODE_NAME,
  ERR_NODE_PORTS,
  filterNodePorts,
  insufficientResources,
  matchesRequiredNodeAffinity,
  newNodeInfo,
  podHostPorts,
  podRequests,
  resourceOf,
  summarizePod,
  tolerationsTolerateTaint,
  type InsufficientResource,
  type NodeInfo,
  type Taint,
} from '../scheduler/framework.js';

export const ERR_UNTOLERATED_TAINT = "node(s) had taints that the pod didn't tolerate";
const OS = 'linux';
const LABEL_OS = 'kubernetes.io/os';
/** how long a Node read from the API server answers admissions */
const NODE_CACHE_MS = 1000;

export interface Refusal {
  reason: string;
  message: string;
}

/** a reason the pod does not fit (InsufficientResourceError or PredicateFailureError) */
type FailureReason = InsufficientResource | { plugin: string; desc: string };

/** v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io, a valid quota name with `requests.` */
export function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/') || name.includes('kubernetes.io/') || name.startsWith('requests.')) return false;
  const q = `requests.${name}`;
  const slash = q.indexOf('/');
  if (slash !== q.lastIndexOf('/')) return false;
  const prefix = q.slice(0, slash);
  const local = q.slice(slash + 1);
  const dns = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  return prefix.length <= 253 && dns.test(prefix) && local.length > 0 && local.length <= 63 && /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(local);
}

/** removeMissingExtendedResources: the containers' requests without the extended resources the node has none of */
export function removeMissingExtendedResources(pod: any, info: NodeInfo): any {
  const filter = (containers: unknown) =>
    Array.isArray(containers)
      ? containers.map((c: any) => {
          const reqs = c?.resources?.requests;
          if (!isObject(reqs)) return c;
          const kept = Object.fromEntries(Object.entries(reqs).filter(([name]) => !isExtendedResourceName(name) || info.allocatable.scalar.has(name)));
          return { ...c, resources: { ...c.resources, requests: kept } };
        })
      : containers;
  const spec = isObject(pod?.spec) ? pod.spec : {};
  return { ...pod, spec: { ...spec, containers: filter(spec.containers), initContainers: filter(spec.initContainers) } };
}

/** generalFilter: AdmissionCheck (every failure), then the NoExecute taints of all but static pods */
export function generalFilter(pod: any, info: NodeInfo): FailureReason[] {
  const reasons: FailureReason[] = insufficientResources(resourceOf(podRequests(pod)), info);
  if (!matchesRequiredNodeAffinity(pod, info.node)) reasons.push({ plugin: 'NodeAffinity', desc: ERR_NODE_AFFINITY });
  const want = pod?.spec?.nodeName;
  if (want && want !== info.name) reasons.push({ plugin: 'NodeName', desc: ERR_NODE_NAME });
  if (filterNodePorts(podHostPorts(pod), info)) reasons.push({ plugin: 'NodePorts', desc: ERR_NODE_PORTS });
  if (!isStaticPod(pod)) {
    const tolerations = Array.isArray(pod?.spec?.tolerations) ? pod.spec.tolerations : [];
    const taints: Taint[] = Array.isArray(info.node?.spec?.taints) ? info.node.spec.taints : [];
    if (taints.some((t) => t?.effect === 'NoExecute' && !tolerationsTolerateTaint(tolerations, t))) reasons.push({ plugin: 'TaintToleration', desc: ERR_UNTOLERATED_TAINT });
  }
  return reasons;
}

/** the kubelet's reason and message for the first failure */
function refusalOf(r: FailureReason): Refusal {
  if ('plugin' in r) return { reason: r.plugin, message: `Predicate ${r.plugin} failed: ${r.desc}` };
  return { reason: `OutOf${r.resource}`, message: `Node didn't have enough resource: ${r.resource}, requested: ${r.requested}, used: ${r.used}, capacity: ${r.capacity}` };
}

/**
 * The predicate admission of `pod` on `node`, with `others` the pods admitted on the node and not
 * ended (without `pod`): undefined admits it.
 */
export function admitPod(pod: any, node: any, others: readonly any[]): Refusal | undefined {
  // the checks preemption cannot help come first
  const podOS = pod?.metadata?.labels?.[LABEL_OS];
  // (the node's own label counts as linux whatever it says: the kubelet runs on linux)
  if (podOS !== undefined && podOS !== OS) return { reason: 'PodOSSelectorNodeLabelDoesNotMatch', message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label" };
  if (isObject(pod?.spec?.os) && pod.spec.os.name !== OS) return { reason: 'PodOSNotSupported', message: "Failed to admit pod as the OS field doesn't match node OS" };
  // (SupplementalGroupsPolicy is beta in 1.33: a Strict pod needs a node that says it supports it)
  const policy = pod?.spec?.securityContext?.supplementalGroupsPolicy;
  if (policy === 'Strict' && node?.status?.features?.supplementalGroupsPolicy !== true) {
    return { reason: 'SupplementalGroupsPolicyNotSupported', message: 'SupplementalGroupsPolicy=Strict is not supported in this node' };
  }
  const info = newNodeInfo(node, others.map(summarizePod));
  let reasons = generalFilter(removeMissingExtendedResources(pod, info), info);
  // (the critical pod admission handler: a critical pod is refused for its other reasons alone;
  // refused for resources alone, the kubelet would preempt pods for it, which Keelson does not)
  if (isCriticalPod(pod)) {
    const other = reasons.filter((r) => 'plugin' in r);
    if (other.length) reasons = other;
  }
  return reasons.length ? refusalOf(reasons[0]!) : undefined;
}

export interface PredicateAdmitOptions {
  nodeName: string;
  /** the kubelet's client; none in standalone mode */
  client: RESTClient | undefined;
  /** the Node the kubelet would register, with its capacity and allocatable (initialNode) */
  initialNode: () => any;
  /** the pods admitted and not ended, with their admitted resources */
  admittedPods: () => any[];
  log: Logger;
}

export class PredicateAdmitHandler {
  private cached?: { node: any; at: number };
  private inflight?: Promise<any>;
  /** pods admitted here whose admission the pod workers have not recorded yet (until the next turn of the event loop) */
  private readonly justAdmitted = new Map<string, any>();

  constructor(private readonly o: PredicateAdmitOptions) {}

  /** getNodeAnyWay: the API server's Node (kept for a second), else the node the kubelet would register */
  private async node(fresh = false): Promise<any> {
    const client = this.o.client;
    if (!client) return this.o.initialNode();
    if (!fresh && this.cached && Date.now() - this.cached.at < NODE_CACHE_MS) return this.cached.node;
    this.inflight ??= client
      .json({ method: 'GET', path: `/api/v1/nodes/${encodeURIComponent(this.o.nodeName)}` })
      .then((node) => {
        this.cached = { node, at: Date.now() };
        return node;
      })
      .catch((e) => {
        this.o.log.v(2).info('Could not read the Node for admission; using the node the kubelet would register', { node: this.o.nodeName, err: (e as Error).message });
        return this.o.initialNode();
      })
      .finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  /** the admission of `pod`: undefined admits it */
  async admit(pod: any): Promise<Refusal | undefined> {
    const uid = pod?.metadata?.uid;
    const decide = (node: any) => {
      const others = this.o.admittedPods().filter((p) => p?.metadata?.uid !== uid);
      const seen = new Set(others.map((p) => p?.metadata?.uid));
      for (const [u, p] of this.justAdmitted) if (u !== uid && !seen.has(u)) others.push(p);
      return admitPod(pod, node, others);
    };
    const cached = this.cached?.node;
    let node = await this.node();
    let refused = decide(node);
    // (a Node kept from an earlier read may miss labels just added: node affinity is asked again of a fresh one)
    if (refused?.reason === 'NodeAffinity' && node === cached) {
      node = await this.node(true);
      refused = decide(node);
    }
    if (refused) {
      const key = `${pod?.metadata?.namespace}/${pod?.metadata?.name}`;
      this.o.log.v(2).info('Predicate failed on Pod', { pod: key, err: refused.message });
      if (refused.reason.startsWith('OutOf') && isCriticalPod(pod)) this.o.log.info('Critical pod refused for resources: no lower-priority pods are preempted for it on this node', { pod: key });
      return refused;
    }
    // (the pod workers mark the pod admitted as soon as this resolves; until then it counts here)
    this.justAdmitted.set(uid, pod);
    setImmediate(() => this.justAdmitted.delete(uid));
    return undefined;
  }
}

/**
 * The kubelet's AppArmor validator's host check (asked once, at start): the kernel's AppArmor
 * must be there and enabled (runc's IsEnabled). Why it cannot enforce profiles, or undefined.
 */
export function appArmorHostError(): string | undefined {
  try {
    statSync('/sys/kernel/security/apparmor');
    if (readFileSync('/sys/module/apparmor/parameters/enabled', 'utf8').startsWith('Y')) return undefined;
  } catch {
    /* not there: not enabled */
  }
  return 'AppArmor is not enabled on the host';
}

/**
 * The kubelet's AppArmor admit handler (after the predicates'): a pending pod that asks for a
 * profile other than Unconfined, on a host that cannot enforce one, is refused (reason AppArmor).
 */
export function admitAppArmor(pod: any, hostError: string | undefined): Refusal | undefined {
  if ((pod?.status?.phase ?? 'Pending') !== 'Pending' || !hostError || !appArmorRequired(pod)) return undefined;
  return { reason: 'AppArmor', message: `Cannot enforce AppArmor: ${hostError}` };
}
