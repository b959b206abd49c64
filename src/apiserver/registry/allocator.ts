// Allocators of the addresses and ports a Service gets: cluster IPs from the ServiceCIDRs (the
// default one is --service-cluster-ip-range), each held by an IPAddress object, and node ports from
// --service-node-port-range, whose state is the set of Services themselves (rebuilt from them at
// start; this process is their only writer).
import { randomInt } from 'node:crypto';

export class AllocationError extends Error {}

/** IPv4 address <-> number */
export function ipToNumber(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
}

export function numberToIP(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

export function parseCIDR(cidr: string): { base: number; bits: number } {
  const [ip, len] = cidr.split('/');
  const base = ipToNumber(ip ?? '');
  const bits = Number(len);
  if (base === undefined || !Number.isInteger(bits) || bits < 8 || bits > 30) {
    throw new AllocationError(`invalid service cluster IP range ${JSON.stringify(cidr)}: an IPv4 CIDR with a prefix length between 8 and 30 is required`);
  }
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return { base: (base & mask) >>> 0, bits };
}

/** the `ipaddress.kubernetes.io/managed-by` value of the IPAddress objects the allocator writes */
export const IP_ALLOCATOR_NAME = 'ipallocator.k8s.io';

/** a ServiceCIDR as the allocator sees it */
export interface ServiceCIDRRange {
  name: string;
  cidrs: string[];
  /** Ready (or no Ready condition) and not being deleted: new addresses may come from it */
  ready: boolean;
}

/**
 * The IPAddress objects: an address is taken when one of its name exists, whoever wrote it.
 * The allocator writes them for the Services' addresses (claim) and deletes them when they are
 * released (free); both are written after the Service (see serviceStrategyWith).
 */
export interface IPAddressBook {
  has(ip: string): boolean;
  claim(ip: string, svc: { namespace: string; name: string }): Promise<void>;
  free(ip: string, svc: { namespace: string; name: string }): Promise<void>;
}

interface IPRange {
  cidr: string;
  network: number;
  first: number;
  last: number;
  /** KEP-3070: the lower part of the range is kept for addresses users choose themselves */
  staticEnd: number;
}

/** a range's usable addresses, as kube-apiserver's allocator counts them (not the network or broadcast address) */
function ipRange(cidr: string): IPRange | undefined {
  const [ip, len] = cidr.split('/');
  const base = ipToNumber(ip ?? '');
  const bits = Number(len);
  if (base === undefined || !Number.isInteger(bits) || bits < 0 || bits > 32) return undefined;
  const size = 2 ** (32 - bits);
  const network = bits === 0 ? 0 : (base & ((~0 << (32 - bits)) >>> 0)) >>> 0;
  const first = network + 1;
  const last = network + size - 2;
  // calculateRangeOffset: min(max(16, size/16), 256), none for a range of 16 addresses or fewer
  const offset = size <= 16 ? 0 : Math.min(256, Math.max(16, Math.floor(size / 16)));
  return { cidr, network, first, last, staticEnd: first + offset - 1 };
}

/**
 * Cluster IPs, as kube-apiserver 1.33 allocates them (MultiCIDRServiceAllocator): from the IPv4
 * CIDRs of the ServiceCIDRs that are ready, each address held by an IPAddress object named after
 * it. `used` holds what this process has handed out and not yet released, so that two Services
 * written at once never get one address while its IPAddress object is still being written.
 */
export class IPAllocator {
  private readonly used = new Set<number>();
  private readonly parsed = new Map<string, IPRange | undefined>();
  /** the ServiceCIDRs (until they are attached, the flag's range alone) */
  private serviceCIDRs: () => ServiceCIDRRange[];
  book?: IPAddressBook;

  constructor(readonly cidr: string) {
    parseCIDR(cidr);
    this.serviceCIDRs = () => [{ name: 'kubernetes', cidrs: [cidr], ready: true }];
  }

  /** read the ServiceCIDRs from `list` from now on (when it has none, the flag's range serves) */
  attach(list: () => ServiceCIDRRange[], book: IPAddressBook): void {
    const flag = this.serviceCIDRs;
    this.serviceCIDRs = () => {
      const l = list();
      return l.length > 0 ? l : flag();
    };
    this.book = book;
  }

  /** the first address of the flag's range: the `kubernetes` Service's */
  get serviceIP(): string {
    return numberToIP(this.range(this.cidr)!.first);
  }

  private range(cidr: string): IPRange | undefined {
    let r = this.parsed.get(cidr);
    if (r === undefined && !this.parsed.has(cidr)) {
      r = cidr.includes(':') ? undefined : ipRange(cidr);
      this.parsed.set(cidr, r);
    }
    return r;
  }

  /** the IPv4 ranges of the ServiceCIDRs, the flag's range first, then by name; `ready` ones only if asked */
  private ranges(ready: boolean): IPRange[] {
    const list = this.serviceCIDRs()
      .filter((c) => !ready || c.ready)
      .sort((a, b) => (a.name === 'kubernetes' ? -1 : b.name === 'kubernetes' ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const out: IPRange[] = [];
    for (const c of list) for (const cidr of c.cidrs) {
      const r = this.range(cidr);
      if (r && !out.includes(r)) out.push(r);
    }
    return out;
  }

  /** the address lies in one of the ServiceCIDRs (ready or not) */
  contains(ip: string): boolean {
    const n = ipToNumber(ip);
    return n !== undefined && this.ranges(false).some((r) => n >= r.network && n <= r.last + 1);
  }

  private taken(n: number): boolean {
    return this.used.has(n) || this.book?.has(numberToIP(n)) === true;
  }

  /**
   * Reserve a given address; throws when no ready ServiceCIDR holds it, when it is its range's
   * network or broadcast address, or when it is taken. A dry run checks the range only, as
   * kube-apiserver's does.
   */
  allocate(ip: string, dryRun = false): void {
    const n = ipToNumber(ip);
    const r = n === undefined ? undefined : this.ranges(true).find((x) => n >= x.network && n <= x.last + 1);
    if (n === undefined || !r) throw new AllocationError('the provided network does not match the current range');
    if (n < r.first || n > r.last) throw new AllocationError(`the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${r.cidr}`);
    if (dryRun) return;
    if (this.taken(n)) throw new AllocationError('provided IP is already allocated');
    this.used.add(n);
  }

  /** mark an address as taken without checks (rebuilding state from stored Services) */
  mark(ip: string): void {
    const n = ipToNumber(ip);
    if (n !== undefined) this.used.add(n);
  }

  /**
   * A free address of a ready ServiceCIDR, at random from the upper part of its range, then the
   * lower part. A dry run answers the network address of the first range without looking, as
   * kube-apiserver's does.
   */
  allocateNext(dryRun = false): string {
    const ranges = this.ranges(true);
    if (dryRun) {
      if (ranges.length === 0) throw new AllocationError('range is full');
      return numberToIP(ranges[0]!.network);
    }
    const tryRange = (lo: number, hi: number): number | undefined => {
      if (hi < lo) return undefined;
      const span = hi - lo + 1;
      const start = randomInt(span);
      for (let i = 0; i < span; i++) {
        const n = lo + ((start + i) % span);
        if (!this.taken(n)) return n;
      }
      return undefined;
    };
    for (const r of ranges) {
      const n = tryRange(r.staticEnd + 1, r.last) ?? tryRange(r.first, r.staticEnd);
      if (n !== undefined) {
        this.used.add(n);
        return numberToIP(n);
      }
    }
    throw new AllocationError('range is full');
  }

  release(ip: string): void {
    const n = ipToNumber(ip);
    if (n !== undefined) this.used.delete(n);
  }

  get size(): number {
    return this.used.size;
  }
}

export class PortAllocator {
  readonly base: number;
  readonly max: number;
  private readonly used = new Set<number>();

  constructor(readonly range: string) {
    const m = /^(\d+)-(\d+)$/.exec(range.trim());
    if (!m) throw new AllocationError(`invalid service node port range ${JSON.stringify(range)}: expected <first>-<last>`);
    this.base = Number(m[1]);
    this.max = Number(m[2]);
    if (this.base < 1 || this.max > 65535 || this.base > this.max) throw new AllocationError(`invalid service node port range ${JSON.stringify(range)}`);
  }

  allocate(port: number): void {
    if (port < this.base || port > this.max) {
      throw new AllocationError(`provided port is not in the valid range. The range of valid ports is ${this.base}-${this.max}`);
    }
    if (this.used.has(port)) throw new AllocationError('provided port is already allocated');
    this.used.add(port);
  }

  mark(port: number): void {
    this.used.add(port);
  }

  allocateNext(): number {
    const span = this.max - this.base + 1;
    const start = randomInt(span);
    for (let i = 0; i < span; i++) {
      const p = this.base + ((start + i) % span);
      if (!this.used.has(p)) {
        this.used.add(p);
        return p;
      }
    }
    throw new AllocationError('range is full');
  }

  release(port: number): void {
    this.used.delete(port);
  }
}
