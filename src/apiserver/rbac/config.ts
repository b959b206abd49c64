// --authorization-config: a structured AuthorizationConfiguration file (apiserver.config.k8s.io,
// v1 since Kubernetes 1.32; v1beta1 and v1alpha1 read alike) naming the authorizers in order, in
// place of --authorization-mode. Keelson implements the types AlwaysAllow, AlwaysDeny, RBAC and
// Node; a Webhook authorizer is refused. The two flags may not be given together.
import { yaml } from '../../codec/yaml-lazy.js';
import { validateAuthorizationModes } from './authorizers.js';

const API_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.k8s.io/v1alpha1'];

export interface AuthorizerConfig {
  type: string;
  name: string;
}

/**
 * The modes of an AuthorizationConfiguration document (YAML or JSON). Throws an Error listing
 * what is wrong.
 */
export function modesFromAuthorizationConfig(text: string): string[] {
  let doc: any;
  try {
    doc = yaml().parse(text);
  } catch (e) {
    throw new Error(`failed to parse authorization config: ${(e as Error).message}`);
  }
  const errs: string[] = [];
  if (!doc || typeof doc !== 'object') throw new Error('failed to parse authorization config: not an object');
  if (doc.kind !== 'AuthorizationConfiguration') errs.push(`kind: Invalid value: ${JSON.stringify(doc.kind ?? '')}: must be AuthorizationConfiguration`);
  if (!API_VERSIONS.includes(doc.apiVersion)) errs.push(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion ?? '')}: supported values: ${API_VERSIONS.map((v) => JSON.stringify(v)).join(', ')}`);
  const list: AuthorizerConfig[] = Array.isArray(doc.authorizers) ? doc.authorizers : [];
  if (list.length === 0) errs.push('authorizers: Required value: at least one authorization mode must be defined');
  const names = new Set<string>();
  const modes: string[] = [];
  list.forEach((a, i) => {
    const p = `authorizers[${i}]`;
    if (!a?.type) errs.push(`${p}.type: Required value`);
    if (!a?.name) errs.push(`${p}.name: Required value`);
    else if (names.has(a.name)) errs.push(`${p}.name: Duplicate value: ${JSON.stringify(a.name)}`);
    else names.add(a.name);
    if (a?.type === 'Webhook') errs.push(`${p}.type: Unsupported value: "Webhook": webhook authorizers are not supported by keelson`);
    else if (a?.type) modes.push(a.type);
  });
  errs.push(...validateAuthorizationModes(modes).filter((e) => !e.startsWith('at least one')));
  if (errs.length) throw new Error(`invalid authorization config: ${errs.join(', ')}`);
  return modes;
}

/** the modes of the two flags: --authorization-config wins; both given is an error */
export function resolveAuthorizationModes(flags: { authorizationMode?: string[]; authorizationModeSet?: boolean; authorizationConfig?: string; readFile: (p: string) => string }): string[] {
  if (flags.authorizationConfig) {
    if (flags.authorizationModeSet) throw new Error('--authorization-config can not be specified when --authorization-mode is specified');
    return modesFromAuthorizationConfig(flags.readFile(flags.authorizationConfig));
  }
  return flags.authorizationMode ?? ['AlwaysAllow'];
}
