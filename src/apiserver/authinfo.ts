// The cluster authentication trust controller (post-start hook
// start-cluster-authentication-info-controller): the ConfigMap kube-system/
// extension-apiserver-authentication tells aggregated API servers and the controller manager
// (its --authentication-skip-lookup) how this API server authenticates: `client-ca-file`, the
// authorities client certificates are checked against, and, when a front proxy is configured
// (--requestheader-client-ca-file), the front proxy's authorities, allowed names and headers.
//
// As kube-apiserver keeps it: what is stored is combined with this server's own (the certificates
// of both, expired ones and duplicates left out; the header lists of both, each name once), so
// that the API servers of one cluster add to it rather than take turns; it is written again when
// it differs, at start and every minute.
import { X509Certificate } from 'node:crypto';
import { pemBlocks } from './authn/pem.js';
import { StatusError } from '../machinery/errors.js';

export const AUTH_INFO_NAMESPACE = 'kube-system';
export const AUTH_INFO_NAME = 'extension-apiserver-authentication';
const RESYNC_MS = 60_000;

/** what this server trusts (cli: the cluster CA with --client-ca-file; the --requestheader-* flags) */
export interface ClusterAuthenticationInfo {
  /** PEM bundle */
  clientCA?: string;
  requestHeader?: {
    /** PEM bundle of --requestheader-client-ca-file */
    clientCA: string;
    usernameHeaders: string[];
    uidHeaders: string[];
    groupHeaders: string[];
    extraHeadersPrefix: string[];
    allowedNames: string[];
  };
}

/** the ConfigMap's data: the stored `existing` data combined with `own` */
export function authenticationInfoData(existing: Record<string, unknown> | undefined, own: ClusterAuthenticationInfo, now = Date.now()): Record<string, string> {
  const had = (k: string) => (typeof existing?.[k] === 'string' ? (existing[k] as string) : '');
  const data: Record<string, string> = {};
  const clientCA = combineCerts(had('client-ca-file'), own.clientCA ?? '', now);
  if (clientCA) data['client-ca-file'] = clientCA;
  const rh = own.requestHeader;
  const requestHeaderCA = combineCerts(had('requestheader-client-ca-file'), rh?.clientCA ?? '', now);
  if (!requestHeaderCA) return sortedKeys(data);
  const list = (key: string, mine: string[] | undefined) => JSON.stringify(unique([...stringList(had(key)), ...(mine ?? [])]));
  data['requestheader-username-headers'] = list('requestheader-username-headers', rh?.usernameHeaders);
  data['requestheader-uid-headers'] = list('requestheader-uid-headers', rh?.uidHeaders);
  data['requestheader-group-headers'] = list('requestheader-group-headers', rh?.groupHeaders);
  data['requestheader-extra-headers-prefix'] = list('requestheader-extra-headers-prefix', rh?.extraHeadersPrefix);
  data['requestheader-client-ca-file'] = requestHeaderCA;
  data['requestheader-allowed-names'] = list('requestheader-allowed-names', rh?.allowedNames);
  return sortedKeys(data);
}

/** a stored list; one that does not parse counts as empty (it is written again, well formed) */
function stringList(text: string): string[] {
  if (!text) return [];
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

/** the certificates of both bundles, PEM encoded, without duplicates or those expired over five minutes ago */
function combineCerts(a: string, b: string, now: number): string {
  const seen = new Set<string>();
  let out = '';
  for (const block of [...pemBlocks(a), ...pemBlocks(b)]) {
    if (block.type !== 'CERTIFICATE') continue;
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block.bytes);
    } catch {
      continue;
    }
    if (Date.parse(cert.validTo) <= now - 5 * 60_000) continue;
    // (a certificate's PEM is its DER's one text: the same certificate twice gives the same text)
    const pem = cert.toString();
    if (seen.has(pem)) continue;
    seen.add(pem);
    out += pem;
  }
  return out;
}

function sortedKeys(m: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(m).sort().map((k) => [k, m[k]!]));
}

/** the few operations of the ConfigMap store the controller needs */
export interface ConfigMapAccess {
  get(namespace: string, name: string): any | undefined;
  create(obj: any): Promise<unknown>;
  update(obj: any): Promise<unknown>;
}

export class ClusterAuthenticationTrust {
  /** the ConfigMap has been written (or found right) once */
  synced = false;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly configMaps: ConfigMapAccess,
    private readonly own: ClusterAuthenticationInfo,
    private readonly onError: (e: unknown) => void,
  ) {}

  /** the first sync (the post-start hook waits for it), then one every minute */
  async start(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => void this.sync(), RESYNC_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** write the ConfigMap when it is missing or differs (errors are reported; the next sync tries again) */
  sync(): Promise<void> {
    this.running ??= this.syncOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async syncOnce(): Promise<void> {
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const cur = this.configMaps.get(AUTH_INFO_NAMESPACE, AUTH_INFO_NAME);
        const data = authenticationInfoData(cur?.data, this.own);
        try {
          if (!cur) {
            await this.configMaps.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: AUTH_INFO_NAME, namespace: AUTH_INFO_NAMESPACE }, data });
          } else if (JSON.stringify(sortedKeys(cur.data ?? {})) !== JSON.stringify(data)) {
            await this.configMaps.update({ ...cur, data });
          }
          this.synced = true;
          return;
        } catch (e) {
          // written meanwhile (another server, a user): combine with what is there now
          if (e instanceof StatusError && (e.code === 409 || e.code === 404)) continue;
          throw e;
        }
      }
    } catch (e) {
      this.onError(e);
    }
  }
}
