// The kubelet's sysctl admission (pkg/kubelet/sysctl): a pod may set, in
// spec.securityContext.sysctls, the safe sysctls and those --allowed-unsafe-sysctls names (a
// pattern ending in `*` allows a prefix); anything else refuses the pod on this node: it fails
// with reason SysctlForbidden and `forbidden sysctl: "<name>" not allowlisted`. A sysctl of the
// network namespace is refused to a pod on the host's network, one of the IPC namespace to a pod
// on the host's IPC (`"<name>" not allowed with host net enabled`). Names may be written with `/`
// for `.`. The allowed patterns must be namespaced sysctls, or the kubelet does not start.

/** the kubelet's safe sysctls (their kernel versions are all below any kernel Keelson runs on) */
const SAFE = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
  'net.ipv4.tcp_rmem',
  'net.ipv4.tcp_wmem',
];

type Namespace = 'ipc' | 'net';

/** utilsysctl.NormalizeName: `/` separators as dots (a name that mixes them keeps its first form's dots as slashes) */
export function normalizeSysctlName(name: string): string {
  const firstSep = name.search(/[./]/);
  if (firstSep < 0 || name[firstSep] === '.') return name;
  // `a/b.c/d` means the keys a, b.c, d: swap the two separators
  return name.replace(/[./]/g, (c) => (c === '/' ? '.' : '/'));
}

/** the namespace a sysctl belongs to (NamespacedBy), undefined: not namespaced */
function namespaceOf(name: string): Namespace | undefined {
  if (name.startsWith('net.')) return 'net';
  if (name === 'kernel.sem' || name.startsWith('kernel.shm') || name.startsWith('kernel.msg') || name.startsWith('fs.mqueue.')) return 'ipc';
  return undefined;
}

export class SysctlAllowlist {
  private readonly exact = new Map<string, Namespace>();
  private readonly prefixes = new Map<string, Namespace>();

  /** throws the kubelet's error for an unsafe pattern that is not namespaced */
  constructor(unsafe: string[]) {
    for (const s of SAFE) this.exact.set(s, namespaceOf(s)!);
    for (const raw of unsafe) {
      const p = normalizeSysctlName(raw);
      const prefix = p.endsWith('*') ? p.slice(0, -1) : undefined;
      const ns = namespaceOf(prefix ?? p);
      if (!ns) throw new Error(`the sysctls "${raw}" are not known to be namespaced`);
      if (prefix !== undefined) this.prefixes.set(prefix, ns);
      else this.exact.set(p, ns);
    }
  }

  private check(raw: string, hostNet: boolean, hostIPC: boolean): string | undefined {
    const name = normalizeSysctlName(raw);
    let ns = this.exact.get(name);
    if (!ns) for (const [p, n] of this.prefixes) if (name.startsWith(p)) ns = n;
    if (!ns) return `"${name}" not allowlisted`;
    if (ns === 'ipc' && hostIPC) return `"${name}" not allowed with host ipc enabled`;
    if (ns === 'net' && hostNet) return `"${name}" not allowed with host net enabled`;
    return undefined;
  }

  /** the kubelet's admission of a pod: undefined, or why it is refused */
  admit(pod: any): { reason: string; message: string } | undefined {
    const sysctls = pod?.spec?.securityContext?.sysctls;
    if (!Array.isArray(sysctls)) return undefined;
    for (const s of sysctls) {
      const err = this.check(String(s?.name ?? ''), pod.spec.hostNetwork === true, pod.spec.hostIPC === true);
      if (err) return { reason: 'SysctlForbidden', message: `forbidden sysctl: ${err}` };
    }
    return undefined;
  }
}
