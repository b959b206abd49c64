// The admission chain: kube-apiserver's plugins, by kube-apiserver's names, in its fixed order
// (Kubernetes 1.33), enabled by default as kube-apiserver enables them and chosen with
// --enable-admission-plugins / --disable-admission-plugins. mutate() runs the mutating half of
// every enabled plugin in order (twice when a mutating webhook changed the object and a webhook
// asks to be reinvoked); validate() runs the validating half. A plugin rejects by throwing a
// StatusError; the first rejection ends the request.
import { errors } from '../../machinery/errors.js';
import type { AdmissionAttributes, AdmissionPlugin, ClusterReader, ClusterWriter } from './types.js';
import type { EquivalentResolver } from './equivalent.js';
import { namespaceAutoProvision, namespaceExists, namespaceLifecycle } from './namespace.js';
import { serviceAccountPlugin, type ServiceAccountPluginOptions } from './serviceaccount.js';
import { limitRanger } from './limitranger.js';
import { nodeRestriction } from './noderestriction.js';
import { podSecurity, type PodSecurityOptions } from './podsecurity.js';
import {
  alwaysPullImages,
  defaultIngressClass,
  defaultStorageClass,
  defaultTolerationSeconds,
  denyServiceExternalIPs,
  extendedResourceToleration,
  limitPodHardAntiAffinityTopology,
  persistentVolumeClaimResize,
  priorityPlugin,
  runtimeClassPlugin,
  storageObjectInUseProtection,
  taintNodesByCondition,
} from './pods.js';
import { certificateSubjectRestriction } from './certificates.js';
import { mutatingWebhooks, validatingWebhooks, type WebhookPluginOptions } from './webhook.js';
import { resourceQuota, type ResourceQuotaOptions } from './resourcequota.js';
import { existingReinvocationContext } from './reinvocation.js';
import { forbidden } from './util.js';
import { certificateApproval, certificateSigning, ownerReferencesPermissionEnforcement, type KindsSource } from './authorization.js';
import { AlwaysAllow, type Authorizer } from '../authz.js';
import { validatingAdmissionPolicy } from './vap.js';

/** kube-apiserver's AllOrderedPlugins (1.33): the order the enabled plugins run in */
export const ADMISSION_PLUGIN_ORDER: readonly string[] = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'PodTopologyLabels',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
];

const DEFAULT_ON = new Set([
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'DefaultStorageClass',
  'PersistentVolumeClaimResize',
  'DefaultTolerationSeconds',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'StorageObjectInUseProtection',
  'Priority',
  'TaintNodesByCondition',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'PodSecurity',
  'PodTopologyLabels',
  'MutatingAdmissionPolicy',
  'ValidatingAdmissionPolicy',
]);

/** the plugins enabled when no flag says otherwise, in order */
export const DEFAULT_ENABLED_ADMISSION_PLUGINS: readonly string[] = ADMISSION_PLUGIN_ORDER.filter((n) => DEFAULT_ON.has(n));

/** every plugin name, sorted (as kube-apiserver lists them in --help) */
export const REGISTERED_ADMISSION_PLUGINS: readonly string[] = [...ADMISSION_PLUGIN_ORDER].sort();

/**
 * Plugins whose name is accepted but which Keelson does not implement: they need a configuration
 * file (--admission-control-config-file, not supported yet) or namespace annotations Keelson does
 * not read. Enabling one is an error at start.
 */
export const UNSUPPORTED_ADMISSION_PLUGINS: readonly string[] = ['ImagePolicyWebhook', 'EventRateLimit', 'PodNodeSelector', 'PodTolerationRestriction'];

/** the help texts of the two flags, as kube-apiserver words them */
export function admissionFlagHelp(): { enable: string; disable: string } {
  const defaults = DEFAULT_ENABLED_ADMISSION_PLUGINS.join(', ');
  const all = REGISTERED_ADMISSION_PLUGINS.join(', ');
  return {
    enable: `admission plugins that should be enabled in addition to default enabled ones (${defaults}). Comma-delimited list of admission plugins: ${all}. The order of plugins in this flag does not matter.`,
    disable: `admission plugins that should be disabled although they are in the default enabled plugins list (${defaults}). Comma-delimited list of admission plugins: ${all}. The order of plugins in this flag does not matter.`,
  };
}

/** kube-apiserver's checks of the two flags; an empty list when they are valid */
export function validateAdmissionPluginFlags(enable: readonly string[], disable: readonly string[]): string[] {
  const errs: string[] = [];
  const known = new Set(ADMISSION_PLUGIN_ORDER);
  for (const n of enable) if (!known.has(n)) errs.push(`enable-admission-plugins plugin ${JSON.stringify(n)} is unknown`);
  for (const n of disable) if (!known.has(n)) errs.push(`disable-admission-plugins plugin ${JSON.stringify(n)} is unknown`);
  const both = [...new Set(enable.filter((n) => disable.includes(n)))].sort();
  if (both.length) errs.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  for (const n of enable) if (UNSUPPORTED_ADMISSION_PLUGINS.includes(n)) errs.push(`enable-admission-plugins plugin ${JSON.stringify(n)} is not supported by Keelson`);
  return errs;
}

/** the enabled plugins, in order: the defaults, plus --enable, minus --disable */
export function enabledAdmissionPlugins(enable: readonly string[], disable: readonly string[]): string[] {
  const on = new Set(enable);
  const off = new Set(disable.filter((n) => !on.has(n)));
  return ADMISSION_PLUGIN_ORDER.filter((n) => !off.has(n) && (DEFAULT_ON.has(n) || on.has(n)));
}

export interface AdmissionChainOptions {
  /** --enable-admission-plugins */
  enable: string[];
  /** --disable-admission-plugins */
  disable: string[];
  /** the API server's stores, read from their caches */
  reader: ClusterReader;
  /** writes plugins make (ResourceQuota status; NamespaceAutoProvision creates namespaces) */
  writer: ClusterWriter;
  /** --default-not-ready-toleration-seconds (300) */
  defaultNotReadyTolerationSeconds?: number;
  /** --default-unreachable-toleration-seconds (300) */
  defaultUnreachableTolerationSeconds?: number;
  /** the namespaces NamespaceLifecycle keeps from deletion (Kubernetes': default, kube-system, kube-public) */
  immortalNamespaces?: string[];
  serviceAccount?: ServiceAccountPluginOptions;
  podSecurity?: PodSecurityOptions;
  resourceQuota?: ResourceQuotaOptions;
  webhook?: WebhookPluginOptions;
  /**
   * the server's authorizer, asked by CertificateApproval, CertificateSigning and
   * OwnerReferencesPermissionEnforcement (AlwaysAllow when missing), and by NodeRestriction for
   * a node's token audiences (none: refused)
   */
  authorizer?: Authorizer;
  /** the ServiceAccountNodeAudienceRestriction feature gate (on when missing, as in 1.33) */
  serviceAccountNodeAudienceRestriction?: boolean;
  /** the kinds the server serves (built-in and CRDs): OwnerReferencesPermissionEnforcement maps an owner's kind to its resource */
  kinds?: KindsSource;
  /** reads of the custom resources' stores (ValidatingAdmissionPolicy parameters of a CRD's kind) */
  customReader?: () => ClusterReader;
  /** the other versions of a request's resource: the webhooks' and policies' matchPolicy Equivalent */
  equivalents?: EquivalentResolver;
}

export interface AdmissionChain {
  /** the enabled plugins, in the order they run */
  readonly plugins: readonly string[];
  /**
   * the mutating phase (after decoding and defaulting, before the strategy prepares the object);
   * a promise only when a plugin answered with one (a rejection is then the promise's), otherwise
   * done when it returns (a rejection is thrown)
   */
  mutate(a: AdmissionAttributes): Promise<void> | undefined;
  /** the validating phase (after the object validated, before it is stored; dry runs too); as mutate */
  validate(a: AdmissionAttributes): Promise<void> | undefined;
}

const noop = (name: string): AdmissionPlugin => ({ name });

function plugin(name: string, o: AdmissionChainOptions): AdmissionPlugin {
  const { reader, writer } = o;
  switch (name) {
    case 'AlwaysAdmit':
      return noop(name);
    case 'AlwaysDeny':
      return {
        name,
        mutate: (a) => {
          throw forbidden(a, 'admission control is denying all modifications');
        },
        validate: (a) => {
          throw forbidden(a, 'admission control is denying all modifications');
        },
      };
    case 'NamespaceAutoProvision':
      return namespaceAutoProvision(reader, writer);
    case 'NamespaceLifecycle':
      return namespaceLifecycle(reader, o.immortalNamespaces);
    case 'NamespaceExists':
      return namespaceExists(reader);
    case 'LimitPodHardAntiAffinityTopology':
      return limitPodHardAntiAffinityTopology();
    case 'LimitRanger':
      return limitRanger(reader);
    case 'ServiceAccount':
      return serviceAccountPlugin(reader, o.serviceAccount);
    case 'NodeRestriction':
      return nodeRestriction(reader, { serviceAccountNodeAudienceRestriction: o.serviceAccountNodeAudienceRestriction, authorizer: o.authorizer });
    case 'TaintNodesByCondition':
      return taintNodesByCondition();
    case 'AlwaysPullImages':
      return alwaysPullImages();
    case 'PodSecurity':
      return podSecurity(reader, o.podSecurity);
    case 'Priority':
      return priorityPlugin(reader);
    case 'DefaultTolerationSeconds':
      return defaultTolerationSeconds(o.defaultNotReadyTolerationSeconds ?? 300, o.defaultUnreachableTolerationSeconds ?? 300);
    case 'ExtendedResourceToleration':
      return extendedResourceToleration();
    case 'DefaultStorageClass':
      return defaultStorageClass(reader);
    case 'StorageObjectInUseProtection':
      return storageObjectInUseProtection();
    case 'PersistentVolumeClaimResize':
      return persistentVolumeClaimResize(reader);
    case 'RuntimeClass':
      return runtimeClassPlugin(reader);
    case 'CertificateSubjectRestriction':
      return certificateSubjectRestriction();
    case 'DefaultIngressClass':
      return defaultIngressClass(reader);
    case 'DenyServiceExternalIPs':
      return denyServiceExternalIPs();
    case 'MutatingAdmissionWebhook':
      return mutatingWebhooks(reader, { ...o.webhook, equivalents: o.equivalents });
    case 'ValidatingAdmissionWebhook':
      return validatingWebhooks(reader, { ...o.webhook, equivalents: o.equivalents });
    case 'ResourceQuota':
      return resourceQuota(reader, writer, o.resourceQuota);
    case 'ValidatingAdmissionPolicy':
      return validatingAdmissionPolicy(reader, { authorizer: o.authorizer, kinds: o.kinds, customReader: o.customReader, equivalents: o.equivalents });
    case 'CertificateApproval':
      return certificateApproval(o.authorizer ?? new AlwaysAllow());
    case 'CertificateSigning':
      return certificateSigning(o.authorizer ?? new AlwaysAllow());
    case 'OwnerReferencesPermissionEnforcement':
      return ownerReferencesPermissionEnforcement(o.authorizer ?? new AlwaysAllow(), o.kinds ?? (() => []));
    // ClusterTrustBundle (certificates.k8s.io/v1beta1) is not served, so there is no bundle to attest.
    case 'ClusterTrustBundleAttest':
    // Behind feature gates that are off in 1.33 (PodTopologyLabelsAdmission, MutatingAdmissionPolicy).
    case 'PodTopologyLabels':
    case 'MutatingAdmissionPolicy':
      return noop(name);
    default:
      throw new Error(`admission plugin ${JSON.stringify(name)} is not supported by Keelson`);
  }
}

/**
 * The admission chain of the enabled plugins. Throws an Error with kube-apiserver's messages
 * (joined by "; ") when the flags name unknown plugins or overlap.
 */
export function buildAdmissionChain(opts: AdmissionChainOptions): AdmissionChain {
  const errs = validateAdmissionPluginFlags(opts.enable, opts.disable);
  if (errs.length) throw new Error(errs.join('; '));
  const names = enabledAdmissionPlugins(opts.enable, opts.disable);
  const plugins = names.map((n) => plugin(n, opts));
  const mutators = plugins.filter((p) => p.mutate);
  const validators = plugins.filter((p) => p.validate);

  const prepare = (a: AdmissionAttributes) => {
    a.warnings ??= [];
    a.auditAnnotations ??= {};
  };
  const refuseSideEffects = (p: AdmissionPlugin, a: AdmissionAttributes) => {
    if (a.dryRun && p.handles?.(a)) throw errors.badRequest(`admission plugin ${JSON.stringify(p.name)} does not support dry run`);
  };
  // Most plugins answer synchronously (the request is not theirs), and a phase in which every
  // plugin did stays synchronous: no promise, no turn of the microtask queue (a write passes two
  // phases, and async functions here cost a few promises each). From the first plugin that
  // answers with a promise on, the rest of the phase runs after it.
  // (each phase's plugins beside their functions of that phase: no keyed look-up of the phase's
  // name on plugins of many shapes per call)
  type Step = { readonly p: AdmissionPlugin; readonly fn: (a: AdmissionAttributes) => Promise<void> | void | undefined };
  const mutateSteps: Step[] = mutators.map((p) => ({ p, fn: p.mutate!.bind(p) }));
  const validateSteps: Step[] = validators.map((p) => ({ p, fn: p.validate!.bind(p) }));
  const run = (list: readonly Step[], a: AdmissionAttributes, from: number): Promise<void> | undefined => {
    for (let i = from; i < list.length; i++) {
      const s = list[i]!;
      refuseSideEffects(s.p, a);
      const r = s.fn(a);
      if (r !== undefined) return r.then(() => run(list, a, i + 1));
    }
    return undefined;
  };
  // only a mutating webhook that ran can ask for a second round
  const reinvoke = (a: AdmissionAttributes): Promise<void> | undefined => {
    const ctx = existingReinvocationContext(a);
    if (!ctx || !ctx.shouldReinvoke || ctx.isReinvoke) return undefined;
    ctx.isReinvoke = true;
    return run(mutateSteps, a, 0);
  };

  return {
    plugins: names,
    mutate(a) {
      prepare(a);
      const r = run(mutateSteps, a, 0);
      return r ? r.then(() => reinvoke(a)) : reinvoke(a);
    },
    validate(a) {
      prepare(a);
      return run(validateSteps, a, 0);
    },
  };
}
