// Health endpoints: /healthz (deprecated), /livez and /readyz, each check also at
// /livez/<check> and /readyz/<check>; `?verbose` lists the checks, `?exclude=<check>` skips one.
// Machines read only the status code; the text is for people.
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface HealthCheck {
  name: string;
  /** resolves to undefined when healthy, or a reason when not */
  check(): Promise<string | undefined> | string | undefined;
  /** a post-start hook: counted healthy on /livez during the grace period */
  postStart?: boolean;
  /** a check of /readyz only (etcd-readiness, informer-sync, shutdown) */
  readyOnly?: boolean;
}

export class Health {
  private live: HealthCheck[];
  private ready: HealthCheck[];
  private readonly startedAt = Date.now();
  /**
   * The component SLIs (/metrics/slis), fed by every run of /healthz, /livez and /readyz as
   * component-base's slis.ObserveHealthcheck is: the last result of each check by endpoint, and a
   * count of results by check, endpoint and status
   */
  private readonly sliLast = new Map<string, number>();
  private readonly sliTotal = new Map<string, number>();

  /** `checks` in the order the verbose lists show them; /healthz and /livez leave out the readyOnly ones */
  constructor(
    checks: HealthCheck[],
    private readonly livezGraceMs: number,
  ) {
    this.live = checks.filter((c) => !c.readyOnly);
    this.ready = checks;
  }

  /** replaces the checks (a component whose checks come and go: kube-controller-manager's mutable healthz handler) */
  replaceChecks(checks: HealthCheck[]): void {
    this.live = checks.filter((c) => !c.readyOnly);
    this.ready = checks;
  }

  private observe(name: string, type: string, ok: boolean): void {
    const k = `name="${name}",type="${type}"`;
    this.sliLast.set(k, ok ? 1 : 0);
    const t = `name="${name}",status="${ok ? 'success' : 'error'}",type="${type}"`;
    this.sliTotal.set(t, (this.sliTotal.get(t) ?? 0) + 1);
  }

  /** /metrics/slis: kubernetes_healthcheck and kubernetes_healthchecks_total, in Prometheus text (series sorted, as client_golang writes them) */
  slisText(): string {
    const out: string[] = [];
    out.push('# HELP kubernetes_healthcheck [STABLE] This metric records the result of a single healthcheck.', '# TYPE kubernetes_healthcheck gauge');
    for (const k of [...this.sliLast.keys()].sort()) out.push(`kubernetes_healthcheck{${k}} ${this.sliLast.get(k)}`);
    out.push('# HELP kubernetes_healthchecks_total [STABLE] This metric records the results of all healthcheck.', '# TYPE kubernetes_healthchecks_total counter');
    for (const k of [...this.sliTotal.keys()].sort()) out.push(`kubernetes_healthchecks_total{${k}} ${this.sliTotal.get(k)}`);
    return out.join('\n') + '\n';
  }

  /** the paths served: each endpoint and each of its checks (for the root path index) */
  paths(): string[] {
    const out: string[] = [];
    for (const [endpoint, checks] of [
      ['/healthz', this.live],
      ['/livez', this.live],
      ['/readyz', this.ready],
    ] as const) {
      out.push(endpoint);
      for (const c of checks) out.push(`${endpoint}/${c.name}`);
    }
    return out;
  }

  /** Serve a health path; false when the path is not one. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<boolean> {
    const m = /^\/(healthz|livez|readyz)(?:\/(.+))?\/?$/.exec(path);
    if (!m) return false;
    const endpoint = m[1]!;
    if (!m[2] && path.endsWith('/')) {
      // (kube-apiserver registers /livez and /livez/<check>: /livez/ is an unknown path)
      res.statusCode = 404;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.end('404 page not found\n');
      return true;
    }
    const checks = endpoint === 'readyz' ? this.ready : this.live;
    const graceful = endpoint === 'livez' && Date.now() - this.startedAt < this.livezGraceMs;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-cache, private');
    if (m[2]) {
      const c = checks.find((x) => x.name === m[2]);
      if (!c) {
        res.statusCode = 404;
        res.end('404 page not found\n');
        return true;
      }
      const reason = await this.run(c, graceful);
      if (reason === undefined) {
        res.statusCode = 200;
        res.end('ok');
      } else {
        res.statusCode = 500;
        res.end(`internal server error: ${reason}\n`);
      }
      return true;
    }
    const excluded = new Set<string>();
    // each `exclude` parameter names one check (getExcludedChecks: no splitting on commas)
    for (const x of query.getAll('exclude')) if (x) excluded.add(x);
    const verbose = query.has('verbose');
    const lines: string[] = [];
    let failed = false;
    const results = await Promise.all(checks.map((c) => (excluded.has(c.name) ? Promise.resolve('excluded' as const) : this.run(c, graceful))));
    const unmatched = new Set(excluded);
    checks.forEach((c, i) => {
      const r = results[i];
      if (r !== 'excluded') this.observe(c.name, endpoint, r === undefined);
      if (r === 'excluded') {
        unmatched.delete(c.name);
        lines.push(`[+]${c.name} excluded: ok`);
      } else if (r === undefined) lines.push(`[+]${c.name} ok`);
      else {
        failed = true;
        lines.push(`[-]${c.name} failed: reason withheld`);
      }
    });
    if (unmatched.size) lines.push(`warn: some health checks cannot be excluded: no matches for ${[...unmatched].sort().map((u) => `"${u}"`).join(',')}`);
    if (failed) {
      lines.push(`${endpoint} check failed`);
      res.statusCode = 500;
      res.end(lines.join('\n') + '\n');
      return true;
    }
    res.statusCode = 200;
    if (verbose) {
      lines.push(`${endpoint} check passed`);
      res.end(lines.join('\n') + '\n');
    } else res.end('ok');
    return true;
  }

  private async run(c: HealthCheck, graceful: boolean): Promise<string | undefined> {
    try {
      const r = await c.check();
      if (r !== undefined && graceful && c.postStart) return undefined;
      return r;
    } catch (e) {
      if (graceful && c.postStart) return undefined;
      return e instanceof Error ? e.message : String(e);
    }
  }
}
