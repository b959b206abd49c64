// Printers for the remaining built-in groups: coordination, discovery, rbac, policy, scheduling,
// storage, networking, certificates, autoscaling, admissionregistration, node, flowcontrol and
// apiregistration.
import {
  age,
  arr,
  findCondition,
  formatLabelSelector,
  goSorted,
  humanDuration,
  int,
  intOrString,
  listWithMore,
  nameOf,
  obj,
  str,
} from './format.js';
import { loadBalancerAddresses } from './core.js';
import { hpaAsStored } from '../autoscaling.js';
import { canonicalQuantity } from './quantity.js';
import { AGE_COLUMN, NAME_COLUMN, col, type Printer } from './types.js';

// ---------------------------------------------------------------------------------------------
// coordination.k8s.io, discovery.k8s.io

/** core/v1 ComponentStatus: the Healthy condition of each control-plane component */
export const componentStatusPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Status', 'string', 'Whether the component reports itself healthy.'),
    col('Message', 'string', 'What the component said about its health.'),
    col('Error', 'string', 'Why the component could not be reached, if it could not.'),
  ],
  cells: (cs: any) => {
    let status = 'Unknown';
    let message = '';
    let error = '';
    for (const c of arr(cs?.conditions)) {
      if (c?.type !== 'Healthy') continue;
      status = c.status === 'True' ? 'Healthy' : 'Unhealthy';
      message = str(c.message);
      error = str(c.error);
      break;
    }
    return [nameOf(cs), status, message, error];
  },
};

/** autoscaling/v1 Scale, the scale subresource (`kubectl get deployment web --subresource=scale`) */
export const scalePrinter: Printer = {
  columns: [
    // (Kubernetes' scale columns give Name no format)
    { ...NAME_COLUMN, format: '' },
    col('Desired', 'integer', 'The number of replicas asked for, from spec.replicas.'),
    col('Available', 'integer', 'The number of replicas observed, from status.replicas.'),
    AGE_COLUMN,
  ],
  cells: (scale: any, now: number) => [nameOf(scale), Number(scale?.spec?.replicas ?? 0), Number(scale?.status?.replicas ?? 0), age(scale, now)],
};

export const leasePrinter: Printer = {
  columns: [NAME_COLUMN, col('Holder', 'string', 'The identity of the current holder of the lease.'), AGE_COLUMN],
  cells: (lease: any, now: number) => [nameOf(lease), str(lease?.spec?.holderIdentity), age(lease, now)],
};

function discoveryPorts(ports: unknown): string {
  const list: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  for (const p of arr(ports)) {
    if (list.length < max) {
      let port = '*';
      if (p?.port !== undefined && p?.port !== null) port = String(int(p.port));
      else if (p?.name !== undefined && p?.name !== null) port = str(p.name);
      list.push(port);
    } else if (list.length === max) {
      more = true;
    }
    count++;
  }
  return listWithMore(list, more, count, max);
}

function discoveryEndpoints(endpoints: unknown): string {
  const list: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  for (const ep of arr(endpoints)) {
    for (const address of arr(ep?.addresses)) {
      if (list.length < max) list.push(str(address));
      else if (list.length === max) more = true;
      count++;
    }
  }
  return listWithMore(list, more, count, max);
}

export const endpointSlicePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('AddressType', 'string', 'The kind of addresses in the slice: IPv4, IPv6 or FQDN.'),
    col('Ports', 'string', 'The port numbers the endpoints serve (at most three shown).'),
    col('Endpoints', 'string', 'The endpoint addresses in the slice (at most three shown).'),
    AGE_COLUMN,
  ],
  cells: (es: any, now: number) => [
    nameOf(es),
    str(es?.addressType),
    discoveryPorts(es?.ports),
    discoveryEndpoints(es?.endpoints),
    age(es, now),
  ],
};

// ---------------------------------------------------------------------------------------------
// rbac.authorization.k8s.io

function subjects(list: unknown): [string, string, string] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of arr(list)) {
    switch (s?.kind) {
      case 'ServiceAccount':
        sas.push(`${str(s.namespace)}/${str(s.name)}`);
        break;
      case 'User':
        users.push(str(s.name));
        break;
      case 'Group':
        groups.push(str(s.name));
        break;
    }
  }
  return [users.join(', '), groups.join(', '), sas.join(', ')];
}

function bindingPrinter(what: string): Printer {
  return {
    columns: [
      NAME_COLUMN,
      col('Role', 'string', 'The role the binding grants, as kind/name.'),
      AGE_COLUMN,
      col('Users', 'string', `The users the ${what} grants the role to.`, 1),
      col('Groups', 'string', `The groups the ${what} grants the role to.`, 1),
      col('ServiceAccounts', 'string', `The service accounts the ${what} grants the role to, as namespace/name.`, 1),
    ],
    cells(b: any, now: number): unknown[] {
      const ref = obj(b?.roleRef);
      return [nameOf(b), `${str(ref.kind)}/${str(ref.name)}`, age(b, now), ...subjects(b?.subjects)];
    },
  };
}

export const roleBindingPrinter = bindingPrinter('role binding');
export const clusterRoleBindingPrinter = bindingPrinter('cluster role binding');

// ---------------------------------------------------------------------------------------------
// policy, scheduling.k8s.io

export const podDisruptionBudgetPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Min Available', 'string', 'The number or percentage of pods that must stay available.'),
    col('Max Unavailable', 'string', 'The number or percentage of pods that may be unavailable.'),
    col('Allowed Disruptions', 'integer', 'How many pods may be disrupted right now.'),
    AGE_COLUMN,
  ],
  cells(pdb: any, now: number): unknown[] {
    const spec = obj(pdb?.spec);
    const minAvailable = spec.minAvailable != null ? intOrString(spec.minAvailable) : 'N/A';
    const maxUnavailable = spec.maxUnavailable != null ? intOrString(spec.maxUnavailable) : 'N/A';
    return [nameOf(pdb), minAvailable, maxUnavailable, int(pdb?.status?.disruptionsAllowed), age(pdb, now)];
  },
};

export const priorityClassPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Value', 'integer', 'The priority pods of this class get; higher runs first.'),
    col('Global-Default', 'boolean', 'Whether pods without a priority class get this one.'),
    AGE_COLUMN,
    col('PreemptionPolicy', 'string', 'Whether pods of this class may preempt pods of lower priority.'),
  ],
  cells: (pc: any, now: number) => [
    nameOf(pc),
    int(pc?.value),
    pc?.globalDefault === true,
    age(pc, now),
    pc?.preemptionPolicy != null ? str(pc.preemptionPolicy) : '',
  ],
};

// ---------------------------------------------------------------------------------------------
// storage.k8s.io, node.k8s.io

function isDefaultStorageClass(sc: any): boolean {
  const a = obj(sc?.metadata?.annotations);
  return a['storageclass.kubernetes.io/is-default-class'] === 'true' || a['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
}

export const storageClassPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Provisioner', 'string', 'The volume plugin or CSI driver that provisions volumes of this class.'),
    col('ReclaimPolicy', 'string', 'What happens to volumes of this class when their claim is released.'),
    col('VolumeBindingMode', 'string', 'When claims are bound and provisioned: Immediate or WaitForFirstConsumer.'),
    col('AllowVolumeExpansion', 'string', 'Whether volumes of this class may be resized.'),
    AGE_COLUMN,
  ],
  cells(sc: any, now: number): unknown[] {
    const name = nameOf(sc) + (isDefaultStorageClass(sc) ? ' (default)' : '');
    return [
      name,
      str(sc?.provisioner),
      sc?.reclaimPolicy != null ? str(sc.reclaimPolicy) : 'Delete',
      sc?.volumeBindingMode != null ? str(sc.volumeBindingMode) : 'Immediate',
      sc?.allowVolumeExpansion === true,
      age(sc, now),
    ];
  },
};

export const csiDriverPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('AttachRequired', 'boolean', 'Whether volumes of the driver need an attach step before mounting.'),
    col('PodInfoOnMount', 'boolean', 'Whether the driver is told about the pod when a volume is mounted.'),
    col('StorageCapacity', 'boolean', 'Whether the scheduler takes the driver\'s reported capacity into account.'),
    col('TokenRequests', 'string', 'The audiences of the service account tokens passed to the driver.'),
    col('RequiresRepublish', 'boolean', 'Whether the driver wants its volumes mounted again periodically.'),
    col('Modes', 'string', 'The volume lifecycle modes the driver supports.'),
    AGE_COLUMN,
  ],
  cells(d: any, now: number): unknown[] {
    const spec = obj(d?.spec);
    const modes = arr(spec.volumeLifecycleModes).map(str).join(',');
    const tokens = spec.tokenRequests != null ? arr(spec.tokenRequests).map((t) => str(t?.audience)).join(',') : '<unset>';
    return [
      nameOf(d),
      spec.attachRequired !== false,
      spec.podInfoOnMount === true,
      spec.storageCapacity === true,
      tokens,
      spec.requiresRepublish === true,
      modes === '' ? '<none>' : modes,
      age(d, now),
    ];
  },
};

export const csiNodePrinter: Printer = {
  columns: [NAME_COLUMN, col('Drivers', 'integer', 'The number of CSI drivers registered on the node.'), AGE_COLUMN],
  cells: (n: any, now: number) => [nameOf(n), arr(n?.spec?.drivers).length, age(n, now)],
};

export const csiStorageCapacityPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('StorageClassName', 'string', 'The storage class the capacity applies to.'),
    col('Capacity', 'string', 'The capacity available for new volumes.'),
  ],
  cells: (c: any) => [nameOf(c), str(c?.storageClassName), c?.capacity != null ? canonicalQuantity(c.capacity) : '<unset>'],
};

export const volumeAttachmentPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Attacher', 'string', 'The driver that attaches the volume.', 0, 'name'),
    col('PV', 'string', 'The persistent volume being attached.'),
    col('Node', 'string', 'The node the volume is attached to.'),
    col('Attached', 'boolean', 'Whether the attach operation has succeeded.'),
    AGE_COLUMN,
  ],
  cells: (va: any, now: number) => [
    nameOf(va),
    str(va?.spec?.attacher),
    str(va?.spec?.source?.persistentVolumeName),
    str(va?.spec?.nodeName),
    va?.status?.attached === true,
    age(va, now),
  ],
};

export const runtimeClassPrinter: Printer = {
  columns: [NAME_COLUMN, col('Handler', 'string', 'The container runtime configuration pods of this class run with.'), AGE_COLUMN],
  cells: (rc: any, now: number) => [nameOf(rc), str(rc?.handler), age(rc, now)],
};

// ---------------------------------------------------------------------------------------------
// networking.k8s.io

function ingressHosts(rules: unknown): string {
  const all = arr(rules);
  const list: string[] = [];
  const max = 3;
  let more = false;
  for (const rule of all) {
    if (list.length === max) more = true;
    if (!more && str(rule?.host) !== '') list.push(str(rule.host));
  }
  if (list.length === 0) return '*';
  const ret = list.join(',');
  return more ? `${ret} + ${all.length - max} more...` : ret;
}

export const ingressPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Class', 'string', 'The ingress class that handles the ingress.'),
    col('Hosts', 'string', 'The host names the rules match (at most three shown).'),
    col('Address', 'string', 'The load-balancer addresses of the ingress.'),
    col('Ports', 'string', 'The ports the ingress serves: 80, and 443 when TLS is configured.'),
    AGE_COLUMN,
  ],
  cells(ing: any, now: number): unknown[] {
    const spec = obj(ing?.spec);
    return [
      nameOf(ing),
      spec.ingressClassName != null ? str(spec.ingressClassName) : '<none>',
      ingressHosts(spec.rules),
      loadBalancerAddresses(ing?.status?.loadBalancer),
      arr(spec.tls).length !== 0 ? '80, 443' : '80',
      age(ing, now),
    ];
  },
};

export const ingressClassPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Controller', 'string', 'The controller that implements ingresses of this class.'),
    col('Parameters', 'string', 'The object holding extra configuration for the controller.'),
    AGE_COLUMN,
  ],
  cells(ic: any, now: number): unknown[] {
    const p = ic?.spec?.parameters;
    let parameters = '<none>';
    if (p != null) {
      parameters = str(p.kind);
      if (p.apiGroup != null) parameters += '.' + str(p.apiGroup);
      parameters += '/' + str(p.name);
    }
    return [nameOf(ic), str(ic?.spec?.controller), parameters, age(ic, now)];
  },
};

export const networkPolicyPrinter: Printer = {
  columns: [NAME_COLUMN, col('Pod-Selector', 'string', 'The labels of the pods the policy applies to.'), AGE_COLUMN],
  cells: (np: any, now: number) => [nameOf(np), formatLabelSelector(obj(np?.spec?.podSelector)), age(np, now)],
};

export const serviceCIDRPrinter: Printer = {
  columns: [NAME_COLUMN, col('CIDRs', 'string', 'The IP ranges service cluster IPs are allocated from.'), AGE_COLUMN],
  cells: (sc: any, now: number) => [nameOf(sc), arr(sc?.spec?.cidrs).map(str).join(','), age(sc, now)],
};

export const ipAddressPrinter: Printer = {
  columns: [NAME_COLUMN, col('ParentRef', 'string', 'The object the IP address is allocated to.')],
  // (Kubernetes' printer adds an Age cell its columns do not declare; clients drop it)
  cells(ip: any, now: number): unknown[] {
    const ref = ip?.spec?.parentRef;
    let parent = '<none>';
    if (ref != null) {
      const group = str(ref.group);
      const resource = str(ref.resource);
      parent = (group === '' ? resource : `${resource}.${group}`).toLowerCase();
      if (str(ref.namespace) !== '') parent += '/' + str(ref.namespace);
      parent += '/' + str(ref.name);
    }
    return [nameOf(ip), parent, age(ip, now)];
  },
};

// ---------------------------------------------------------------------------------------------
// certificates.k8s.io

function csrCondition(csr: any): string {
  let approved = false;
  let denied = false;
  let failed = false;
  for (const c of arr(csr?.status?.conditions)) {
    if (c?.type === 'Approved') approved = true;
    else if (c?.type === 'Denied') denied = true;
    else if (c?.type === 'Failed') failed = true;
  }
  let status = denied ? 'Denied' : approved ? 'Approved' : 'Pending';
  if (failed) status += ',Failed';
  if (str(csr?.status?.certificate) !== '') status += ',Issued';
  return status;
}

export const certificateSigningRequestPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    AGE_COLUMN,
    col('SignerName', 'string', 'The signer asked to sign the certificate.'),
    col('Requestor', 'string', 'The user who created the request.'),
    col('RequestedDuration', 'string', 'The validity period the requestor asked for.'),
    col('Condition', 'string', 'Whether the request is Pending, Approved or Denied, and whether it Failed or was Issued.'),
  ],
  cells(csr: any, now: number): unknown[] {
    const spec = obj(csr?.spec);
    const requested = spec.expirationSeconds != null ? humanDuration(int(spec.expirationSeconds) * 1000) : '<none>';
    return [nameOf(csr), age(csr, now), str(spec.signerName) || '<none>', str(spec.username), requested, csrCondition(csr)];
  },
};

// ---------------------------------------------------------------------------------------------
// autoscaling

/** A Quantity pointer as Go prints it: "<nil>" when absent. */
function q(v: unknown): string {
  return v === undefined || v === null ? '<nil>' : canonicalQuantity(v);
}

/** The spec and status metrics, in the autoscaling/v2 shape, from a v1 or v2 object. */
function hpaMetrics(hpa: any): { specs: any[]; statuses: any[] } {
  // (a v1 object: its CPU target and the metrics of its annotations, in the stored order)
  const v2 = hpa != null && typeof hpa === 'object' ? hpaAsStored(hpa) : undefined;
  return { specs: arr(v2?.spec?.metrics), statuses: arr(v2?.status?.currentMetrics) };
}

function valueMetric(spec: any, status: any): string {
  // External and Object metrics: a target average value, or a target total value.
  const target = obj(spec?.target);
  if (target.averageValue != null) {
    const current = status != null && status.current?.averageValue != null ? q(status.current.averageValue) : '<unknown>';
    return `${current}/${q(target.averageValue)} (avg)`;
  }
  const current = status != null ? q(status.current?.value) : '<unknown>';
  return `${current}/${q(target.value)}`;
}

function resourceMetric(spec: any, status: any): string {
  const target = obj(spec?.target);
  const name = str(spec?.name);
  if (target.averageValue != null) {
    const current = status != null ? q(status.current?.averageValue) : '<unknown>';
    return `${name}: ${current}/${q(target.averageValue)}`;
  }
  const current = status != null && status.current?.averageUtilization != null ? `${int(status.current.averageUtilization)}%` : '<unknown>';
  const want = target.averageUtilization != null ? `${int(target.averageUtilization)}%` : '<auto>';
  return `${name}: ${current}/${want}`;
}

function hpaTargets(hpa: any): string {
  const { specs, statuses } = hpaMetrics(hpa);
  if (specs.length === 0) return '<none>';
  let list: string[] = [];
  const max = 2;
  specs.forEach((spec, i) => {
    const st = statuses[i];
    switch (spec?.type) {
      case 'External':
        list.push(valueMetric(spec.external, st?.external));
        break;
      case 'Pods': {
        const current = st?.pods != null ? q(st.pods.current?.averageValue) : '<unknown>';
        list.push(`${current}/${q(spec.pods?.target?.averageValue)}`);
        break;
      }
      case 'Object':
        list.push(valueMetric(spec.object, st?.object));
        break;
      case 'Resource':
        list.push(resourceMetric(spec.resource, st?.resource));
        break;
      case 'ContainerResource':
        list.push(resourceMetric(spec.containerResource, st?.containerResource));
        break;
      default:
        list.push('<unknown type>');
    }
  });
  const count = list.length;
  if (count > max) {
    list = list.slice(0, max);
    return `${list.join(', ')} + ${count - max} more...`;
  }
  return list.join(', ');
}

export const horizontalPodAutoscalerPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Reference', 'string', 'The object the autoscaler scales, as kind/name.'),
    col('Targets', 'string', 'Current values of the metrics against their targets (at most two shown).'),
    col('MinPods', 'string', 'The fewest replicas the autoscaler scales down to.'),
    col('MaxPods', 'string', 'The most replicas the autoscaler scales up to.'),
    col('Replicas', 'string', 'The number of replicas the target has now.'),
    AGE_COLUMN,
  ],
  cells(hpa: any, now: number): unknown[] {
    const spec = obj(hpa?.spec);
    const ref = obj(spec.scaleTargetRef);
    return [
      nameOf(hpa),
      `${str(ref.kind)}/${str(ref.name)}`,
      hpaTargets(hpa),
      spec.minReplicas != null ? String(int(spec.minReplicas)) : '<unset>',
      int(spec.maxReplicas),
      int(hpa?.status?.currentReplicas),
      age(hpa, now),
    ];
  },
};

// ---------------------------------------------------------------------------------------------
// admissionregistration.k8s.io

function webhookConfigurationPrinter(): Printer {
  return {
    columns: [NAME_COLUMN, col('Webhooks', 'integer', 'The number of webhooks in the configuration.'), AGE_COLUMN],
    cells: (c: any, now: number) => [nameOf(c), arr(c?.webhooks).length, age(c, now)],
  };
}

export const mutatingWebhookConfigurationPrinter = webhookConfigurationPrinter();
export const validatingWebhookConfigurationPrinter = webhookConfigurationPrinter();

function paramKind(spec: any): string {
  const pk = spec?.paramKind;
  return pk != null ? `${str(pk.apiVersion)}/${str(pk.kind)}` : '<unset>';
}

function paramRef(spec: any): string {
  const pr = spec?.paramRef;
  if (pr == null) return '<unset>';
  if (str(pr.name) !== '') return str(pr.namespace) !== '' ? `${str(pr.namespace)}/${str(pr.name)}` : `*/${str(pr.name)}`;
  if (pr.selector != null) return goLabelSelectorDump(pr.selector);
  return '<unset>';
}

/** The Go struct dump of a metav1.LabelSelector (its generated String method), which is what
 * Kubernetes shows for a binding's parameter selector. */
export function goLabelSelectorDump(selector: unknown): string {
  const sel = obj(selector);
  const labels = obj(sel.matchLabels);
  const keys = goSorted(Object.keys(labels));
  const ml = `map[string]string{${keys.map((k) => `${k}: ${str(labels[k])},`).join('')}}`;
  const me = arr(sel.matchExpressions)
    .map((e) => `LabelSelectorRequirement{Key:${str(e?.key)},Operator:${str(e?.operator)},Values:[${arr(e?.values).map(str).join(' ')}],},`)
    .join('');
  return `&LabelSelector{MatchLabels:${ml},MatchExpressions:[]LabelSelectorRequirement{${me}},}`;
}

export const validatingAdmissionPolicyPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Validations', 'integer', 'The number of validation rules in the policy.'),
    col('ParamKind', 'string', 'The kind of object that parameterizes the policy.'),
    AGE_COLUMN,
  ],
  cells: (p: any, now: number) => [nameOf(p), arr(p?.spec?.validations).length, paramKind(p?.spec), age(p, now)],
};

export const mutatingAdmissionPolicyPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Mutations', 'integer', 'The number of mutations in the policy.'),
    col('ParamKind', 'string', 'The kind of object that parameterizes the policy.'),
    AGE_COLUMN,
  ],
  cells: (p: any, now: number) => [nameOf(p), arr(p?.spec?.mutations).length, paramKind(p?.spec), age(p, now)],
};

function policyBindingPrinter(): Printer {
  return {
    columns: [
      NAME_COLUMN,
      col('PolicyName', 'string', 'The policy the binding applies.'),
      col('ParamRef', 'string', 'The parameter object (or selector) the binding passes to the policy.'),
      AGE_COLUMN,
    ],
    cells: (b: any, now: number) => [nameOf(b), str(b?.spec?.policyName), paramRef(b?.spec), age(b, now)],
  };
}

export const validatingAdmissionPolicyBindingPrinter = policyBindingPrinter();
export const mutatingAdmissionPolicyBindingPrinter = policyBindingPrinter();

// ---------------------------------------------------------------------------------------------
// flowcontrol.apiserver.k8s.io, apiregistration.k8s.io

export const flowSchemaPrinter: Printer = {
  // a list in the order the schemas are tried: by matching precedence, then by name
  order: (objs) =>
    [...objs].sort((a, b) => {
      const pa = Number(a?.spec?.matchingPrecedence ?? 0);
      const pb = Number(b?.spec?.matchingPrecedence ?? 0);
      if (pa !== pb) return pa - pb;
      const na = str(a?.metadata?.name);
      const nb = str(b?.metadata?.name);
      return na < nb ? -1 : na > nb ? 1 : 0;
    }),
  columns: [
    NAME_COLUMN,
    col('PriorityLevel', 'string', 'The priority level requests matching the schema are assigned to.'),
    col('MatchingPrecedence', 'string', 'The order in which schemas are tried; lower numbers first.'),
    col('DistinguisherMethod', 'string', 'How matching requests are divided into flows: ByUser, ByNamespace or none.'),
    AGE_COLUMN,
    col('MissingPL', 'string', 'Whether the referenced priority level does not exist.'),
  ],
  cells(fs: any, now: number): unknown[] {
    const spec = obj(fs?.spec);
    const dangling = findCondition(fs?.status?.conditions, 'Dangling');
    return [
      nameOf(fs),
      str(spec.priorityLevelConfiguration?.name),
      int(spec.matchingPrecedence),
      spec.distinguisherMethod != null ? str(spec.distinguisherMethod.type) : '<none>',
      age(fs, now),
      dangling !== undefined ? str(dangling.status) : '?',
    ];
  },
};

export const priorityLevelConfigurationPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Type', 'string', 'Whether requests of this level are Limited or Exempt.'),
    col('NominalConcurrencyShares', 'string', "The level's share of the server's concurrency limit."),
    col('Queues', 'string', 'The number of queues of the level.'),
    col('HandSize', 'string', 'The number of queues each flow is shuffle-sharded over.'),
    col('QueueLengthLimit', 'string', 'The most requests a queue may hold.'),
    AGE_COLUMN,
  ],
  cells(pl: any, now: number): unknown[] {
    const spec = obj(pl?.spec);
    let ncs: unknown = '<none>';
    let queues: unknown = '<none>';
    let handSize: unknown = '<none>';
    let queueLengthLimit: unknown = '<none>';
    if (spec.limited != null) {
      ncs = int(spec.limited.nominalConcurrencyShares);
      const queuing = spec.limited.limitResponse?.queuing;
      if (queuing != null) {
        queues = int(queuing.queues);
        handSize = int(queuing.handSize);
        queueLengthLimit = int(queuing.queueLengthLimit);
      }
    }
    return [nameOf(pl), str(spec.type), ncs, queues, handSize, queueLengthLimit, age(pl, now)];
  },
};

export const apiServicePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Service', 'string', 'The service that serves the API, as namespace/name, or Local when built in.'),
    col('Available', 'string', 'Whether the API is reachable, with the reason when it is not.'),
    AGE_COLUMN,
  ],
  cells(svc: any, now: number): unknown[] {
    const ref = svc?.spec?.service;
    const service = ref != null ? `${str(ref.namespace)}/${str(ref.name)}` : 'Local';
    let available = 'Unknown';
    const c = findCondition(svc?.status?.conditions, 'Available');
    if (c !== undefined) {
      if (c.status === 'True') available = 'True';
      else if (str(c.reason) !== '') available = `${str(c.status)} (${str(c.reason)})`;
      else available = str(c.status);
    }
    return [nameOf(svc), service, available, age(svc, now)];
  },
};
