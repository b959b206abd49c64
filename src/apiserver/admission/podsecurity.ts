// PodSecurity: the Pod Security Standards (privileged, baseline, restricted) applied per
// namespace through its labels:
//   pod-security.kubernetes.io/enforce[-version]  a pod that violates the level is refused
//   pod-security.kubernetes.io/audit[-version]    a violation is recorded as an audit annotation
//   pod-security.kubernetes.io/warn[-version]     a violation is returned as a warning
// Pods are checked on create and on updates that change an image; workload objects carrying a
// pod template (Deployment, Job, CronJob...) get the audit and warn checks only; a namespace
// whose enforce level tightens gets warnings naming the existing pods that would violate it.
//
// Each check has versions (the level of Kubernetes 1.x at which it was introduced or changed); a
// label's version picks them, and `latest` (and any version newer than the server) is the
// server's own, 1.33. The messages are Kubernetes' words.
import { errors, field, StatusError } from '../../machinery/errors.js';
import type { AdmissionAttributes, AdmissionPlugin, ClusterReader } from './types.js';
import { asArray, isObject } from './util.js';

// ---------------------------------------------------------------------------------------------
// levels, versions, policies

export type Level = 'privileged' | 'baseline' | 'restricted';
/** a 1.x minor version; LATEST stands for `latest` */
export type Version = number;
export const LATEST = Number.POSITIVE_INFINITY;
/** the Kubernetes minor version this server implements (`latest` evaluates as this one) */
export const SERVER_MINOR = 33;

export interface LevelVersion {
  level: Level;
  version: Version;
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

const LABEL_PREFIX = 'pod-security.kubernetes.io/';
export const ENFORCE_LEVEL_LABEL = LABEL_PREFIX + 'enforce';
export const ENFORCE_VERSION_LABEL = LABEL_PREFIX + 'enforce-version';
export const AUDIT_LEVEL_LABEL = LABEL_PREFIX + 'audit';
export const AUDIT_VERSION_LABEL = LABEL_PREFIX + 'audit-version';
export const WARN_LEVEL_LABEL = LABEL_PREFIX + 'warn';
export const WARN_VERSION_LABEL = LABEL_PREFIX + 'warn-version';

export function versionString(v: Version): string {
  return v === LATEST ? 'latest' : `v1.${v}`;
}

export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`;
}

const LEVELS: Level[] = ['privileged', 'baseline', 'restricted'];

function compareLevels(a: Level, b: Level): number {
  return LEVELS.indexOf(a) - LEVELS.indexOf(b);
}

interface LabelError {
  label: string;
  value: string;
  detail: string;
}

function parseLevel(s: string): Level | undefined {
  return (LEVELS as string[]).includes(s) ? (s as Level) : undefined;
}

function parseVersion(s: string): Version | undefined {
  if (s === 'latest') return LATEST;
  const m = /^v1\.([0-9]|[1-9][0-9]*)$/.exec(s);
  if (!m) return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : undefined;
}

export const DEFAULT_POLICY: Policy = {
  enforce: { level: 'privileged', version: LATEST },
  audit: { level: 'privileged', version: LATEST },
  warn: { level: 'privileged', version: LATEST },
};

/** api.PolicyToEvaluate: the namespace's policy from its labels over the defaults, and the label errors */
export function policyToEvaluate(labels: Record<string, string>, defaults: Policy = DEFAULT_POLICY): { policy: Policy; errs: LabelError[] } {
  const p: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errs: LabelError[] = [];
  const levelErr = (label: string, value: string) => errs.push({ label, value, detail: `must be one of ${LEVELS.join(', ')}` });
  const versionErr = (label: string, value: string) => errs.push({ label, value, detail: 'must be "latest" or "v1.x"' });
  let hasEnforceLevel = false;
  let hasWarnLevel = false;
  let hasWarnVersion = false;
  if (ENFORCE_LEVEL_LABEL in labels) {
    const l = parseLevel(labels[ENFORCE_LEVEL_LABEL]!);
    p.enforce.level = l ?? 'restricted';
    hasEnforceLevel = l !== undefined;
    if (!l) levelErr(ENFORCE_LEVEL_LABEL, labels[ENFORCE_LEVEL_LABEL]!);
  }
  if (ENFORCE_VERSION_LABEL in labels) {
    const v = parseVersion(labels[ENFORCE_VERSION_LABEL]!);
    p.enforce.version = v ?? LATEST;
    if (v === undefined) versionErr(ENFORCE_VERSION_LABEL, labels[ENFORCE_VERSION_LABEL]!);
  }
  if (AUDIT_LEVEL_LABEL in labels) {
    const l = parseLevel(labels[AUDIT_LEVEL_LABEL]!);
    p.audit.level = l ?? 'privileged'; // fail open for audit
    if (!l) levelErr(AUDIT_LEVEL_LABEL, labels[AUDIT_LEVEL_LABEL]!);
  }
  if (AUDIT_VERSION_LABEL in labels) {
    const v = parseVersion(labels[AUDIT_VERSION_LABEL]!);
    p.audit.version = v ?? LATEST;
    if (v === undefined) versionErr(AUDIT_VERSION_LABEL, labels[AUDIT_VERSION_LABEL]!);
  }
  if (WARN_LEVEL_LABEL in labels) {
    hasWarnLevel = true;
    const l = parseLevel(labels[WARN_LEVEL_LABEL]!);
    p.warn.level = l ?? 'privileged'; // fail open for warn
    if (!l) levelErr(WARN_LEVEL_LABEL, labels[WARN_LEVEL_LABEL]!);
  }
  if (WARN_VERSION_LABEL in labels) {
    hasWarnVersion = true;
    const v = parseVersion(labels[WARN_VERSION_LABEL]!);
    p.warn.version = v ?? LATEST;
    if (v === undefined) versionErr(WARN_VERSION_LABEL, labels[WARN_VERSION_LABEL]!);
  }
  // an enforce level stricter than warn also warns (so clients see why they were refused)
  if (!hasWarnLevel && hasEnforceLevel && compareLevels(p.enforce.level, p.warn.level) > 0) {
    p.warn.level = p.enforce.level;
    if (!hasWarnVersion) p.warn.version = p.enforce.version;
  }
  return { policy: p, errs };
}

function fullyPrivileged(p: Policy): boolean {
  return p.enforce.level === 'privileged' && p.audit.level === 'privileged' && p.warn.level === 'privileged';
}

// ---------------------------------------------------------------------------------------------
// checks

export interface CheckResult {
  allowed: boolean;
  reason?: string;
  detail?: string;
}

type CheckFn = (meta: any, spec: any) => CheckResult;

interface VersionedCheck {
  min: Version;
  fn: CheckFn;
  overrides?: string[];
}

interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  versions: VersionedCheck[];
}

const OK: CheckResult = { allowed: true };

const pluralize = (one: string, many: string, n: number) => (n === 1 ? one : many);
const joinQuote = (items: string[]) => (items.length ? `"${items.join('", "')}"` : '');
const sortedSet = (s: Set<string>) => [...s].sort();

/** initContainers, containers, ephemeralContainers */
function visitContainers(spec: any, f: (c: any) => void): void {
  for (const list of [spec?.initContainers, spec?.containers, spec?.ephemeralContainers]) for (const c of asArray(list)) if (isObject(c)) f(c);
}

const sc = (o: any) => (isObject(o?.securityContext) ? o.securityContext : undefined);
const windowsPod = (spec: any) => spec?.os?.name === 'windows';
const userNamespacePod = (spec: any) => spec?.hostUsers === false;

function setters(pod: boolean, badContainers: string[]): string[] {
  const out: string[] = [];
  if (pod) out.push('pod');
  if (badContainers.length) out.push(`${pluralize('container', 'containers', badContainers.length)} ${joinQuote(badContainers)}`);
  return out;
}

// -- allowPrivilegeEscalation (restricted)
const allowPrivilegeEscalation_1_8: CheckFn = (_m, spec) => {
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (sc(c)?.allowPrivilegeEscalation !== false) bad.push(c.name);
  });
  if (!bad.length) return OK;
  return { allowed: false, reason: 'allowPrivilegeEscalation != false', detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must set securityContext.allowPrivilegeEscalation=false` };
};

// -- appArmorProfile (baseline)
const appArmorProfile_1_0: CheckFn = (meta, spec) => {
  const allowedType = (t: unknown) => t === 'RuntimeDefault' || t === 'Localhost';
  const badSetters: string[] = [];
  const badValues = new Set<string>();
  const podProfile = sc(spec)?.appArmorProfile;
  if (isObject(podProfile) && !allowedType(podProfile.type)) {
    badSetters.push('pod');
    badValues.add(String(podProfile.type ?? ''));
  }
  const badContainers: string[] = [];
  visitContainers(spec, (c) => {
    const p = sc(c)?.appArmorProfile;
    if (isObject(p) && !allowedType(p.type)) {
      badContainers.push(c.name);
      badValues.add(String(p.type ?? ''));
    }
  });
  if (badContainers.length) badSetters.push(`${pluralize('container', 'containers', badContainers.length)} ${joinQuote(badContainers)}`);
  const annotations = isObject(meta?.annotations) ? meta.annotations : {};
  const forbidden: string[] = [];
  for (const [k, v] of Object.entries(annotations)) {
    if (!k.startsWith('container.apparmor.security.beta.kubernetes.io/')) continue;
    const val = String(v);
    if (val === '' || val === 'runtime/default' || val.startsWith('localhost/')) continue;
    forbidden.push(`${k}=${JSON.stringify(val)}`);
  }
  const values = sortedSet(badValues);
  if (forbidden.length) {
    forbidden.sort();
    values.push(...forbidden);
    badSetters.push(pluralize('annotation', 'annotations', forbidden.length));
  }
  if (!badSetters.length) return OK;
  return {
    allowed: false,
    reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length),
    detail: `${badSetters.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`,
  };
};

// -- capabilities_baseline
const CAPABILITIES_ALLOWED = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);
const capabilitiesBaseline_1_0: CheckFn = (_m, spec) => {
  const bad: string[] = [];
  const caps = new Set<string>();
  visitContainers(spec, (c) => {
    const add = sc(c)?.capabilities?.add;
    if (!isObject(sc(c)?.capabilities)) return;
    let valid = true;
    for (const cap of asArray(add)) {
      if (!CAPABILITIES_ALLOWED.has(String(cap))) {
        valid = false;
        caps.add(String(cap));
      }
    }
    if (!valid) bad.push(c.name);
  });
  if (!bad.length) return OK;
  return {
    allowed: false,
    reason: 'non-default capabilities',
    detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
  };
};

// -- capabilities_restricted
const capabilitiesRestricted_1_22: CheckFn = (_m, spec) => {
  const missingDrop: string[] = [];
  const adding: string[] = [];
  const forbiddenCaps = new Set<string>();
  visitContainers(spec, (c) => {
    const caps = sc(c)?.capabilities;
    if (!isObject(caps)) {
      missingDrop.push(c.name);
      return;
    }
    if (!asArray(caps.drop).some((x) => x === 'ALL')) missingDrop.push(c.name);
    let addedForbidden = false;
    for (const cap of asArray(caps.add)) {
      if (cap !== 'NET_BIND_SERVICE') {
        addedForbidden = true;
        forbiddenCaps.add(String(cap));
      }
    }
    if (addedForbidden) adding.push(c.name);
  });
  const details: string[] = [];
  if (missingDrop.length) details.push(`${pluralize('container', 'containers', missingDrop.length)} ${joinQuote(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adding.length) details.push(`${pluralize('container', 'containers', adding.length)} ${joinQuote(adding)} must not include ${joinQuote(sortedSet(forbiddenCaps))} in securityContext.capabilities.add`);
  if (!details.length) return OK;
  return { allowed: false, reason: 'unrestricted capabilities', detail: details.join('; ') };
};

// -- hostNamespaces
const hostNamespaces_1_0: CheckFn = (_m, spec) => {
  const found: string[] = [];
  if (spec?.hostNetwork === true) found.push('hostNetwork=true');
  if (spec?.hostPID === true) found.push('hostPID=true');
  if (spec?.hostIPC === true) found.push('hostIPC=true');
  if (!found.length) return OK;
  return { allowed: false, reason: 'host namespaces', detail: found.join(', ') };
};

// -- hostPathVolumes
const hostPathVolumes_1_0: CheckFn = (_m, spec) => {
  const vols: string[] = [];
  for (const v of asArray(spec?.volumes)) if (isObject(v) && isObject(v.hostPath)) vols.push(v.name);
  if (!vols.length) return OK;
  return { allowed: false, reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', vols.length)} ${joinQuote(vols)}` };
};

// -- hostPorts
const hostPorts_1_0: CheckFn = (_m, spec) => {
  const bad: string[] = [];
  const ports = new Set<string>();
  visitContainers(spec, (c) => {
    let valid = true;
    for (const p of asArray(c.ports)) {
      const hp = Number(p?.hostPort ?? 0);
      if (hp !== 0) {
        valid = false;
        ports.add(String(hp));
      }
    }
    if (!valid) bad.push(c.name);
  });
  if (!bad.length) return OK;
  return {
    allowed: false,
    reason: 'hostPort',
    detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', ports.size)} ${sortedSet(ports).join(', ')}`,
  };
};

// -- hostProbesAndHostLifecycle (1.34)
const hostProbesAndHostLifecycle_1_34: CheckFn = (_m, spec) => {
  const bad = new Set<string>();
  const hosts = new Set<string>();
  const probe = (p: any) => {
    const out: string[] = [];
    if (isObject(p?.httpGet) && p.httpGet.host) out.push(p.httpGet.host);
    if (isObject(p?.tcpSocket) && p.tcpSocket.host) out.push(p.tcpSocket.host);
    return out;
  };
  visitContainers(spec, (c) => {
    for (const p of [c.livenessProbe, c.readinessProbe, c.startupProbe, c.lifecycle?.postStart, c.lifecycle?.preStop]) {
      const h = probe(p);
      if (h.length) {
        bad.add(c.name);
        for (const x of h) hosts.add(x);
      }
    }
  });
  if (!bad.size) return OK;
  return {
    allowed: false,
    reason: 'probe or lifecycle host',
    detail: `${pluralize('container', 'containers', bad.size)} ${joinQuote(sortedSet(bad))} ${pluralize('uses', 'use', bad.size)} ${pluralize('probe or lifecycle host', 'probe or lifecycle hosts', hosts.size)} ${joinQuote(sortedSet(hosts))}`,
  };
};

// -- privileged
const privileged_1_0: CheckFn = (_m, spec) => {
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (sc(c)?.privileged === true) bad.push(c.name);
  });
  if (!bad.length) return OK;
  return { allowed: false, reason: 'privileged', detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not set securityContext.privileged=true` };
};

// -- procMount
const procMount_1_0: CheckFn = (_m, spec) => {
  const bad: string[] = [];
  const types = new Set<string>();
  visitContainers(spec, (c) => {
    const pm = sc(c)?.procMount;
    if (pm === undefined || pm === null) return;
    if (pm !== 'Default') {
      bad.push(c.name);
      types.add(String(pm));
    }
  });
  if (!bad.length) return OK;
  return { allowed: false, reason: 'procMount', detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}` };
};
const procMount_1_35: CheckFn = (m, spec) => (userNamespacePod(spec) ? OK : procMount_1_0(m, spec));

// -- restrictedVolumes
const VOLUME_TYPES = [
  'hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'fc', 'azureFile',
  'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos',
];
const ALLOWED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'];
const restrictedVolumes_1_0: CheckFn = (_m, spec) => {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const v of asArray(spec?.volumes)) {
    if (!isObject(v)) continue;
    if (ALLOWED_VOLUMES.some((k) => isObject(v[k]))) continue;
    bad.push(v.name);
    types.add(VOLUME_TYPES.find((k) => isObject(v[k])) ?? 'unknown');
  }
  if (!bad.length) return OK;
  return {
    allowed: false,
    reason: 'restricted volume types',
    detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', types.size)} ${joinQuote(sortedSet(types))}`,
  };
};

// -- runAsNonRoot
const runAsNonRoot_1_0: CheckFn = (_m, spec) => {
  let podBad = false;
  let podNonRoot = false;
  const podV = sc(spec)?.runAsNonRoot;
  if (podV !== undefined && podV !== null) {
    if (podV === false) podBad = true;
    else podNonRoot = true;
  }
  const explicit: string[] = [];
  const implicit: string[] = [];
  visitContainers(spec, (c) => {
    const v = sc(c)?.runAsNonRoot;
    if (v !== undefined && v !== null) {
      if (v === false) explicit.push(c.name);
    } else if (!podNonRoot) implicit.push(c.name);
  });
  const bad = setters(podBad, explicit);
  if (bad.length) return { allowed: false, reason: 'runAsNonRoot != true', detail: `${bad.join(' and ')} must not set securityContext.runAsNonRoot=false` };
  if (implicit.length) {
    return { allowed: false, reason: 'runAsNonRoot != true', detail: `pod or ${pluralize('container', 'containers', implicit.length)} ${joinQuote(implicit)} must set securityContext.runAsNonRoot=true` };
  }
  return OK;
};
const runAsNonRoot_1_35: CheckFn = (m, spec) => (userNamespacePod(spec) ? OK : runAsNonRoot_1_0(m, spec));

// -- runAsUser
const runAsUser_1_23: CheckFn = (_m, spec) => {
  const podBad = sc(spec)?.runAsUser === 0;
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (sc(c)?.runAsUser === 0) bad.push(c.name);
  });
  const s = setters(podBad, bad);
  if (!s.length) return OK;
  return { allowed: false, reason: 'runAsUser=0', detail: `${s.join(' and ')} must not set runAsUser=0` };
};
const runAsUser_1_35: CheckFn = (m, spec) => (userNamespacePod(spec) ? OK : runAsUser_1_23(m, spec));

// -- seLinuxOptions
function seLinuxOptions(allowedTypes: Set<string>): CheckFn {
  return (_m, spec) => {
    const badTypes = new Set<string>();
    let setUser = false;
    let setRole = false;
    const valid = (o: any) => {
      let ok = true;
      const type = typeof o.type === 'string' ? o.type : '';
      if (!allowedTypes.has(type)) {
        ok = false;
        badTypes.add(type);
      }
      if (o.user) ((ok = false), (setUser = true));
      if (o.role) ((ok = false), (setRole = true));
      return ok;
    };
    let podBad = false;
    const podOpts = sc(spec)?.seLinuxOptions;
    if (isObject(podOpts) && !valid(podOpts)) podBad = true;
    const bad: string[] = [];
    visitContainers(spec, (c) => {
      const o = sc(c)?.seLinuxOptions;
      if (isObject(o) && !valid(o)) bad.push(c.name);
    });
    const s = setters(podBad, bad);
    if (!s.length) return OK;
    const data: string[] = [];
    if (badTypes.size) data.push(`${pluralize('type', 'types', badTypes.size)} ${joinQuote(sortedSet(badTypes))}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return { allowed: false, reason: 'seLinuxOptions', detail: `${s.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` };
  };
}
const SELINUX_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_1_31 = new Set([...SELINUX_1_0, 'container_engine_t']);

// -- seccompProfile_baseline
const validSeccomp = (t: unknown) => t === 'Localhost' || t === 'RuntimeDefault';
const seccompBaseline_1_0: CheckFn = (meta, spec) => {
  const annotations = isObject(meta?.annotations) ? meta.annotations : {};
  const validValue = (v: string) => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
  const forbidden = new Set<string>();
  const podKey = 'seccomp.security.alpha.kubernetes.io/pod';
  if (podKey in annotations && !validValue(String(annotations[podKey]))) forbidden.add(`${podKey}=${JSON.stringify(String(annotations[podKey]))}`);
  visitContainers(spec, (c) => {
    const key = `container.seccomp.security.alpha.kubernetes.io/${c.name}`;
    if (key in annotations && !validValue(String(annotations[key]))) forbidden.add(`${key}=${JSON.stringify(String(annotations[key]))}`);
  });
  if (!forbidden.size) return OK;
  return { allowed: false, reason: 'seccompProfile', detail: `forbidden ${pluralize('annotation', 'annotations', forbidden.size)} ${sortedSet(forbidden).join(', ')}` };
};
const seccompBaseline_1_19: CheckFn = (_m, spec) => {
  let podBad = false;
  const values = new Set<string>();
  const podProfile = sc(spec)?.seccompProfile;
  if (isObject(podProfile) && !validSeccomp(podProfile.type)) {
    podBad = true;
    values.add(String(podProfile.type ?? ''));
  }
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    const p = sc(c)?.seccompProfile;
    if (isObject(p) && !validSeccomp(p.type)) {
      bad.push(c.name);
      values.add(String(p.type ?? ''));
    }
  });
  const s = setters(podBad, bad);
  if (!s.length) return OK;
  return { allowed: false, reason: 'seccompProfile', detail: `${s.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}` };
};

// -- seccompProfile_restricted
const seccompRestricted_1_19: CheckFn = (_m, spec) => {
  let podBad = false;
  let podSet = false;
  const values = new Set<string>();
  const podProfile = sc(spec)?.seccompProfile;
  if (isObject(podProfile)) {
    if (!validSeccomp(podProfile.type)) {
      podBad = true;
      values.add(String(podProfile.type ?? ''));
    } else podSet = true;
  }
  const explicit: string[] = [];
  const implicit: string[] = [];
  visitContainers(spec, (c) => {
    const p = sc(c)?.seccompProfile;
    if (isObject(p)) {
      if (!validSeccomp(p.type)) {
        explicit.push(c.name);
        values.add(String(p.type ?? ''));
      }
    } else if (!podSet) implicit.push(c.name);
  });
  const s = setters(podBad, explicit);
  if (s.length) return { allowed: false, reason: 'seccompProfile', detail: `${s.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}` };
  if (implicit.length) {
    return {
      allowed: false,
      reason: 'seccompProfile',
      detail: `pod or ${pluralize('container', 'containers', implicit.length)} ${joinQuote(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
    };
  }
  return OK;
};

// -- sysctls
const SYSCTLS_1_0 = ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start'];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [...SYSCTLS_1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes'];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];
function sysctls(allowed: string[]): CheckFn {
  const set = new Set(allowed);
  return (_m, spec) => {
    const bad: string[] = [];
    for (const s of asArray(sc(spec)?.sysctls)) if (!set.has(s?.name)) bad.push(String(s?.name ?? ''));
    if (!bad.length) return OK;
    return { allowed: false, reason: 'forbidden sysctls', detail: bad.join(', ') };
  };
}

// -- windowsHostProcess
const windowsHostProcess_1_0: CheckFn = (_m, spec) => {
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (sc(c)?.windowsOptions?.hostProcess === true) bad.push(c.name);
  });
  const s = setters(sc(spec)?.windowsOptions?.hostProcess === true, bad);
  if (!s.length) return OK;
  return { allowed: false, reason: 'hostProcess', detail: `${s.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` };
};

const skipWindows = (f: CheckFn): CheckFn => (m, spec) => (windowsPod(spec) ? OK : f(m, spec));

const CHECKS: Check[] = [
  { id: 'allowPrivilegeEscalation', level: 'restricted', versions: [{ min: 8, fn: allowPrivilegeEscalation_1_8 }, { min: 25, fn: skipWindows(allowPrivilegeEscalation_1_8) }] },
  { id: 'appArmorProfile', level: 'baseline', versions: [{ min: 0, fn: appArmorProfile_1_0 }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ min: 0, fn: capabilitiesBaseline_1_0 }] },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { min: 22, fn: capabilitiesRestricted_1_22, overrides: ['capabilities_baseline'] },
      { min: 25, fn: skipWindows(capabilitiesRestricted_1_22), overrides: ['capabilities_baseline'] },
    ],
  },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ min: 0, fn: hostNamespaces_1_0 }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ min: 0, fn: hostPathVolumes_1_0 }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ min: 0, fn: hostPorts_1_0 }] },
  { id: 'hostProbesAndHostLifecycle', level: 'baseline', versions: [{ min: 34, fn: hostProbesAndHostLifecycle_1_34 }] },
  { id: 'privileged', level: 'baseline', versions: [{ min: 0, fn: privileged_1_0 }] },
  { id: 'procMount', level: 'baseline', versions: [{ min: 0, fn: procMount_1_0 }, { min: 35, fn: procMount_1_35 }] },
  { id: 'procMount_restricted', level: 'restricted', versions: [{ min: 35, fn: procMount_1_0, overrides: ['procMount'] }] },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ min: 0, fn: restrictedVolumes_1_0, overrides: ['hostPathVolumes'] }] },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ min: 0, fn: runAsNonRoot_1_0 }, { min: 35, fn: runAsNonRoot_1_35 }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ min: 23, fn: runAsUser_1_23 }, { min: 35, fn: runAsUser_1_35 }] },
  { id: 'seLinuxOptions', level: 'baseline', versions: [{ min: 0, fn: seLinuxOptions(SELINUX_1_0) }, { min: 31, fn: seLinuxOptions(SELINUX_1_31) }] },
  { id: 'seccompProfile_baseline', level: 'baseline', versions: [{ min: 0, fn: seccompBaseline_1_0 }, { min: 19, fn: seccompBaseline_1_19 }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { min: 19, fn: seccompRestricted_1_19, overrides: ['seccompProfile_baseline'] },
      { min: 25, fn: skipWindows(seccompRestricted_1_19), overrides: ['seccompProfile_baseline'] },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { min: 0, fn: sysctls(SYSCTLS_1_0) },
      { min: 27, fn: sysctls(SYSCTLS_1_27) },
      { min: 29, fn: sysctls(SYSCTLS_1_29) },
      { min: 32, fn: sysctls(SYSCTLS_1_32) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ min: 0, fn: windowsHostProcess_1_0 }] },
];

const ORDERED_IDS = [...CHECKS.filter((c) => c.level === 'baseline').map((c) => c.id).sort(), ...CHECKS.filter((c) => c.level === 'restricted').map((c) => c.id).sort()];

function versionAt(check: Check, v: Version): VersionedCheck | undefined {
  let found: VersionedCheck | undefined;
  for (const vc of check.versions) if (vc.min <= v) found = vc;
  return found;
}

/** the checks of a level at a version, in Kubernetes' order (baseline IDs sorted, then restricted IDs sorted) */
export function checksFor(lv: LevelVersion, serverMinor = SERVER_MINOR): CheckFn[] {
  if (lv.level === 'privileged') return [];
  const v = Math.min(lv.version, serverMinor);
  const active = new Map<string, VersionedCheck>();
  for (const c of CHECKS) {
    if (c.level === 'restricted' && lv.level !== 'restricted') continue;
    const vc = versionAt(c, v);
    if (vc) active.set(c.id, vc);
  }
  if (lv.level === 'restricted') {
    for (const c of CHECKS) {
      if (c.level !== 'restricted') continue;
      for (const o of active.get(c.id)?.overrides ?? []) active.delete(o);
    }
  }
  return ORDERED_IDS.filter((id) => active.has(id)).map((id) => active.get(id)!.fn);
}

export interface AggregateResult {
  allowed: boolean;
  reasons: string[];
  details: string[];
}

export function evaluatePod(lv: LevelVersion, meta: any, spec: any, serverMinor = SERVER_MINOR): AggregateResult {
  const reasons: string[] = [];
  const details: string[] = [];
  for (const fn of checksFor(lv, serverMinor)) {
    const r = fn(meta ?? {}, spec ?? {});
    if (!r.allowed) {
      reasons.push(r.reason || 'unknown forbidden reason');
      details.push(r.detail ?? '');
    }
  }
  return { allowed: reasons.length === 0, reasons, details };
}

export function forbiddenDetail(r: AggregateResult): string {
  return r.reasons.map((reason, i) => (r.details[i] ? `${reason} (${r.details[i]})` : reason)).join(', ');
}

// ---------------------------------------------------------------------------------------------
// the plugin

export interface PodSecurityOptions {
  defaults?: Policy;
  exemptions?: { usernames?: string[]; namespaces?: string[]; runtimeClasses?: string[] };
  /** the newest policy version evaluated (`latest`); the server's minor version by default */
  serverMinor?: number;
  /** existing pods checked when a namespace's enforce level tightens */
  maxPodsToCheck?: number;
}

const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

/** the resources whose objects carry a pod template, and where */
const TEMPLATE_RESOURCES: Record<string, (o: any) => any> = {
  '/replicationcontrollers': (o) => o?.spec?.template,
  '/podtemplates': (o) => o?.template,
  'apps/replicasets': (o) => o?.spec?.template,
  'apps/deployments': (o) => o?.spec?.template,
  'apps/statefulsets': (o) => o?.spec?.template,
  'apps/daemonsets': (o) => o?.spec?.template,
  'batch/jobs': (o) => o?.spec?.template,
  'batch/cronjobs': (o) => o?.spec?.jobTemplate?.spec?.template,
};

export function podSecurity(reader: ClusterReader, opts: PodSecurityOptions = {}): AdmissionPlugin {
  const defaults = opts.defaults ?? DEFAULT_POLICY;
  const serverMinor = opts.serverMinor ?? SERVER_MINOR;
  const exempt = {
    usernames: new Set(opts.exemptions?.usernames ?? []),
    namespaces: new Set(opts.exemptions?.namespaces ?? []),
    runtimeClasses: new Set(opts.exemptions?.runtimeClasses ?? []),
  };
  const maxPods = opts.maxPodsToCheck ?? 3000;

  const annotate = (a: AdmissionAttributes, key: string, value: string) => {
    a.auditAnnotations ??= {};
    a.auditAnnotations[LABEL_PREFIX + key] = value;
  };
  const warn = (a: AdmissionAttributes, w: string) => {
    a.warnings ??= [];
    a.warnings.push(w);
  };
  const policyOf = (labels: Record<string, string>) => policyToEvaluate(labels, defaults);
  const privilegedLatest = `privileged:${versionString(LATEST)}`;

  const evaluate = (a: AdmissionAttributes, policy: Policy, policyErrs: LabelError[], meta: any, spec: any, enforce: boolean): void => {
    const rc = spec?.runtimeClassName;
    if (rc && exempt.runtimeClasses.has(rc)) {
      annotate(a, 'exempt', 'runtimeClass');
      return;
    }
    if (policyErrs.length) {
      annotate(a, 'error', `Failed to parse policy: ${policyErrorsText(policyErrs)}`);
    }
    const cache = new Map<string, AggregateResult>();
    const run = (lv: LevelVersion) => {
      const key = levelVersionString(lv);
      let r = cache.get(key);
      if (!r) cache.set(key, (r = evaluatePod(lv, meta, spec, serverMinor)));
      return r;
    };
    let refused: StatusError | undefined;
    if (enforce) {
      annotate(a, 'enforce-policy', levelVersionString(policy.enforce));
      const r = run(policy.enforce);
      if (!r.allowed) {
        refused = errors.forbidden({ group: a.resource.group, name: a.resource.resource }, a.name, `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${forbiddenDetail(r)}`);
      }
    }
    const audit = run(policy.audit);
    if (!audit.allowed) annotate(a, 'audit-violations', `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${forbiddenDetail(audit)}`);
    if (refused) throw refused;
    const w = run(policy.warn);
    if (!w.allowed) warn(a, `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${forbiddenDetail(w)}`);
  };

  const namespaceOf = (a: AdmissionAttributes): any => {
    const ns = reader.get('', 'namespaces', '', a.namespace);
    if (!ns) throw errors.internal(new Error(`failed to lookup namespace ${JSON.stringify(a.namespace)}`));
    return ns;
  };

  const validatePod = (a: AdmissionAttributes) => {
    if (IGNORED_POD_SUBRESOURCES.has(a.subresource)) return;
    if (a.namespace && exempt.namespaces.has(a.namespace)) return annotate(a, 'exempt', 'namespace');
    if (a.user?.name && exempt.usernames.has(a.user.name)) return annotate(a, 'exempt', 'user');
    const ns = namespaceOf(a);
    const { policy, errs } = policyOf(ns.metadata?.labels ?? {});
    if (!errs.length && fullyPrivileged(policy)) return annotate(a, 'enforce-policy', privilegedLatest);
    const pod = a.object;
    if (!isObject(pod)) throw errors.badRequest('failed to decode pod');
    if (a.operation === 'UPDATE' && !significantPodUpdate(pod, a.oldObject)) return;
    evaluate(a, policy, errs, pod.metadata, pod.spec, true);
  };

  const validateController = (a: AdmissionAttributes, template: (o: any) => any) => {
    if (a.subresource !== '') return;
    if (a.namespace && exempt.namespaces.has(a.namespace)) return annotate(a, 'exempt', 'namespace');
    if (a.user?.name && exempt.usernames.has(a.user.name)) return annotate(a, 'exempt', 'user');
    const ns = reader.get('', 'namespaces', '', a.namespace);
    if (!ns) return annotate(a, 'error', `failed to lookup namespace ${JSON.stringify(a.namespace)}: namespaces ${JSON.stringify(a.namespace)} not found`);
    const { policy, errs } = policyOf(ns.metadata?.labels ?? {});
    if (!errs.length && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
    const t = template(a.object);
    if (!isObject(t)) return;
    evaluate(a, policy, errs, t.metadata, t.spec, false);
  };

  const validateNamespace = (a: AdmissionAttributes) => {
    if (a.subresource !== '') return;
    const ns = a.object;
    if (!isObject(ns)) throw errors.badRequest('failed to decode namespace');
    const { policy, errs } = policyOf(ns.metadata?.labels ?? {});
    const invalid = () =>
      errors.invalid(
        { group: a.kind.group, name: a.kind.kind },
        a.name,
        errs.map((e) => field.invalid(`metadata.labels[${e.label}]`, e.value, e.detail)),
      );
    if (a.operation === 'CREATE') {
      if (errs.length) throw invalid();
      if (exempt.namespaces.has(a.name)) {
        const w = exemptNamespaceWarning(a.name, policy, ns.metadata?.labels ?? {}, defaults);
        if (w) warn(a, w);
      }
      return;
    }
    if (a.operation !== 'UPDATE') return;
    const old = policyOf(a.oldObject?.metadata?.labels ?? {});
    if (errs.length && (!old.errs.length || JSON.stringify(errs) !== JSON.stringify(old.errs))) throw invalid();
    const same = (x: LevelVersion, y: LevelVersion) => x.level === y.level && x.version === y.version;
    if (same(policy.enforce, old.policy.enforce)) return;
    if (policy.enforce.level === 'privileged') return;
    if (policy.enforce.version === old.policy.enforce.version && compareLevels(policy.enforce.level, old.policy.enforce.level) < 1) return;
    if (exempt.namespaces.has(a.name)) {
      const w = exemptNamespaceWarning(a.name, policy, ns.metadata?.labels ?? {}, defaults);
      if (w) warn(a, w);
      return;
    }
    for (const w of evaluatePodsInNamespace(reader.list('', 'pods', a.name), a.name, policy.enforce, maxPods, exempt.runtimeClasses, serverMinor)) warn(a, w);
  };

  return {
    name: 'PodSecurity',
    validate(a) {
      if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
      const gr = `${a.resource.group}/${a.resource.resource}`;
      if (gr === '/namespaces') return validateNamespace(a);
      if (gr === '/pods') return validatePod(a);
      const t = TEMPLATE_RESOURCES[gr];
      if (t) return validateController(a, t);
    },
  };
}

function policyErrorsText(errs: LabelError[]): string {
  const msgs = errs.map((e) => field.invalid(`metadata.labels[${e.label}]`, e.value, e.detail).toString());
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}

function significantPodUpdate(pod: any, old: any): boolean {
  const c = asArray(pod?.spec?.containers);
  const oc = asArray(old?.spec?.containers);
  const ic = asArray(pod?.spec?.initContainers);
  const oic = asArray(old?.spec?.initContainers);
  if (c.length !== oc.length || ic.length !== oic.length) return true;
  for (let i = 0; i < c.length; i++) if (c[i]?.image !== oc[i]?.image) return true;
  for (let i = 0; i < ic.length; i++) if (ic[i]?.image !== oic[i]?.image) return true;
  const oldEph = asArray(old?.spec?.ephemeralContainers);
  for (const e of asArray(pod?.spec?.ephemeralContainers)) {
    const o = oldEph.find((x) => x?.name === e?.name);
    if (!o || o.image !== e?.image) return true;
  }
  return false;
}

function exemptNamespaceWarning(name: string, policy: Policy, labels: Record<string, string>, defaults: Policy): string {
  const equivalent = (x: LevelVersion, y: LevelVersion) => (x.level === 'privileged' && y.level === 'privileged') || (x.level === y.level && x.version === y.version);
  if (fullyPrivileged(policy) || (equivalent(policy.enforce, defaults.enforce) && equivalent(policy.audit, defaults.audit) && equivalent(policy.warn, defaults.warn))) return '';
  const parts: string[] = [];
  if (policy.enforce.level !== 'privileged' && (ENFORCE_LEVEL_LABEL in labels || ENFORCE_VERSION_LABEL in labels)) parts.push(`enforce=${levelVersionString(policy.enforce)}`);
  if (policy.audit.level !== 'privileged' && (AUDIT_LEVEL_LABEL in labels || AUDIT_VERSION_LABEL in labels)) parts.push(`audit=${levelVersionString(policy.audit)}`);
  if (policy.warn.level !== 'privileged' && (WARN_LEVEL_LABEL in labels || WARN_VERSION_LABEL in labels)) parts.push(`warn=${levelVersionString(policy.warn)}`);
  return `namespace ${JSON.stringify(name)} is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`;
}

/** the warnings of a tightened enforce level: which existing pods would violate it */
export function evaluatePodsInNamespace(pods: any[], namespace: string, enforce: LevelVersion, maxPods: number, exemptRuntimeClasses: Set<string>, serverMinor = SERVER_MINOR): string[] {
  // one pod per controller first, then the other replicas
  const first: any[] = [];
  const rest: any[] = [];
  const seen = new Set<string>();
  for (const p of pods) {
    const rc = p?.spec?.runtimeClassName;
    if (rc && exemptRuntimeClasses.has(rc)) continue;
    const owner = asArray(p?.metadata?.ownerReferences).find((o) => o?.controller === true);
    if (!owner) first.push(p);
    else if (seen.has(owner.uid)) rest.push(p);
    else {
      seen.add(owner.uid);
      first.push(p);
    }
  }
  const ordered = [...first, ...rest];
  const total = ordered.length;
  const checked = ordered.slice(0, maxPods);
  const warnings: string[] = [];
  const order: string[] = [];
  const counts = new Map<string, { name: string; count: number }>();
  for (const p of checked) {
    const r = evaluatePod(enforce, p.metadata, p.spec, serverMinor);
    if (r.allowed) continue;
    const w = r.reasons.join(', ');
    const name = p.metadata?.name ?? '';
    const c = counts.get(w);
    if (!c) {
      counts.set(w, { name, count: 1 });
      order.push(w);
    } else {
      c.count++;
      if (name < c.name) c.name = name;
    }
  }
  if (checked.length < total) warnings.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${total} existing pods`);
  if (order.length) warnings.push(`existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`);
  const decorated = order.map((w) => {
    const c = counts.get(w)!;
    if (c.count === 1) return `${c.name}: ${w}`;
    if (c.count === 2) return `${c.name} (and 1 other pod): ${w}`;
    return `${c.name} (and ${c.count - 1} other pods): ${w}`;
  });
  decorated.sort();
  return [...warnings, ...decorated];
}
