// Allocators of the addresses and ports a Service gets: cluster IPs from
// --service-cluster-ip-range and node ports from --service-node-port-range. The state is the set
// of Services themselves: it is rebuilt from them at start, and this process is their only
// writer (several API servers on one store will need allocation objects in storage instead).
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

export class IPAllocator {
  readonly first: number;
  readonly last: number;
  private readonly used = new Set<number>();
  /** Kubernetes keeps the lower part of the range for addresses users choose themselves */
  private readonly staticEnd: number;

  constructor(readonly cidr: string) {
    const { base, bits } = parseCIDR(cidr);
    const size = 2 ** (32 - bits);
    this.first = base + 1; // the network address is not used
    this.last = base + size - 2; // nor the broadcast address
    const count = this.last - this.first + 1;
    const reserved = Math.min(256, Math.max(16, Math.floor(count / 16)));
    this.staticEnd = Math.min(this.last, this.first + reserved - 1);
  }

  /** the first address of the range: the `kubernetes` Service's */
  get serviceIP(): string {
    return numberToIP(this.first);
  }

  contains(ip: string): boolean {
    const n = ipToNumber(ip);
    return n !== undefined && n >= this.first && n <= this.last;
  }

  /** reserve a given address; throws when it is outside the range or taken */
  allocate(ip: string): void {
    const n = ipToNumber(ip);
    if (n === undefined || n < this.first || n > this.last) {
      throw new AllocationError(`the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${this.cidr}`);
    }
    if (this.used.has(n)) throw new AllocationError('provided IP is already allocated');
    this.used.add(n);
  }

  /** mark an address as taken without checks (rebuilding state from stored Services) */
  mark(ip: string): void {
    const n = ipToNumber(ip);
    if (n !== undefined) this.used.add(n);
  }

  /** a free address, at random from the upper part of the range (then the lower part) */
  allocateNext(): string {
    const tryRange = (lo: number, hi: number): number | undefined => {
      if (hi < lo) return undefined;
      const span = hi - lo + 1;
      const start = randomInt(span);
      for (let i = 0; i < span; i++) {
        const n = lo + ((start + i) % span);
        if (!this.used.has(n)) return n;
      }
      return undefined;
    };
    const n = tryRange(this.staticEnd + 1, this.last) ?? tryRange(this.first, this.staticEnd);
    if (n === undefined) throw new AllocationError(`range is full`);
    this.used.add(n);
    return numberToIP(n);
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
