// --encryption-provider-config: the EncryptionConfiguration file (apiserver.config.k8s.io/v1,
// also the legacy `apiVersion: v1, kind: EncryptionConfig` kube-apiserver still reads), decoded
// strictly and validated with kube-apiserver's rules and messages, then turned into one
// transformer per group and resource. A resource no rule names has no transformer at all: its
// bytes go to storage as they are, and its writes and reads pay nothing.
//
//   kind: EncryptionConfiguration
//   apiVersion: apiserver.config.k8s.io/v1
//   resources:
//   - resources: [secrets, configmaps]       # also '*.apps', '*.' (the core group), '*.*'
//     providers:                             # the first one writes, every one reads
//     - aesgcm: {keys: [{name: key2, secret: <base64 of 16, 24 or 32 bytes>}]}
//     - aescbc: {keys: [{name: key1, secret: <base64>}]}
//     - secretbox: {keys: [{name: key0, secret: <base64 of 32 bytes>}]}
//     - identity: {}                         # unencrypted data stays readable
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { yaml } from '../../codec/yaml-lazy.js';
import { aggregate } from '../../machinery/errors.js';
import { aesCBCTransformer, aesGCMTransformer } from '../../storage/value/aes.js';
import { secretboxTransformer } from '../../storage/value/secretbox.js';
import { identityTransformer, PrefixTransformers, type PrefixTransformer, type Transformer } from '../../storage/value/transformer.js';
import { goQuote } from '../../machinery/gostrings.js';

export const AESCBC_PREFIX = 'k8s:enc:aescbc:v1:';
export const AESGCM_PREFIX = 'k8s:enc:aesgcm:v1:';
export const SECRETBOX_PREFIX = 'k8s:enc:secretbox:v1:';

const GROUP_VERSION = 'apiserver.config.k8s.io/v1';
const KIND = 'EncryptionConfiguration';
/** the name kube-apiserver's decoder gives its scheme in "not registered" messages */
const SCHEME = 'k8s.io/apiserver/pkg/server/options/encryptionconfig/config.go:142';
/** the other kinds of apiserver.config.k8s.io/v1: they decode, but are not this file */
const OTHER_KINDS = ['AdmissionConfiguration', 'AuthorizationConfiguration'];

const AES_KEY_SIZES = [16, 24, 32];
const SECRETBOX_KEY_SIZES = [32];

interface Key {
  name: string;
  secret: string;
}

interface Provider {
  aescbc?: { keys: Key[] };
  aesgcm?: { keys: Key[] };
  secretbox?: { keys: Key[] };
  identity?: Record<string, never>;
  kms?: { name?: string; apiVersion?: string; endpoint?: string };
}

interface ResourceConfiguration {
  resources: string[];
  providers: Provider[];
}

export interface EncryptionConfiguration {
  kind: string;
  apiVersion: string;
  resources: ResourceConfiguration[];
}

/** a group and resource as the configuration names them ('*' in either: any) */
interface GroupResource {
  group: string;
  resource: string;
}

/** schema.ParseGroupResource: the resource before the first dot, the group after it */
function parseGroupResource(s: string): GroupResource {
  const i = s.indexOf('.');
  return i >= 0 ? { group: s.slice(i + 1), resource: s.slice(0, i) } : { group: '', resource: s };
}

/** how Kubernetes writes a group and resource in messages about this file */
function grString(gr: GroupResource): string {
  if (gr.group === '' && gr.resource === '*') return '*.';
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

const grKey = (gr: GroupResource) => `${gr.resource}\x00${gr.group}`;

/** the loaded configuration: a transformer per configured group and resource */
export class EncryptionConfig {
  constructor(
    /** a digest of the file, to tell a changed file from a touched one (automatic reload) */
    readonly contentHash: string,
    private readonly byResource: Map<string, Transformer>,
    /** the configured resources, for the log */
    readonly resources: string[],
  ) {}

  /**
   * The transformer of a resource: its own rule, else its group's `*.<group>`, else `*.*`;
   * undefined when none applies (the value is stored as it is).
   */
  transformerFor(group: string, resource: string): Transformer | undefined {
    return this.byResource.get(grKey({ group, resource })) ?? this.byResource.get(grKey({ group, resource: '*' })) ?? this.byResource.get(grKey({ group: '*', resource: '*' }));
  }
}

/** the digest kube-apiserver keeps of the file (only to compare two readings) */
export function encryptionConfigHash(data: Buffer): string {
  return 'k8s:enc:unstable:1:' + createHash('sha256').update(data).digest('hex');
}

/**
 * Read, decode and validate the file and build its transformers. Throws an Error worded as
 * kube-apiserver words it (`error while parsing file: ...`, `error while building transformers: ...`).
 */
export function loadEncryptionConfig(path: string): EncryptionConfig {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (e) {
    throw new Error(`error while parsing file: error while loading file: error reading encryption provider configuration file ${JSON.stringify(path)}: ${goFSError(e)}`);
  }
  if (data.length === 0) throw new Error(`error while parsing file: error while loading file: encryption provider configuration file ${JSON.stringify(path)} is empty`);
  let config: EncryptionConfiguration;
  try {
    config = decodeEncryptionConfiguration(data.toString('utf8'));
  } catch (e) {
    if (e instanceof UnexpectedTypeError) throw new Error(`error while parsing file: ${e.message}`);
    throw new Error(`error while parsing file: error decoding encryption provider configuration file ${JSON.stringify(path)}: ${(e as Error).message}`);
  }
  const errs = validateEncryptionConfiguration(config);
  if (errs.length) throw new Error(`error while parsing file: ${aggregate(errs.map(String))}`);
  try {
    return buildTransformers(config, encryptionConfigHash(data));
  } catch (e) {
    throw new Error(`error while building transformers: ${(e as Error).message}`);
  }
}

function goFSError(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  switch (err.code) {
    case 'ENOENT':
      return `open ${err.path}: no such file or directory`;
    case 'EACCES':
      return `open ${err.path}: permission denied`;
    case 'EISDIR':
      return `read ${err.path}: is a directory`;
    default:
      return err.message;
  }
}

// ---- decoding (the strict universal decoder of kube-apiserver's config scheme) ----

class UnexpectedTypeError extends Error {}

/** Go's name of a JSON value's type in unmarshal errors */
function goType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

/** YAML or JSON to the typed configuration, with the decoder's checks of kind, version and fields */
export function decodeEncryptionConfiguration(text: string): EncryptionConfiguration {
  let raw: unknown;
  try {
    raw = yaml().parse(text, { uniqueKeys: true });
  } catch (e) {
    throw new Error(`error converting YAML to JSON: yaml: ${(e as Error).message.split('\n')[0]}`);
  }
  if (raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) {
    throw new Error(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${goType(raw)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    );
  }
  const o = (raw ?? {}) as Record<string, unknown>;
  const kind = typeof o.kind === 'string' ? o.kind : '';
  const apiVersion = typeof o.apiVersion === 'string' ? o.apiVersion : '';
  if (!kind) throw new Error(`Object 'Kind' is missing in '${text}'`);
  if (!apiVersion) throw new Error(`Object 'apiVersion' is missing in '${text}'`);
  const legacy = apiVersion === 'v1' && kind === 'EncryptionConfig';
  if (!legacy && !(apiVersion === GROUP_VERSION && (kind === KIND || OTHER_KINDS.includes(kind)))) {
    throw new Error(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme ${JSON.stringify(SCHEME)}`);
  }
  if (kind !== KIND && !legacy) throw new UnexpectedTypeError(`got unexpected config type: ${apiVersion}, Kind=${kind}`);
  const unknown: string[] = [];
  const out: EncryptionConfiguration = { kind, apiVersion, resources: [] };
  known(o, ['kind', 'apiVersion', 'resources'], '', unknown);
  const resources = o.resources ?? [];
  if (!Array.isArray(resources)) throw unmarshal(resources, 'EncryptionConfiguration', 'resources', '[]v1.ResourceConfiguration');
  resources.forEach((r, i) => {
    if (r === null) r = {};
    if (typeof r !== 'object' || Array.isArray(r)) throw unmarshal(r, 'EncryptionConfiguration', 'resources', 'v1.ResourceConfiguration');
    const rc = r as Record<string, unknown>;
    known(rc, ['resources', 'providers'], `resources[${i}].`, unknown);
    const names = rc.resources ?? [];
    if (!Array.isArray(names)) throw unmarshal(names, 'ResourceConfiguration', 'resources.resources', '[]string');
    for (const n of names) if (typeof n !== 'string') throw unmarshal(n, 'ResourceConfiguration', 'resources.resources', 'string');
    const providers = rc.providers ?? [];
    if (!Array.isArray(providers)) throw unmarshal(providers, 'ResourceConfiguration', 'resources.providers', '[]v1.ProviderConfiguration');
    const ps = providers.map((p, j) => decodeProvider(p, `resources[${i}].providers[${j}]`, unknown));
    out.resources.push({ resources: names as string[], providers: ps });
  });
  if (unknown.length) throw new Error(`strict decoding error: ${unknown.map((f) => `unknown field ${JSON.stringify(f)}`).join(', ')}`);
  return out;
}

/** note the fields of `o` the type does not have (the strict decoder reports each) */
function known(o: Record<string, unknown>, fields: string[], path: string, unknown: string[]): void {
  for (const k of Object.keys(o)) if (!fields.includes(k)) unknown.push(path + k);
}

function decodeProvider(p: unknown, path: string, unknown: string[]): Provider {
  if (p === null) return {};
  if (typeof p !== 'object' || Array.isArray(p)) throw unmarshal(p, 'ResourceConfiguration', 'resources.providers', 'v1.ProviderConfiguration');
  const o = p as Record<string, unknown>;
  known(o, ['aescbc', 'aesgcm', 'secretbox', 'identity', 'kms'], `${path}.`, unknown);
  const out: Provider = {};
  for (const name of ['aescbc', 'aesgcm', 'secretbox'] as const) {
    const v = o[name];
    if (v === undefined || v === null) continue;
    const type = name === 'secretbox' ? 'SecretboxConfiguration' : 'AESConfiguration';
    const fieldPath = `resources.providers.${name}`;
    if (typeof v !== 'object' || Array.isArray(v)) throw unmarshal(v, 'ProviderConfiguration', fieldPath, `v1.${type}`);
    known(v as Record<string, unknown>, ['keys'], `${path}.${name}.`, unknown);
    const keys = (v as Record<string, unknown>).keys ?? [];
    if (!Array.isArray(keys)) throw unmarshal(keys, type, `${fieldPath}.keys`, '[]v1.Key');
    out[name] = {
      keys: keys.map((k, i) => {
        if (k === null) return { name: '', secret: '' };
        if (typeof k !== 'object' || Array.isArray(k)) throw unmarshal(k, type, `${fieldPath}.keys`, 'v1.Key');
        const kk = k as Record<string, unknown>;
        known(kk, ['name', 'secret'], `${path}.${name}.keys[${i}].`, unknown);
        for (const f of ['name', 'secret']) {
          if (kk[f] !== undefined && kk[f] !== null && typeof kk[f] !== 'string') throw unmarshal(kk[f], 'Key', `${fieldPath}.keys.${f}`, 'string');
        }
        return { name: (kk.name as string) ?? '', secret: (kk.secret as string) ?? '' };
      }),
    };
  }
  if (o.identity !== undefined && o.identity !== null) {
    if (typeof o.identity !== 'object' || Array.isArray(o.identity)) throw unmarshal(o.identity, 'ProviderConfiguration', 'resources.providers.identity', 'v1.IdentityConfiguration');
    known(o.identity as Record<string, unknown>, [], `${path}.identity.`, unknown);
    out.identity = {};
  }
  if (o.kms !== undefined && o.kms !== null) {
    if (typeof o.kms !== 'object' || Array.isArray(o.kms)) throw unmarshal(o.kms, 'ProviderConfiguration', 'resources.providers.kms', 'v1.KMSConfiguration');
    known(o.kms as Record<string, unknown>, ['apiVersion', 'name', 'cachesize', 'endpoint', 'timeout'], `${path}.kms.`, unknown);
    out.kms = o.kms as Provider['kms'];
  }
  return out;
}

function unmarshal(v: unknown, struct: string, fieldPath: string, goTypeName: string): Error {
  return new Error(`json: cannot unmarshal ${goType(v)} into Go struct field ${struct}.${fieldPath} of type ${goTypeName}`);
}

// ---- validation (k8s.io/apiserver/pkg/apis/apiserver/validation, EncryptionConfiguration) ----

/** a field error with its value printed the way Go's %#v prints it */
class ConfigFieldError {
  constructor(
    readonly path: string,
    readonly type: 'Required value' | 'Invalid value',
    readonly value: string | undefined,
    readonly detail: string,
  ) {}

  toString(): string {
    return `${this.path}: ${this.type}${this.value !== undefined ? `: ${this.value}` : ''}: ${this.detail}`;
  }
}

const required = (path: string, detail: string) => new ConfigFieldError(path, 'Required value', undefined, detail);
const invalid = (path: string, goValue: string, detail: string) => new ConfigFieldError(path, 'Invalid value', goValue, detail);
const goStrings = (l: string[]) => `[]string{${l.map(goQuote).join(', ')}}`;

/** %#v of an internal ProviderConfiguration (pointers print as addresses in Go; a fixed one here) */
function goProvider(p: Provider): string {
  const ptr = (type: string, set: unknown) => `(*apiserver.${type})(${set === undefined ? 'nil' : '0xc000010000'})`;
  return `apiserver.ProviderConfiguration{AESGCM:${ptr('AESConfiguration', p.aesgcm)}, AESCBC:${ptr('AESConfiguration', p.aescbc)}, Secretbox:${ptr('SecretboxConfiguration', p.secretbox)}, Identity:${ptr('IdentityConfiguration', p.identity)}, KMS:${ptr('KMSConfiguration', p.kms)}}`;
}

export function validateEncryptionConfiguration(c: EncryptionConfiguration): ConfigFieldError[] {
  const errs: ConfigFieldError[] = [];
  if (c.resources.length === 0) return [required('resources', 'at least one resources is required')];
  c.resources.forEach((conf, i) => {
    const r = `resources[${i}].resources`;
    const p = `resources[${i}].providers`;
    if (conf.resources.length === 0) errs.push(required(r, `at least one ${r} is required`));
    errs.push(...validateResourceOverlap(conf.resources, r));
    errs.push(...validateResourceNames(conf.resources, r));
    if (conf.providers.length === 0) errs.push(required(p, `at least one ${p} is required`));
    conf.providers.forEach((provider, j) => {
      const path = `${p}[${j}]`;
      errs.push(...validateSingleProvider(provider, path));
      if (provider.kms) return; // refused when the transformers are built
      if (provider.aesgcm) errs.push(...validateKeys(provider.aesgcm.keys, `${path}.aesgcm.keys`, AES_KEY_SIZES));
      else if (provider.aescbc) errs.push(...validateKeys(provider.aescbc.keys, `${path}.aescbc.keys`, AES_KEY_SIZES));
      else if (provider.secretbox) errs.push(...validateKeys(provider.secretbox.keys, `${path}.secretbox.keys`, SECRETBOX_KEY_SIZES));
    });
  });
  return errs;
}

function validateResourceOverlap(resources: string[], path: string): ConfigFieldError[] {
  if (resources.length < 2) return [];
  const rs = resources.map(parseGroupResource);
  let hasOverlap = false;
  let hasDuplicate = false;
  for (let i = 0; i < rs.length; i++) {
    for (let j = 0; j < rs.length; j++) {
      if (i === j) continue;
      const a = rs[i]!;
      const b = rs[j]!;
      if (a.group === b.group && a.resource === b.resource && !hasDuplicate) {
        hasDuplicate = true;
        continue;
      }
      if (hasOverlap) continue;
      if (a.group === '*' && a.resource === '*') {
        hasOverlap = true;
        continue;
      }
      if (a.group !== b.group) continue;
      if (a.resource === '*' || b.resource === '*') hasOverlap = true;
    }
  }
  const errs: ConfigFieldError[] = [];
  if (hasDuplicate) errs.push(invalid(path, goStrings(resources), 'the same resource cannot be specified multiple times'));
  if (hasOverlap) errs.push(invalid(path, goStrings(resources), "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"));
  return errs;
}

function validateResourceNames(resources: string[], path: string): ConfigFieldError[] {
  const errs: ConfigFieldError[] = [];
  resources.forEach((res, j) => {
    const p = `${path}[${j}]`;
    const v = goQuote(res);
    if (res.toLowerCase() !== res) errs.push(invalid(p, v, 'resource name should not contain capital letters'));
    else if (res === '*') errs.push(invalid(p, v, "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"));
    else if (res === 'apiserveripinfo' || res === 'serviceipallocations' || res === 'servicenodeportallocations') {
      errs.push(invalid(p, v, 'resources which do not have REST API/s cannot be encrypted'));
    } else {
      const gr = parseGroupResource(res);
      if (gr.group === 'events.k8s.io') errs.push(invalid(p, v, "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"));
      else if (gr.group === 'extensions') errs.push(invalid(p, v, "'extensions' group has been removed and cannot be used for encryption"));
      else if (gr.group === '*' && gr.resource !== '*') errs.push(invalid(p, v, 'encrypting the same resource across groups is not supported'));
    }
  });
  return errs;
}

function validateSingleProvider(p: Provider, path: string): ConfigFieldError[] {
  const found = [p.kms, p.aesgcm, p.aescbc, p.secretbox, p.identity].filter((x) => x !== undefined).length;
  if (found === 0) return [invalid(path, goProvider(p), 'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity')];
  if (found > 1) return [invalid(path, goProvider(p), 'more than one provider specified in a single element, should split into different list elements')];
  return [];
}

function validateKeys(keys: Key[], path: string, sizes: number[]): ConfigFieldError[] {
  if (keys.length === 0) return [required(path, 'at least one keys is required')];
  const errs: ConfigFieldError[] = [];
  keys.forEach((key, i) => {
    const p = `${path}[${i}]`;
    if (key.name === '') errs.push(required(`${p}.name`, 'name is a mandatory field for a key'));
    if (key.secret === '') {
      errs.push(required(`${p}.secret`, 'secret is a mandatory field for a key'));
      return;
    }
    const secret = decodeStdBase64(key.secret);
    if (!secret) {
      errs.push(invalid(`${p}.secret`, '"REDACTED"', 'secrets must be base64 encoded'));
      return;
    }
    if (!sizes.includes(secret.length)) errs.push(invalid(`${p}.secret`, '"REDACTED"', `secret is not of the expected length, got ${secret.length}, expected one of [${sizes.join(' ')}]`));
  });
  return errs;
}

/** Go's base64.StdEncoding: padded, the standard alphabet (CR and LF skipped), nothing else */
function decodeStdBase64(s: string): Buffer | undefined {
  const t = s.replace(/[\r\n]/g, '');
  if (t.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(t)) return undefined;
  return Buffer.from(t, 'base64');
}

// ---- transformers ----

function buildTransformers(config: EncryptionConfiguration, contentHash: string): EncryptionConfig {
  const lists = new Map<string, PrefixTransformer[]>();
  const order: GroupResource[] = [];
  const any = { group: '*', resource: '*' };
  for (const rc of config.resources) {
    const transformers = rc.providers.map(providerTransformer);
    for (const res of rc.resources) {
      const gr = parseGroupResource(res);
      // a rule after `*.<group>` or `*.*` would never apply: Kubernetes refuses the file
      const anyInGroup = { group: gr.group, resource: '*' };
      if (lists.has(grKey(anyInGroup))) throw new Error(`resource ${JSON.stringify(grString(gr))} is masked by earlier rule ${JSON.stringify(grString(anyInGroup))}`);
      if (lists.has(grKey(any))) throw new Error(`resource ${JSON.stringify(grString(gr))} is masked by earlier rule ${JSON.stringify(grString(any))}`);
      let list = lists.get(grKey(gr));
      if (!list) {
        lists.set(grKey(gr), (list = []));
        order.push(gr);
      }
      list.push(...transformers);
    }
  }
  const byResource = new Map<string, Transformer>();
  for (const gr of order) byResource.set(grKey(gr), new PrefixTransformers('no matching prefix found', lists.get(grKey(gr))!));
  return new EncryptionConfig(contentHash, byResource, order.map(grString));
}

function providerTransformer(p: Provider): PrefixTransformer {
  if (p.aesgcm) return keyedProvider(AESGCM_PREFIX, p.aesgcm.keys, aesGCMTransformer, 'no matching key was found for the provided AES transformer');
  if (p.aescbc) return keyedProvider(AESCBC_PREFIX, p.aescbc.keys, aesCBCTransformer, 'no matching key was found for the provided AES transformer');
  if (p.secretbox) return keyedProvider(SECRETBOX_PREFIX, p.secretbox.keys, secretboxTransformer, 'no matching key was found for the provided Secretbox transformer');
  if (p.identity) return { prefix: new Uint8Array(0), transformer: identityTransformer };
  if (p.kms) throw new Error(`could not configure KMS plugin ${JSON.stringify(p.kms.name ?? '')}: KMS providers are not supported by Keelson (use aescbc, aesgcm or secretbox)`);
  throw new Error('provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity');
}

/** one provider: its prefix, then one transformer per key told apart by `<key name>:` */
function keyedProvider(prefix: string, keys: Key[], make: (key: Uint8Array) => Transformer, noMatch: string): PrefixTransformer {
  const perKey: PrefixTransformer[] = keys.map((k) => ({ prefix: Buffer.from(k.name + ':'), transformer: make(decodeStdBase64(k.secret)!) }));
  return { prefix: Buffer.from(prefix), transformer: new PrefixTransformers(noMatch, perKey) };
}
