// ServiceAccount: a pod runs as a service account of its namespace. On create the pod gets the
// `default` account when it names none, the projected kube-api-access-* token volume mounted in
// every container (unless automounting is off on the pod or, when the pod does not say, on the
// account), and the account's image pull secrets when it has none; a pod whose account does not
// exist is refused. Mirror pods (the kubelet's static pods) must reference no account, no secret
// and no token projection. An account annotated kubernetes.io/enforce-mountable-secrets=true
// limits the secrets its pods may use to the ones it lists.
import { admitPodServiceAccount } from '../../schema/defaults/admission.js';
import type { AdmissionAttributes, AdmissionPlugin, ClusterReader } from './types.js';
import { annotationsOf, asArray, forbidden, isObject } from './util.js';

export const DEFAULT_SERVICE_ACCOUNT = 'default';
export const ENFORCE_MOUNTABLE_SECRETS_ANNOTATION = 'kubernetes.io/enforce-mountable-secrets';
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

export interface ServiceAccountPluginOptions {
  /**
   * Lookups of the `default` account when the cache does not have it yet (the service account
   * controller creates it just after its namespace): Kubernetes tries 10 times, 100-200 ms apart.
   */
  defaultLookupAttempts?: number;
  /** the suffix of a new kube-api-access- volume (tests pin it) */
  suffix?: () => string;
}

function shouldIgnore(a: AdmissionAttributes): boolean {
  if (a.resource.group !== '' || a.resource.resource !== 'pods') return true;
  if (a.subresource !== '' && a.subresource !== 'ephemeralcontainers') return true;
  return !isObject(a.object);
}

function isMirrorPod(pod: any): boolean {
  return MIRROR_POD_ANNOTATION in annotationsOf(pod);
}

class NotFoundSA extends Error {}

async function getServiceAccount(reader: ClusterReader, namespace: string, name: string, attempts: number): Promise<any> {
  let sa = reader.get('', 'serviceaccounts', namespace, name);
  if (sa) return sa;
  const n = name === DEFAULT_SERVICE_ACCOUNT ? attempts : 0;
  for (let i = 0; i < n; i++) {
    await new Promise((r) => setTimeout(r, 100 + Math.floor(Math.random() * 100)));
    sa = reader.get('', 'serviceaccounts', namespace, name);
    if (sa) return sa;
  }
  throw new NotFoundSA(`serviceaccount "${name}" not found`);
}

/** the secret names a pod references (podutil.VisitPodSecretNames over every container) */
export function podSecretNames(pod: any): string[] {
  const out: string[] = [];
  const spec = pod?.spec ?? {};
  for (const s of asArray(spec.imagePullSecrets)) if (s?.name) out.push(s.name);
  const containers = [...asArray(spec.initContainers), ...asArray(spec.containers), ...asArray(spec.ephemeralContainers)];
  for (const c of containers) {
    for (const e of asArray(c?.envFrom)) if (e?.secretRef?.name) out.push(e.secretRef.name);
    for (const e of asArray(c?.env)) if (e?.valueFrom?.secretKeyRef?.name) out.push(e.valueFrom.secretKeyRef.name);
  }
  for (const v of asArray(spec.volumes)) {
    if (!isObject(v)) continue;
    if (v.secret?.secretName) out.push(v.secret.secretName);
    for (const src of asArray(v.projected?.sources)) if (src?.secret?.name) out.push(src.secret.name);
    for (const ref of [v.azureFile?.secretName, v.cephfs?.secretRef?.name, v.cinder?.secretRef?.name, v.flexVolume?.secretRef?.name, v.rbd?.secretRef?.name, v.iscsi?.secretRef?.name, v.scaleIO?.secretRef?.name, v.storageos?.secretRef?.name, v.csi?.nodePublishSecretRef?.name]) {
      if (typeof ref === 'string' && ref) out.push(ref);
    }
  }
  return out;
}

function limitSecretReferences(sa: any, pod: any): string | undefined {
  const mountable = new Set(asArray(sa.secrets).map((s: any) => s?.name));
  const saName = sa.metadata?.name ?? '';
  for (const v of asArray(pod.spec?.volumes)) {
    const name = v?.secret?.secretName;
    if (v?.secret === undefined || v?.secret === null) continue;
    if (!mountable.has(name)) return `volume with secret.secretName="${name ?? ''}" is not allowed because service account ${saName} does not reference that secret`;
  }
  const check = (list: unknown, what: string): string | undefined => {
    for (const c of asArray(list)) {
      for (const e of asArray(c?.env)) {
        const ref = e?.valueFrom?.secretKeyRef;
        if (ref && !mountable.has(ref.name)) return `${what} ${c.name} with envVar ${e.name} referencing secret.secretName="${ref.name ?? ''}" is not allowed because service account ${saName} does not reference that secret`;
      }
      for (const e of asArray(c?.envFrom)) {
        const ref = e?.secretRef;
        if (ref && !mountable.has(ref.name)) return `${what} ${c.name} with envFrom referencing secret.secretName="${ref.name ?? ''}" is not allowed because service account ${saName} does not reference that secret`;
      }
    }
    return undefined;
  };
  const m = check(pod.spec?.initContainers, 'init container') ?? check(pod.spec?.containers, 'container');
  if (m) return m;
  const pull = new Set(asArray(sa.imagePullSecrets).map((s: any) => s?.name));
  const podPull = asArray(pod.spec?.imagePullSecrets);
  for (let i = 0; i < podPull.length; i++) {
    const name = podPull[i]?.name ?? '';
    if (!pull.has(name)) return `imagePullSecrets[${i}].name="${name}" is not allowed because service account ${saName} does not reference that imagePullSecret`;
  }
  return undefined;
}

function enforceMountableSecrets(sa: any): boolean {
  const v = annotationsOf(sa)[ENFORCE_MOUNTABLE_SECRETS_ANNOTATION];
  // strconv.ParseBool
  return v !== undefined && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v);
}

export function serviceAccountPlugin(reader: ClusterReader, opts: ServiceAccountPluginOptions = {}): AdmissionPlugin {
  const attempts = opts.defaultLookupAttempts ?? 10;

  const lookup = async (a: AdmissionAttributes, name: string) => {
    try {
      return await getServiceAccount(reader, a.namespace, name, attempts);
    } catch (e) {
      throw forbidden(a, `error looking up service account ${a.namespace}/${name}: ${(e as Error).message}`);
    }
  };

  const validatePod = async (a: AdmissionAttributes) => {
    const pod = a.object;
    if (a.operation === 'UPDATE' && a.subresource === 'ephemeralcontainers') {
      if (!pod.spec?.serviceAccountName) throw forbidden(a, `no service account specified for pod ${a.namespace}/${pod.metadata?.name ?? ''}`);
      const sa = await lookup(a, pod.spec.serviceAccountName);
      if (!enforceMountableSecrets(sa)) return;
      const msg = limitEphemeral(sa, pod);
      if (msg) throw forbidden(a, msg);
      return;
    }
    if (a.operation !== 'CREATE') return;
    if (isMirrorPod(pod)) {
      if (pod.spec?.serviceAccountName) throw forbidden(a, 'a mirror pod may not reference service accounts');
      if (podSecretNames(pod).length > 0) throw forbidden(a, 'a mirror pod may not reference secrets');
      for (const v of asArray(pod.spec?.volumes)) {
        for (const src of asArray(v?.projected?.sources)) {
          if (src?.serviceAccountToken) throw forbidden(a, 'a mirror pod may not use ServiceAccountToken volume projections');
        }
      }
      return;
    }
    if (!pod.spec?.serviceAccountName) throw forbidden(a, `no service account specified for pod ${a.namespace}/${pod.metadata?.name ?? ''}`);
    const sa = await lookup(a, pod.spec.serviceAccountName);
    if (enforceMountableSecrets(sa)) {
      const msg = limitSecretReferences(sa, pod);
      if (msg) throw forbidden(a, msg);
    }
  };

  // synchronous (no promise) for every request that is not about a pod
  const validate = (a: AdmissionAttributes) => (shouldIgnore(a) ? undefined : validatePod(a));

  const mutatePod = async (a: AdmissionAttributes) => {
    const pod = a.object;
    if (isMirrorPod(pod)) return validate(a);
    if (!isObject(pod.spec)) pod.spec = {};
    const sa = await lookup(a, pod.spec.serviceAccountName || DEFAULT_SERVICE_ACCOUNT);
    const msg = admitPodServiceAccount(pod, { serviceAccount: sa, suffix: opts.suffix });
    if (msg) throw forbidden(a, msg);
    return validate(a);
  };

  return {
    name: 'ServiceAccount',
    mutate(a) {
      if (shouldIgnore(a) || a.operation !== 'CREATE') return;
      return mutatePod(a);
    },
    validate,
  };
}

function limitEphemeral(sa: any, pod: any): string | undefined {
  const mountable = new Set(asArray(sa.secrets).map((s: any) => s?.name));
  const saName = sa.metadata?.name ?? '';
  for (const c of asArray(pod.spec?.ephemeralContainers)) {
    for (const e of asArray(c?.env)) {
      const ref = e?.valueFrom?.secretKeyRef;
      if (ref && !mountable.has(ref.name)) return `ephemeral container ${c.name} with envVar ${e.name} referencing secret.secretName="${ref.name ?? ''}" is not allowed because service account ${saName} does not reference that secret`;
    }
    for (const e of asArray(c?.envFrom)) {
      const ref = e?.secretRef;
      if (ref && !mountable.has(ref.name)) return `ephemeral container ${c.name} with envFrom referencing secret.secretName="${ref.name ?? ''}" is not allowed because service account ${saName} does not reference that secret`;
    }
  }
  return undefined;
}
