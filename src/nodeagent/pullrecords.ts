// The kubelet's records of the image pulls it made and the credentials each used, for the
// KubeletEnsureSecretPulledImages feature (alpha in Kubernetes 1.33; pkg/kubelet/images/pullmanager).
//
// Files, under <root-dir>/image_manager/ (directories 0700, files 0600, each written to a `.tmp`
// file and renamed into place), named `sha256-` + the hex SHA-256 of their key, as
// kubelet.config.k8s.io/v1alpha1 JSON:
//   pulling/  an ImagePullIntent `{"image": <the container's image field>}`, written before a pull
//             and removed once no pull of that image is under way;
//   pulled/   an ImagePulledRecord per image reference of the runtime (the image ID): when it was
//             last updated, and credentialMapping: for each image name without tag or digest
//             (normalized: docker.io/library/...) the credentials that pulled it, the pull Secrets
//             (uid, namespace, name and the hash of the credential they held) or
//             `nodePodsAccessible` (pulled anonymously or with the node's own credentials).
//
// When a container with imagePullPolicy IfNotPresent or Never wants an image that is present,
// the policy (imagePullCredentialsVerificationPolicy) says whether the pod's credentials must be
// checked: never (NeverVerify); for images the kubelet pulled, i.e. with a pulled record or a
// pulling intent for them (NeverVerifyPreloadedImages, the default); for images outside
// preloadedImagesVerificationAllowlist (NeverVerifyAllowlistedImages); always (AlwaysVerify).
// When they must be, the pod may use the image only when the record for its name says anyone on
// the node may, or one of the pod's pull Secrets that match the image's registry has the hash of a
// recorded one (a Secret elsewhere with the same credential: it is added to the record) or is the
// same Secret (uid, namespace, name: its new hash is added). Otherwise the kubelet pulls again
// with the pod's credentials, so that wrong or missing ones fail as a pull fails.
//
// At the start, intents left by an earlier run whose image the runtime now has (by a tag or a
// digest) become pulled records without credentials (the image is the kubelet's, and every pod's
// credentials are checked), and the intent goes. pruneUnknownRecords() is the kubelet's
// PruneUnknownRecords: the image garbage collector (imagegc.ts) calls it each time it lists the
// runtime's images, with the IDs listed and the moment before the listing.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IMAGE_NAME_MAX, IMAGE_REFERENCE } from '../schema/defaults/image.js';

export const PULL_RECORDS_API_VERSION = 'kubelet.config.k8s.io/v1alpha1';

export type CredentialsVerificationPolicy = 'NeverVerify' | 'NeverVerifyPreloadedImages' | 'NeverVerifyAllowlistedImages' | 'AlwaysVerify';

/** a pull Secret in a record (ImagePullSecret) */
export interface PullSecretRecord {
  uid: string;
  namespace: string;
  name: string;
  /** the hash of the credential the Secret held (credentials.ts hashAuthConfig) */
  credentialHash: string;
}

/** the credentials that pulled an image (ImagePullCredentials) */
export interface PullCredentials {
  kubernetesSecrets?: PullSecretRecord[];
  /** pulled anonymously or with the node's own credentials: any pod of the node may use it */
  nodePodsAccessible?: boolean;
}

/** ImagePulledRecord */
export interface ImagePulledRecord {
  /** RFC 3339, seconds, UTC (metav1.Time) */
  lastUpdatedTime: string;
  imageRef: string;
  credentialMapping: Record<string, PullCredentials>;
}

// ---------------------------------------------------------------------------------------------
// image references (github.com/distribution/reference, as the kubelet parses them; the grammar is
// schema/defaults/image.ts's)

/**
 * An image's name without tag or digest, normalized (reference.ParseNormalizedNamed(image).Name():
 * `busybox:1` is docker.io/library/busybox); throws on a reference that does not parse.
 */
export function normalizedImageName(image: string): string {
  if (/^[a-f0-9]{64}$/.test(image)) throw new Error(`invalid repository name (${image}), cannot specify 64-byte hexadecimal strings`);
  let domain: string;
  let remainder: string;
  const i = image.indexOf('/');
  const first = i < 0 ? '' : image.slice(0, i);
  if (i < 0 || (!/[.:]/.test(first) && first !== 'localhost' && first.toLowerCase() === first)) {
    domain = 'docker.io';
    remainder = image;
  } else {
    domain = first;
    remainder = image.slice(i + 1);
  }
  if (domain === 'index.docker.io') domain = 'docker.io';
  if (domain === 'docker.io' && !remainder.includes('/')) remainder = `library/${remainder}`;
  const nameOnly = remainder.replace(/[:@].*$/, '');
  if (nameOnly.toLowerCase() !== nameOnly) throw new Error('invalid reference format: repository name must be lowercase');
  const m = IMAGE_REFERENCE.exec(`${domain}/${remainder}`);
  if (!m) throw new Error('invalid reference format');
  if (m[1]!.length > IMAGE_NAME_MAX) throw new Error(`repository name must not be more than ${IMAGE_NAME_MAX} characters`);
  return m[1]!;
}

// ---------------------------------------------------------------------------------------------
// the verification policies (image_pull_policies.go)

/** whether a pod's credentials must be checked for a present image: (image, pulled by the kubelet) */
export type VerificationPolicy = (image: string, pulledByKubelet: boolean) => boolean;

/** a preloadedImagesVerificationAllowlist entry: a full image name (no tag or digest) or a `<prefix>/*` */
function allowlistPattern(pattern: string): { prefix: boolean; value: string } {
  if (pattern !== pattern.trim()) throw new Error(`leading/trailing spaces are not allowed: ${pattern}`);
  const wildcard = pattern.endsWith('/*');
  const trimmed = wildcard ? pattern.slice(0, -1) : pattern;
  if (trimmed.length === 0) throw new Error(`the supplied pattern is too short: ${pattern}`);
  if (trimmed.includes('*')) throw new Error(`not a valid wildcard pattern, only patterns ending with '/*' are allowed: ${pattern}`);
  if (wildcard) {
    if (trimmed.length === 1) throw new Error('at least registry hostname is required');
    return { prefix: true, value: trimmed };
  }
  let name: string;
  try {
    name = normalizedImageName(trimmed);
  } catch (e) {
    throw new Error(`failed to parse as an image name: ${(e as Error).message}`);
  }
  if (name !== trimmed) throw new Error(`neither tag nor digest is accepted in an image reference: ${pattern}`);
  return { prefix: false, value: trimmed };
}

/** the policy's function; throws on an allowlist entry the kubelet refuses */
export function verificationPolicy(policy: string, allowlist: string[] = []): VerificationPolicy {
  switch (policy) {
    case 'NeverVerify':
      return () => false;
    case '':
    case 'NeverVerifyPreloadedImages':
      return (_image, pulledByKubelet) => pulledByKubelet;
    case 'AlwaysVerify':
      return () => true;
    case 'NeverVerifyAllowlistedImages': {
      const absolute = new Set<string>();
      const prefixes: string[] = [];
      for (const p of allowlist) {
        const a = allowlistPattern(p);
        if (a.prefix) prefixes.push(a.value);
        else absolute.add(a.value);
      }
      return (image) => {
        let name: string;
        try {
          name = normalizedImageName(image);
        } catch {
          return true;
        }
        return !(absolute.has(name) || prefixes.some((p) => name.startsWith(p)));
      };
    }
    default:
      throw new Error(`unknown image pull credential verification policy: ${policy}`);
  }
}

// ---------------------------------------------------------------------------------------------
// the files (fs_pullrecords.go)

const PREFIX = 'sha256-';
const TMP = '.tmp';

function fileName(key: string): string {
  return PREFIX + createHash('sha256').update(key).digest('hex');
}

/** Go's metav1.Time: RFC 3339 in UTC, whole seconds */
function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** strict decoding, as the kubelet's codec: the kind and version, no unknown fields, the types right */
function checkFields(o: Record<string, unknown>, allowed: string[], what: string): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) throw new Error(`strict decoding error: unknown field "${what}${k}"`);
}

function str(v: unknown, field: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(`json: cannot unmarshal ${typeof v} into Go struct field ${field} of type string`);
  return v;
}

function decodeTypeMeta(text: string, kind: string): Record<string, unknown> {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch (e) {
    throw new Error(`couldn't decode: ${(e as Error).message}`);
  }
  if (!isObject(o)) throw new Error('couldn\'t get version/kind; json parse error');
  if (o.apiVersion !== PULL_RECORDS_API_VERSION || o.kind !== kind) {
    throw new Error(`no kind "${String(o.kind ?? '')}" is registered for version "${String(o.apiVersion ?? '')}"`);
  }
  return o;
}

export function decodeIntent(text: string): { image: string } {
  const o = decodeTypeMeta(text, 'ImagePullIntent');
  checkFields(o, ['kind', 'apiVersion', 'image'], '');
  return { image: str(o.image, 'ImagePullIntent.image') };
}

export function decodePulledRecord(text: string): ImagePulledRecord {
  const o = decodeTypeMeta(text, 'ImagePulledRecord');
  checkFields(o, ['kind', 'apiVersion', 'lastUpdatedTime', 'imageRef', 'credentialMapping'], '');
  const t = str(o.lastUpdatedTime, 'ImagePulledRecord.lastUpdatedTime');
  if (t !== '' && Number.isNaN(Date.parse(t))) throw new Error(`parsing time ${JSON.stringify(t)} as RFC 3339`);
  const mapping: Record<string, PullCredentials> = {};
  const cm = o.credentialMapping;
  if (cm !== undefined && cm !== null) {
    if (!isObject(cm)) throw new Error('json: cannot unmarshal into Go struct field ImagePulledRecord.credentialMapping');
    for (const [image, c] of Object.entries(cm)) {
      if (!isObject(c)) throw new Error(`json: cannot unmarshal into Go struct field ImagePulledRecord.credentialMapping of type ImagePullCredentials`);
      checkFields(c, ['kubernetesSecrets', 'nodePodsAccessible'], `credentialMapping[${image}].`);
      const creds: PullCredentials = {};
      if (c.nodePodsAccessible !== undefined && c.nodePodsAccessible !== null) {
        if (typeof c.nodePodsAccessible !== 'boolean') throw new Error('json: cannot unmarshal into Go struct field ImagePullCredentials.nodePodsAccessible of type bool');
        if (c.nodePodsAccessible) creds.nodePodsAccessible = true;
      }
      if (c.kubernetesSecrets !== undefined && c.kubernetesSecrets !== null) {
        if (!Array.isArray(c.kubernetesSecrets)) throw new Error('json: cannot unmarshal into Go struct field ImagePullCredentials.kubernetesSecrets');
        const list: PullSecretRecord[] = [];
        for (const s of c.kubernetesSecrets) {
          if (!isObject(s)) throw new Error('json: cannot unmarshal into Go struct field ImagePullCredentials.kubernetesSecrets of type ImagePullSecret');
          checkFields(s, ['uid', 'namespace', 'name', 'credentialHash'], `credentialMapping[${image}].kubernetesSecrets[].`);
          list.push({ uid: str(s.uid, 'ImagePullSecret.uid'), namespace: str(s.namespace, 'ImagePullSecret.namespace'), name: str(s.name, 'ImagePullSecret.name'), credentialHash: str(s.credentialHash, 'ImagePullSecret.credentialHash') });
        }
        if (list.length) creds.kubernetesSecrets = list;
      }
      mapping[image] = creds;
    }
  }
  return { lastUpdatedTime: t, imageRef: str(o.imageRef, 'ImagePulledRecord.imageRef'), credentialMapping: mapping };
}

/** the JSON the kubelet writes (Go's field order, map keys sorted, empty fields omitted) */
export function encodePulledRecord(r: ImagePulledRecord): string {
  const mapping: Record<string, unknown> = {};
  for (const image of Object.keys(r.credentialMapping).sort()) {
    const c = r.credentialMapping[image]!;
    const out: Record<string, unknown> = {};
    if (c.kubernetesSecrets?.length) out.kubernetesSecrets = c.kubernetesSecrets.map((s) => ({ uid: s.uid, namespace: s.namespace, name: s.name, credentialHash: s.credentialHash }));
    if (c.nodePodsAccessible) out.nodePodsAccessible = true;
    mapping[image] = out;
  }
  const o: Record<string, unknown> = { kind: 'ImagePulledRecord', apiVersion: PULL_RECORDS_API_VERSION, lastUpdatedTime: r.lastUpdatedTime || null, imageRef: r.imageRef };
  if (Object.keys(mapping).length) o.credentialMapping = mapping;
  return JSON.stringify(o) + '\n';
}

export function encodeIntent(image: string): string {
  return JSON.stringify({ kind: 'ImagePullIntent', apiVersion: PULL_RECORDS_API_VERSION, image }) + '\n';
}

/** the records on disk (fsPullRecordsAccessor); synchronous, so that each read-decide-write is whole */
export class PullRecordsStore {
  readonly pullingDir: string;
  readonly pulledDir: string;

  constructor(rootDir: string) {
    this.pullingDir = join(rootDir, 'image_manager', 'pulling');
    this.pulledDir = join(rootDir, 'image_manager', 'pulled');
    mkdirSync(this.pullingDir, { recursive: true, mode: 0o700 });
    mkdirSync(this.pulledDir, { recursive: true, mode: 0o700 });
  }

  private write(dir: string, name: string, content: string): void {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const target = join(dir, name);
    const tmp = target + TMP;
    try {
      writeFileSync(tmp, content, { mode: 0o600 });
      renameSync(tmp, target);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
  }

  /** the files of a directory the kubelet wrote (sha256-..., not .tmp), each read, or the errors */
  private list<T>(dir: string, decode: (text: string) => T): { items: T[]; errors: string[] } {
    const items: T[] = [];
    const errors: string[] = [];
    let names: string[];
    try {
      names = readdirSync(dir, { withFileTypes: true }).filter((d) => !d.isDirectory() && d.name.startsWith(PREFIX) && !d.name.endsWith(TMP)).map((d) => d.name);
    } catch (e) {
      return { items, errors: [(e as Error).message] };
    }
    for (const n of names) {
      const path = join(dir, n);
      try {
        items.push(decode(readFileSync(path, 'utf8')));
      } catch (e) {
        errors.push(`failed to deserialize content of file ${JSON.stringify(path)}: ${(e as Error).message}`);
      }
    }
    return { items, errors };
  }

  writeIntent(image: string): void {
    this.write(this.pullingDir, fileName(image), encodeIntent(image));
  }

  /** whether an intent for exactly this image is on disk (a file that does not decode throws) */
  intentExists(image: string): boolean {
    let text: string;
    try {
      text = readFileSync(join(this.pullingDir, fileName(image)), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw e;
    }
    return decodeIntent(text).image === image;
  }

  deleteIntent(image: string): void {
    rmSync(join(this.pullingDir, fileName(image)), { force: true });
  }

  listIntents(): { items: { image: string }[]; errors: string[] } {
    return this.list(this.pullingDir, decodeIntent);
  }

  /** the record of an image reference: undefined when there is none (or it is another's); throws when it does not decode */
  getPulled(imageRef: string): ImagePulledRecord | undefined {
    let text: string;
    try {
      text = readFileSync(join(this.pulledDir, fileName(imageRef)), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    const r = decodePulledRecord(text);
    return r.imageRef === imageRef ? r : undefined;
  }

  writePulled(r: ImagePulledRecord): void {
    this.write(this.pulledDir, fileName(r.imageRef), encodePulledRecord(r));
  }

  deletePulled(imageRef: string): void {
    rmSync(join(this.pulledDir, fileName(imageRef)), { force: true });
  }

  listPulled(): { items: ImagePulledRecord[]; errors: string[] } {
    return this.list(this.pulledDir, decodePulledRecord);
  }
}

// ---------------------------------------------------------------------------------------------
// the manager (image_pull_manager.go)

/** how many Secrets a record may hold before a match stops adding the pod's to it */
const WRITE_RECORD_WHILE_MATCHING_LIMIT = 100;

export interface PullManagerLog {
  info(msg: string, kv?: Record<string, unknown>): void;
  error(err: Error, msg: string, kv?: Record<string, unknown>): void;
}

function secretLess(a: PullSecretRecord, b: PullSecretRecord): number {
  const c = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return c(a.namespace, b.namespace) || c(a.name, b.name) || c(a.uid, b.uid);
}

/** the Secrets of both, one per (uid, namespace, name), `add`'s hash winning; sorted by namespace, name, uid */
function mergeSecrets(orig: PullSecretRecord[], add: PullSecretRecord[]): PullSecretRecord[] {
  const m = new Map<string, PullSecretRecord>();
  const key = (s: PullSecretRecord) => JSON.stringify([s.uid, s.namespace, s.name]);
  for (const s of orig) m.set(key(s), { ...s });
  for (const s of add) m.set(key(s), { ...s });
  return [...m.values()].sort(secretLess);
}

function sameCredentials(a: PullCredentials | undefined, b: PullCredentials | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** `record` with `creds` merged in for `name`; undefined when nothing changes */
export function mergeCredentials(record: ImagePulledRecord, name: string, creds: PullCredentials | undefined, now: number): ImagePulledRecord | undefined {
  if (!creds || (!creds.nodePodsAccessible && !creds.kubernetesSecrets?.length)) return undefined;
  const old = record.credentialMapping[name];
  let next: PullCredentials;
  if (!old) next = creds.nodePodsAccessible ? { nodePodsAccessible: true } : { kubernetesSecrets: mergeSecrets([], creds.kubernetesSecrets ?? []) };
  else if (creds.nodePodsAccessible) next = { nodePodsAccessible: true };
  else next = { ...(old.nodePodsAccessible ? { nodePodsAccessible: true } : {}), kubernetesSecrets: mergeSecrets(old.kubernetesSecrets ?? [], creds.kubernetesSecrets ?? []) };
  if (old?.nodePodsAccessible && next.kubernetesSecrets) {
    // (once anyone may use it, Secrets add nothing)
    next = { nodePodsAccessible: true };
  }
  if (sameCredentials(old, next)) return undefined;
  return { ...record, lastUpdatedTime: rfc3339(now), credentialMapping: { ...record.credentialMapping, [name]: next } };
}

export interface ImagePullManagerOptions {
  rootDir: string;
  /** imagePullCredentialsVerificationPolicy's function (verificationPolicy()) */
  policy: VerificationPolicy;
  log: PullManagerLog;
  now?: () => number;
}

export class ImagePullManager {
  readonly store: PullRecordsStore;
  /** pulls under way per image (the intent file goes when the last ends) */
  private readonly intents = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly o: ImagePullManagerOptions) {
    this.store = new PullRecordsStore(o.rootDir);
    this.now = o.now ?? Date.now;
  }

  /**
   * At the start: the intents an earlier run left whose image the runtime has now (one of its tags
   * or digests is the intent's image) become pulled records without credentials; their intents go.
   */
  async initialize(listImages: () => Promise<{ id?: string; repoTags?: string[]; repoDigests?: string[] }[]>): Promise<void> {
    const { items, errors } = this.store.listIntents();
    if (errors.length) this.o.log.error(new Error(errors.join('; ')), 'there were errors listing ImagePullIntents, continuing with an incomplete records list');
    if (items.length === 0) return;
    let images: { id?: string; repoTags?: string[]; repoDigests?: string[] }[] = [];
    try {
      images = await listImages();
    } catch (e) {
      this.o.log.error(e as Error, 'failed to list images');
    }
    const inFlight = new Set(items.map((i) => i.image));
    for (const img of images) {
      if (!img.id) continue;
      const found = new Set([...(img.repoDigests ?? []), ...(img.repoTags ?? [])].filter((n) => inFlight.has(n)));
      for (const image of found) {
        try {
          this.writePulled(image, img.id, undefined);
        } catch (e) {
          this.o.log.error(e as Error, 'failed to write an image pull record', { imageRef: img.id });
          continue;
        }
        try {
          this.store.deleteIntent(image);
        } catch (e) {
          this.o.log.info('failed to remove image pull intent file', { imageName: image, error: (e as Error).message });
        }
      }
    }
  }

  /** before a pull: the intent is on disk (throws when it cannot be written: the pull does not happen) */
  recordPullIntent(image: string): void {
    try {
      this.store.writeIntent(image);
    } catch (e) {
      throw new Error(`failed to record image pull intent: ${(e as Error).message}`);
    }
    this.intents.set(image, (this.intents.get(image) ?? 0) + 1);
  }

  /** after a pull that succeeded, with the credentials it used (none: anonymous or the node's) */
  recordImagePulled(image: string, imageRef: string, creds: PullCredentials): void {
    try {
      this.writePulled(image, imageRef, creds);
    } catch (e) {
      // (the intent stays: the next start turns it into a record)
      this.o.log.error(e as Error, 'failed to write image pulled record', { imageRef });
      return;
    }
    this.decrementIntent(image);
  }

  /** after a pull that failed (or did not happen) */
  recordImagePullFailed(image: string): void {
    this.decrementIntent(image);
  }

  private decrementIntent(image: string): void {
    const n = this.intents.get(image) ?? 0;
    if (n <= 1) {
      try {
        this.store.deleteIntent(image);
      } catch (e) {
        this.o.log.error(e as Error, 'failed to remove image pull intent', { image });
        return;
      }
      this.intents.delete(image);
      return;
    }
    this.intents.set(image, n - 1);
  }

  /** merges `creds` for the image's name into the record of imageRef (a new record when none; undefined creds: tracked, no credentials) */
  private writePulled(image: string, imageRef: string, creds: PullCredentials | undefined): void {
    let name: string;
    try {
      name = normalizedImageName(image);
    } catch (e) {
      throw new Error(`invalid image name ${JSON.stringify(image)}: ${(e as Error).message}`);
    }
    let record: ImagePulledRecord | undefined;
    try {
      record = this.store.getPulled(imageRef);
    } catch (e) {
      this.o.log.info('failed to retrieve an ImagePulledRecord', { image, err: (e as Error).message });
      record = undefined;
    }
    if (!record) {
      const fresh: ImagePulledRecord = { lastUpdatedTime: rfc3339(this.now()), imageRef, credentialMapping: {} };
      const merged = creds ? mergeCredentials(fresh, name, creds, this.now()) : undefined;
      this.store.writePulled(merged ?? fresh);
      return;
    }
    const merged = mergeCredentials(record, name, creds, this.now());
    if (merged) this.store.writePulled(merged);
  }

  /**
   * Whether the kubelet must pull `image` (a container's image field), present as `imageRef`, for a
   * pod whose matching pull Secrets are `podSecrets` (coordinates and the hash of each credential).
   */
  mustAttemptImagePull(image: string, imageRef: string, podSecrets: PullSecretRecord[]): boolean {
    if (!imageRef) return true;
    let record: ImagePulledRecord | undefined;
    let pulledByKubelet: boolean;
    try {
      record = this.store.getPulled(imageRef);
      pulledByKubelet = record !== undefined || (this.intents.get(image) ?? 0) > 0 || this.store.intentExists(image);
    } catch (e) {
      this.o.log.error(e as Error, 'Unable to access cache records about image pulls');
      return true;
    }
    if (!this.o.policy(image, pulledByKubelet)) return false;
    if (!record) return true;
    let name: string;
    try {
      name = normalizedImageName(image);
    } catch (e) {
      this.o.log.error(e as Error, 'failed to parse image name, forcing image credentials reverification', { image });
      return true;
    }
    const cached = record.credentialMapping[name];
    if (!cached) return true;
    if (cached.nodePodsAccessible) return false;
    const secrets = cached.kubernetesSecrets ?? [];
    if (secrets.length === 0) return true;
    for (const ps of podSecrets) {
      for (const cs of secrets) {
        const hashesMatch = cs.credentialHash.length > 0 && ps.credentialHash === cs.credentialHash;
        const coordinatesMatch = ps.uid === cs.uid && ps.namespace === cs.namespace && ps.name === cs.name;
        if (hashesMatch) {
          // another Secret with the same credential: it may use the image from now on too
          if (!coordinatesMatch && secrets.length < WRITE_RECORD_WHILE_MATCHING_LIMIT) this.remember(image, imageRef, ps);
          return false;
        }
        if (coordinatesMatch && secrets.length < WRITE_RECORD_WHILE_MATCHING_LIMIT) {
          // the same Secret, its credential changed since: the new one is recorded
          this.remember(image, imageRef, ps);
          return false;
        }
      }
    }
    return true;
  }

  private remember(image: string, imageRef: string, s: PullSecretRecord): void {
    try {
      this.writePulled(image, imageRef, { kubernetesSecrets: [s] });
    } catch (e) {
      this.o.log.error(e as Error, 'failed to write an image pulled record', { image, imageRef });
    }
  }

  /**
   * The image garbage collector's clean-up: the pulled records of image references not in
   * `imageRefs`, last updated before `until` (ms), are removed.
   */
  pruneUnknownRecords(imageRefs: string[], until: number): void {
    const { items, errors } = this.store.listPulled();
    if (errors.length) this.o.log.error(new Error(errors.join('; ')), 'there were errors listing ImagePulledRecords, garbage collection will proceed with incomplete records list');
    const keep = new Set(imageRefs);
    for (const r of items) {
      const t = Date.parse(r.lastUpdatedTime);
      if (!(t < until)) continue;
      if (keep.has(r.imageRef)) continue;
      try {
        this.store.deletePulled(r.imageRef);
      } catch (e) {
        this.o.log.error(e as Error, 'failed to remove an ImagePulledRecord', { imageRef: r.imageRef });
      }
    }
  }
}
