// Forwarding to the host's resolvers (CoreDNS's `forward . /etc/resolv.conf`): a question outside the
// cluster's zone is sent as it came (with a fresh random ID, from a fresh socket) to each upstream in
// turn over UDP until one answers within the timeout; a truncated answer to a client that asked over
// TCP is asked again over TCP. No answer from any upstream: the caller answers SERVFAIL.
import dgram from 'node:dgram';
import net from 'node:net';
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface Upstream {
  host: string;
  port: number;
}

/** `1.2.3.4`, `1.2.3.4:5353`, `::1`, `[::1]:5353` */
export function parseUpstream(s: string): Upstream {
  const t = s.trim();
  const br = /^\[([^\]]+)\](?::(\d+))?$/.exec(t);
  if (br) return { host: br[1]!, port: br[2] ? Number(br[2]) : 53 };
  if (net.isIP(t.split('%')[0]!) === 6) return { host: t, port: 53 };
  const m = /^([^:]+)(?::(\d+))?$/.exec(t);
  if (!m || net.isIP(m[1]!) !== 4) throw new Error(`invalid upstream resolver ${JSON.stringify(s)}: want an IP address with an optional port`);
  const port = m[2] ? Number(m[2]) : 53;
  if (!(port > 0 && port < 65536)) throw new Error(`invalid upstream resolver ${JSON.stringify(s)}: bad port`);
  return { host: m[1]!, port };
}

/** the nameservers of a resolv.conf (port 53); none when the file cannot be read */
export function resolvConfNameservers(path = '/etc/resolv.conf'): Upstream[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const out: Upstream[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    if (m && net.isIP(m[1]!.split('%')[0]!)) out.push({ host: m[1]!, port: 53 });
  }
  return out;
}

function withID(msg: Buffer, id: number): Buffer {
  const b = Buffer.from(msg);
  b.writeUInt16BE(id, 0);
  return b;
}

function udpExchange(up: Upstream, query: Buffer, timeoutMs: number): Promise<Buffer | undefined> {
  const id = randomInt(65536);
  const q = withID(query, id);
  const sock = dgram.createSocket(net.isIP(up.host.split('%')[0]!) === 6 ? 'udp6' : 'udp4');
  return new Promise((resolve) => {
    let done = false;
    const finish = (b: Buffer | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        sock.close();
      } catch {
        /* closed already */
      }
      resolve(b);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    sock.on('error', () => finish(undefined));
    // (a connected socket only receives the upstream's datagrams)
    sock.on('message', (msg) => {
      if (msg.length >= 12 && msg.readUInt16BE(0) === id && (msg.readUInt16BE(2) & 0x8000) !== 0) finish(msg);
    });
    sock.connect(up.port, up.host, () => sock.send(q, (err) => err && finish(undefined)));
  });
}

function tcpExchange(up: Upstream, query: Buffer, timeoutMs: number): Promise<Buffer | undefined> {
  const id = randomInt(65536);
  const q = withID(query, id);
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    let done = false;
    const sock = net.connect({ host: up.host, port: up.port });
    const finish = (b: Buffer | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(b);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    sock.on('error', () => finish(undefined));
    sock.on('close', () => finish(undefined));
    sock.on('connect', () => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(q.length);
      sock.write(Buffer.concat([len, q]));
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 2) return;
      const n = buf.readUInt16BE(0);
      if (buf.length < 2 + n) return;
      const msg = buf.subarray(2, 2 + n);
      finish(msg.length >= 12 && msg.readUInt16BE(0) === id ? Buffer.from(msg) : undefined);
    });
  });
}

export class Forwarder {
  private inflight = 0;

  constructor(
    readonly upstreams: Upstream[],
    private readonly timeoutMs = 2000,
    private readonly maxConcurrent = 1000,
  ) {}

  /** whether another forward may start now (CoreDNS's max_concurrent: the caller answers REFUSED) */
  available(): boolean {
    return this.inflight < this.maxConcurrent;
  }

  /**
   * The upstreams' answer to a query (raw bytes, with the query's ID), or undefined when none
   * answered. `tcp`: the client asked over TCP, so a truncated UDP answer is asked again over TCP.
   */
  async exchange(query: Buffer, tcp: boolean): Promise<Buffer | undefined> {
    const id = query.readUInt16BE(0);
    this.inflight++;
    try {
      for (const up of this.upstreams) {
        let r = await udpExchange(up, query, this.timeoutMs);
        if (r && tcp && (r.readUInt16BE(2) & 0x0200) !== 0) r = (await tcpExchange(up, query, this.timeoutMs)) ?? r;
        if (r) return withID(r, id);
      }
      return undefined;
    } finally {
      this.inflight--;
    }
  }
}
