// JSON Web Signatures for service account tokens, on node:crypto.
//
// Why not a JOSE library: service account tokens use one compact JWS form with a handful of
// asymmetric algorithms (RS256 to sign with RSA keys, ES256/384/512 with ECDSA keys; RS*, PS*
// and ES* accepted on verification), which node:crypto signs and verifies directly; the key
// formats to read are PEM files as client-go's keyutil reads them. What a library would add
// (JWE, JWK sets, symmetric keys, `none`) is exactly what a token verifier must refuse, and the
// parts Kubernetes' behaviour depends on (the key id derivation, go-jose's leniency and error
// words, the claim encoding) have to be written out here anyway.
import { createHash, createPrivateKey, createPublicKey, sign, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pemBlocks } from './pem.js';

// ── base64url ──────────────────────────────────────────────────────────────

export function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/**
 * Go's base64.RawURLEncoding.DecodeString: no padding, URL alphabet only (non-zero trailing bits
 * are tolerated, as Go's non-strict decoder tolerates them); undefined when invalid.
 */
export function b64urlDecodeStrict(s: string): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(s) || s.length % 4 === 1) return undefined;
  return Buffer.from(s, 'base64url');
}

/** go-jose's decoder: padding tolerated (trimmed), otherwise as strict. */
export function b64urlDecodeLenient(s: string): Buffer | undefined {
  return b64urlDecodeStrict(s.replace(/=+$/, ''));
}

// ── keys ───────────────────────────────────────────────────────────────────

export type SigningAlgorithm = 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'ES256' | 'ES384' | 'ES512';

export interface PublicKeyEntry {
  keyID: string;
  key: KeyObject;
}

/**
 * Kubernetes' key id: the unpadded base64url SHA-256 of the public key's PKIX (SPKI) DER, the
 * same for the private key and its public key.
 */
export function keyIDFromPublicKey(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256').update(pub.export({ type: 'spki', format: 'der' })).digest('base64url');
}

function isRSAorEC(k: KeyObject): boolean {
  return k.asymmetricKeyType === 'rsa' || k.asymmetricKeyType === 'ec';
}

function tryKey(f: () => KeyObject, type: 'rsa' | 'ec'): KeyObject | undefined {
  try {
    const k = f();
    return k.asymmetricKeyType === type ? k : undefined;
  } catch {
    return undefined;
  }
}

function certKey(der: Buffer, type: 'rsa' | 'ec'): KeyObject | undefined {
  try {
    const k = new X509Certificate(der).publicKey;
    return k.asymmetricKeyType === type ? k : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The public keys of PEM data, as client-go's keyutil.ParsePublicKeysPEM reads them: every
 * block is tried, whatever its type line says, as an RSA private key (PKCS#1 or PKCS#8), an RSA
 * public key (PKIX) or certificate, an EC private key (SEC1 or PKCS#8), an EC public key (PKIX)
 * or certificate; other blocks are skipped; no key at all is an error.
 */
export function parsePublicKeysPEM(data: string | Buffer): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const b of pemBlocks(data)) {
    const der = b.bytes;
    const k =
      tryKey(() => createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs1' })), 'rsa') ??
      tryKey(() => createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })), 'rsa') ??
      tryKey(() => createPublicKey({ key: der, format: 'der', type: 'spki' }), 'rsa') ??
      certKey(der, 'rsa') ??
      tryKey(() => createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'sec1' })), 'ec') ??
      tryKey(() => createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })), 'ec') ??
      tryKey(() => createPublicKey({ key: der, format: 'der', type: 'spki' }), 'ec') ??
      certKey(der, 'ec');
    if (k) keys.push(k);
  }
  if (!keys.length) throw new Error('data does not contain any valid RSA or ECDSA public keys');
  return keys;
}

/** --service-account-key-file: keyutil.PublicKeysFromFile. */
export function publicKeysFromFile(path: string): KeyObject[] {
  const data = readFileSync(path);
  try {
    return parsePublicKeysPEM(data);
  } catch (e) {
    throw new Error(`error reading public key file ${path}: ${(e as Error).message}`);
  }
}

/**
 * The private key of PEM data, as keyutil.ParsePrivateKeyPEM reads it: the first block that is
 * an `EC PRIVATE KEY` (SEC1), an `RSA PRIVATE KEY` (PKCS#1) or a `PRIVATE KEY` (PKCS#8, RSA or
 * ECDSA); other blocks (such as `EC PARAMETERS`) are skipped.
 */
export function parsePrivateKeyPEM(data: string | Buffer): KeyObject {
  for (const b of pemBlocks(data)) {
    let k: KeyObject | undefined;
    try {
      if (b.type === 'EC PRIVATE KEY') k = createPrivateKey({ key: b.bytes, format: 'der', type: 'sec1' });
      else if (b.type === 'RSA PRIVATE KEY') k = createPrivateKey({ key: b.bytes, format: 'der', type: 'pkcs1' });
      else if (b.type === 'PRIVATE KEY') k = createPrivateKey({ key: b.bytes, format: 'der', type: 'pkcs8' });
    } catch {
      k = undefined;
    }
    if (k && isRSAorEC(k)) return k;
  }
  throw new Error('data does not contain a valid RSA or ECDSA private key');
}

/** --service-account-signing-key-file: keyutil.PrivateKeyFromFile. */
export function privateKeyFromFile(path: string): KeyObject {
  const data = readFileSync(path);
  try {
    return parsePrivateKeyPEM(data);
  } catch (e) {
    throw new Error(`error reading private key file ${path}: ${(e as Error).message}`);
  }
}

/** The algorithm Kubernetes signs with for a key: RS256 for RSA, ES256/384/512 by ECDSA curve. */
export function signingAlgorithm(key: KeyObject): SigningAlgorithm {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    switch (key.asymmetricKeyDetails?.namedCurve) {
      case 'prime256v1':
        return 'ES256';
      case 'secp384r1':
        return 'ES384';
      case 'secp521r1':
        return 'ES512';
    }
    throw new Error('unknown private key curve, must be 256, 384, or 521');
  }
  throw new Error(`unknown private key type ${key.asymmetricKeyType}, must be RSA or ECDSA`);
}

const HASH: Record<SigningAlgorithm, string> = {
  RS256: 'sha256', RS384: 'sha384', RS512: 'sha512',
  PS256: 'sha256', PS384: 'sha384', PS512: 'sha512',
  ES256: 'sha256', ES384: 'sha384', ES512: 'sha512',
};
const CURVE: Record<string, string> = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' };
const EC_SIZE: Record<string, number> = { ES256: 32, ES384: 48, ES512: 66 };

function signBytes(alg: SigningAlgorithm, key: KeyObject, input: Buffer): Buffer {
  const hash = HASH[alg];
  if (alg.startsWith('ES')) return sign(hash, input, { key, dsaEncoding: 'ieee-p1363' });
  if (alg.startsWith('PS')) return sign(hash, input, { key, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: 32 });
  return sign(hash, input, key);
}

/** Verifies a JWS signature; false on any mismatch (wrong algorithm for the key, bad size, bad signature). */
export function verifyBytes(alg: string, key: KeyObject, input: Buffer, signature: Buffer): boolean {
  if (!(alg in HASH)) return false;
  const a = alg as SigningAlgorithm;
  const hash = HASH[a];
  try {
    if (a.startsWith('ES')) {
      if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== CURVE[a]) return false;
      if (signature.length !== 2 * EC_SIZE[a]!) return false;
      return verify(hash, input, { key, dsaEncoding: 'ieee-p1363' }, signature);
    }
    if (key.asymmetricKeyType !== 'rsa') return false;
    if (a.startsWith('PS')) return verify(hash, input, { key, padding: 6, saltLength: -2 /* RSA_PSS_SALTLEN_AUTO */ }, signature);
    return verify(hash, input, key, signature);
  } catch {
    return false;
  }
}

/**
 * A compact JWS as go-jose writes it: the protected header's keys in sorted order
 * (`{"alg":...,"kid":...}`), the payload as given.
 */
export function signCompact(key: KeyObject, payload: string, keyID?: string): string {
  const alg = signingAlgorithm(key);
  const header: Record<string, string> = { alg };
  if (keyID) header.kid = keyID;
  const input = `${b64url(JSON.stringify(header))}.${b64url(payload)}`;
  return `${input}.${b64url(signBytes(alg, key, Buffer.from(input, 'latin1')))}`;
}

export interface ParsedJWS {
  header: Record<string, unknown>;
  alg: string;
  kid: string;
  payload: Buffer;
  signingInput: Buffer;
  signature: Buffer;
}

/**
 * A compact JWS as go-jose's ParseSigned takes it, or undefined when it is not one (three
 * base64url parts, a JSON object header; the signature is not checked here).
 */
export function parseCompact(token: string): ParsedJWS | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const h = b64urlDecodeLenient(parts[0]!);
  const p = b64urlDecodeLenient(parts[1]!);
  const s = b64urlDecodeLenient(parts[2]!);
  if (!h || !p || !s) return undefined;
  let header: unknown;
  try {
    header = JSON.parse(h.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!header || typeof header !== 'object' || Array.isArray(header)) return undefined;
  const hd = header as Record<string, unknown>;
  if (hd.alg !== undefined && typeof hd.alg !== 'string') return undefined;
  if (hd.kid !== undefined && typeof hd.kid !== 'string') return undefined;
  return {
    header: hd,
    alg: (hd.alg as string | undefined) ?? '',
    kid: (hd.kid as string | undefined) ?? '',
    payload: p,
    signingInput: Buffer.from(`${parts[0]}.${parts[1]}`, 'latin1'),
    signature: s,
  };
}

/** go-jose's error for any failed verification (bad signature, algorithm not for this key, crit headers). */
export const ERR_CRYPTO_FAILURE = 'go-jose/go-jose: error in cryptographic primitive';

/** Verifies a parsed JWS with one key; throws go-jose's error when it does not verify. */
export function verifyJWS(jws: ParsedJWS, key: KeyObject): void {
  if (jws.header.crit !== undefined) throw new Error(ERR_CRYPTO_FAILURE);
  if (!verifyBytes(jws.alg, key, jws.signingInput, jws.signature)) throw new Error(ERR_CRYPTO_FAILURE);
}
