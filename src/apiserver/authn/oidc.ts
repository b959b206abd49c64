// Service account issuer discovery: the OpenID Connect discovery document at
// /.well-known/openid-configuration and the key set at /openid/v1/jwks, so that relying parties
// outside the cluster can check service account tokens. As in kube-apiserver the endpoints exist
// only when the issuer (the first --service-account-issuer) is an https URL; the key set holds
// the public keys tokens are verified with (--service-account-key-file, or the signing key's);
// the document's jwks_uri is --service-account-jwks-uri or https://<external address>/openid/v1/jwks.
// Both answers are rendered once, sent with `Cache-Control: public, max-age=3600`, and authorized
// like any non-resource path (system:service-account-issuer-discovery grants them to service
// accounts).
import type { ServerResponse } from 'node:http';
import type { KeyObject } from 'node:crypto';
import { createPublicKey } from 'node:crypto';
import { keyIDFromPublicKey, signingAlgorithm } from './jose.js';

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

export interface IssuerDiscoveryOptions {
  /** the first --service-account-issuer */
  issuer: string;
  /** --service-account-jwks-uri */
  jwksURI?: string;
  /** host:port the API server is reached at from outside */
  externalAddress: string;
  /** the keys service account tokens are verified with */
  keys: KeyObject[];
}

export interface IssuerDiscovery {
  /** answers a GET of one of the two paths; false for any other path */
  serve(path: string, res: ServerResponse): boolean;
}

/** the issuer as kube-apiserver checks it for discovery (an https URL, no query, no fragment) */
function checkIssuer(issuer: string): void {
  if (!issuer) throw new Error('empty issuer URL');
  let u: URL;
  try {
    u = new URL(issuer);
  } catch {
    throw new Error(`parse ${JSON.stringify(issuer)}: invalid URI for request`);
  }
  if (u.protocol !== 'https:') throw new Error(`issuer URL must use https scheme, got: ${issuer}`);
  if (u.search) throw new Error(`issuer URL may not include a query, got: ${issuer}`);
  if (u.hash) throw new Error(`issuer URL may not include a fragment, got: ${issuer}`);
}

/** a JSON Web Key of a public key, with go-jose's field order */
function jwk(key: KeyObject): Record<string, string> {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const raw = pub.export({ format: 'jwk' }) as Record<string, string>;
  const head = { use: 'sig', kty: raw.kty!, kid: keyIDFromPublicKey(pub) };
  const alg = signingAlgorithm(pub);
  if (raw.kty === 'EC') return { ...head, crv: raw.crv!, alg, x: raw.x!, y: raw.y! };
  return { ...head, alg, n: raw.n!, e: raw.e! };
}

/**
 * The discovery endpoints, or the reason they are off (the issuer or the JWKS URI is not an https
 * URL, no keys): kube-apiserver logs that and serves without them.
 */
export function issuerDiscovery(o: IssuerDiscoveryOptions): IssuerDiscovery | { disabled: string } {
  let jwksURI: string;
  try {
    if (!o.jwksURI && !o.externalAddress) throw new Error('either the JWKS URI or the default external address, or both, must be set');
    if (!o.keys.length) throw new Error('no keys provided for validating keyset');
    checkIssuer(o.issuer);
    jwksURI = o.jwksURI || `https://${o.externalAddress}${JWKS_PATH}`;
  } catch (e) {
    return { disabled: `Could not construct pre-rendered responses for ServiceAccountIssuerDiscovery endpoints. Endpoints will not be enabled. Error: ${(e as Error).message}` };
  }
  const keys = o.keys.map(jwk);
  const algs = [...new Set(keys.map((k) => k.alg!))].sort();
  const configuration = Buffer.from(
    JSON.stringify({ issuer: o.issuer, jwks_uri: jwksURI, response_types_supported: ['id_token'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: algs }),
  );
  const jwks = Buffer.from(JSON.stringify({ keys }));
  const send = (res: ServerResponse, type: string, body: Buffer) => {
    res.statusCode = 200;
    res.setHeader('Content-Type', type);
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.setHeader('Content-Length', body.length);
    res.end(body);
  };
  return {
    serve(path, res) {
      if (path === OPENID_CONFIGURATION_PATH) send(res, 'application/json', configuration);
      else if (path === JWKS_PATH) send(res, 'application/jwk-set+json', jwks);
      else return false;
      return true;
    },
  };
}
