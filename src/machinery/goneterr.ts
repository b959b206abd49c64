// Go's words (net, crypto/tls, crypto/x509) for a connection that failed, from Node.js' error
// codes: what kubectl prints for an unreachable server, what kube-apiserver says when a webhook or
// an extension API server cannot be reached. One mapping for every caller; each adds the cases
// where Go's words depend on its own transport (a reset read as EOF, say).

export interface DialTarget {
  /** the host dialled (an address, or a name) */
  host: string;
  port: number | string;
}

type NodeNetError = NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string; host?: string; cert?: { subjectaltname?: string } };

function hostPort(host: string, port: number | string): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Go's x509.HostnameError text from Node's altname error (the names of the certificate of the family asked for). */
export function goHostnameError(err: { host?: string; cert?: { subjectaltname?: string } }, wanted: string): string {
  const host = err.host ?? wanted;
  const sans = (err.cert?.subjectaltname ?? '').split(/,\s*/).filter(Boolean);
  const dns = sans.filter((x) => x.startsWith('DNS:')).map((x) => x.slice(4));
  const ips = sans.filter((x) => x.startsWith('IP Address:')).map((x) => x.slice('IP Address:'.length));
  const isIP = /^[\d.]+$/.test(host) || host.includes(':');
  const valid = isIP ? ips : dns;
  if (valid.length === 0) return `x509: certificate is not valid for any names, but wanted to match ${host}`;
  return `x509: certificate is valid for ${valid.join(', ')}, not ${host}`;
}

/**
 * Go's text for a failed dial or TLS handshake to `t` (`dial tcp 127.0.0.1:443: connect:
 * connection refused`, `tls: failed to verify certificate: x509: ...`); undefined for an error it
 * has no words for, which the caller words itself.
 */
export function goDialError(e: unknown, t: DialTarget): string | undefined {
  const err = e as NodeNetError;
  const addr = err?.address && err.port ? hostPort(err.address, err.port) : hostPort(t.host, t.port);
  switch (err?.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${err.hostname ?? t.host}: no such host`;
    case 'EHOSTUNREACH':
      return `dial tcp ${addr}: connect: no route to host`;
    case 'ETIMEDOUT':
      return `dial tcp ${addr}: i/o timeout`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'UNABLE_TO_GET_ISSUER_CERT':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'CERT_HAS_EXPIRED':
      return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: ${goHostnameError(err, t.host)}`;
    default:
      return undefined;
  }
}
