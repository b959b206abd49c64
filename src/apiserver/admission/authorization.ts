// The admission plugins that ask the server's authorizer a second question about a write the
// request chain already allowed (kube-apiserver 1.33):
//
// - CertificateApproval: an update of certificatesigningrequests/approval needs `approve` on the
//   `signers` resource of certificates.k8s.io named after the CSR's signerName (or `<domain>/*`).
// - CertificateSigning: an update of certificatesigningrequests/status that changes
//   status.certificate needs `sign` on the same signer.
// - ClusterTrustBundleAttest: Keelson does not serve ClusterTrustBundle (certificates.k8s.io
//   v1beta1, off by default in 1.33), so there is nothing to attest: the plugin admits everything.
// - OwnerReferencesPermissionEnforcement: changing metadata.ownerReferences of an existing object
//   needs `delete` on it; making a reference block its owner's deletion needs `update` on the
//   owner's `finalizers` subresource.
import type { Attributes, Authorizer, UserInfo } from '../authz.js';
import type { KindDecl } from '../../schema/model.js';
import type { AdmissionAttributes, AdmissionPlugin } from './types.js';
import { asArray, forbidden, isObject } from './util.js';
import { goQuote } from '../../machinery/gostrings.js';

function signerAttributes(user: UserInfo, verb: string, name: string): Attributes {
  return { user, verb, name, apiGroup: 'certificates.k8s.io', apiVersion: '*', resource: 'signers', resourceRequest: true };
}

/**
 * Kubernetes' IsAuthorizedForSignerName: `verb` on signers/<signerName>, else on the wildcard
 * `<domain>/*` (the part of the name before its first slash).
 */
export function authorizedForSignerName(authz: Authorizer, user: UserInfo, verb: string, signerName: string): boolean {
  if (authz.authorize(signerAttributes(user, verb, signerName)).decision === 'allow') return true;
  const domain = signerName.split('/')[0]!;
  return authz.authorize(signerAttributes(user, verb, `${domain}/*`)).decision === 'allow';
}

const isCSR = (a: AdmissionAttributes) => a.resource.group === 'certificates.k8s.io' && a.resource.resource === 'certificatesigningrequests';

function signerNameOf(obj: unknown): string {
  return isObject(obj) && isObject(obj.spec) && typeof obj.spec.signerName === 'string' ? obj.spec.signerName : '';
}

function expectCSR(a: AdmissionAttributes, obj: unknown): void {
  if (!isObject(obj) || (obj.kind !== undefined && obj.kind !== 'CertificateSigningRequest')) {
    throw forbidden(a, `expected type CertificateSigningRequest, got: ${obj === undefined || obj === null ? '<nil>' : typeof obj}`);
  }
}

export function certificateApproval(authz: Authorizer): AdmissionPlugin {
  return {
    name: 'CertificateApproval',
    validate(a) {
      if (a.operation !== 'UPDATE' || a.subresource !== 'approval' || !isCSR(a)) return;
      // the old object's signer: the approval endpoint cannot change it
      expectCSR(a, a.oldObject);
      const signer = signerNameOf(a.oldObject);
      if (!authorizedForSignerName(authz, a.user, 'approve', signer)) {
        throw forbidden(a, `user not permitted to approve requests with signerName ${goQuote(signer)}`);
      }
    },
  };
}

export function certificateSigning(authz: Authorizer): AdmissionPlugin {
  return {
    name: 'CertificateSigning',
    validate(a) {
      if (a.operation !== 'UPDATE' || a.subresource !== 'status' || !isCSR(a)) return;
      expectCSR(a, a.oldObject);
      expectCSR(a, a.object);
      // only a change of the issued certificate is a signature
      if ((a.oldObject.status?.certificate ?? '') === (a.object.status?.certificate ?? '')) return;
      const signer = signerNameOf(a.oldObject);
      if (!authorizedForSignerName(authz, a.user, 'sign', signer)) {
        throw forbidden(a, `user not permitted to sign requests with signerName ${goQuote(signer)}`);
      }
    },
  };
}

/** the kinds the server serves (built-in and from CRDs), for the owner references' RESTMapping */
export type KindsSource = () => readonly KindDecl[];

interface OwnerRef {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

function ownerRefs(obj: unknown): OwnerRef[] {
  return isObject(obj) && isObject(obj.metadata) ? asArray<OwnerRef>(obj.metadata.ownerReferences).filter(isObject) : [];
}

/** apiequality.Semantic.DeepEqual of two owner references (every field, a missing bool = unset) */
function sameRef(x: OwnerRef, y: OwnerRef): boolean {
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const k of keys) if ((x as any)[k] !== (y as any)[k]) return false;
  return true;
}

function changingOwnerReferences(obj: unknown, old: unknown): boolean {
  if (!isObject(obj) || !isObject(obj.metadata)) return false;
  const now = ownerRefs(obj);
  if (old === undefined || old === null) return now.length > 0;
  if (!isObject(old)) return false;
  const before = ownerRefs(old);
  if (before.length !== now.length) return true;
  return before.some((r, i) => !sameRef(r, now[i]!));
}

/** the references that block their owner's deletion and did not before (new, or false/unset before) */
function newBlockingRefs(obj: unknown, old: unknown): OwnerRef[] {
  const blocking = ownerRefs(obj).filter((r) => r.blockOwnerDeletion === true);
  if (!blocking.length || !isObject(old)) return blocking;
  const byUID = new Map(ownerRefs(old).map((r) => [r.uid, r]));
  return blocking.filter((r) => {
    const was = byUID.get(r.uid);
    return !was || was.blockOwnerDeletion !== true;
  });
}

/** schema.ParseGroupVersion */
function parseGroupVersion(s: string): { group: string; version: string } {
  if (s === '' || s === '/') return { group: '', version: '' };
  const parts = s.split('/');
  if (parts.length === 1) return { group: '', version: s };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  throw new Error(`unexpected GroupVersion string: ${s}`);
}

/** RESTMapper.RESTMappings(group kind, version): the served resources of the kind in that version */
function restMappings(kinds: readonly KindDecl[], group: string, kind: string, version: string): KindDecl[] {
  const found = kinds.filter((k) => !k.virtual && k.group === group && k.kind === kind && (version === '' || k.version === version));
  if (!found.length) {
    const gv = group ? `${group}/${version}` : version;
    throw new Error(version ? `no matches for kind ${goQuote(kind)} in version ${goQuote(gv)}` : `no matches for kind ${goQuote(kind)} in group ${goQuote(group)}`);
  }
  // one mapping per resource (a kind served under one resource name in several versions counts once)
  const seen = new Set<string>();
  return found.filter((k) => (seen.has(k.resource) ? false : (seen.add(k.resource), true)));
}

export function ownerReferencesPermissionEnforcement(authz: Authorizer, kinds: KindsSource): AdmissionPlugin {
  return {
    name: 'OwnerReferencesPermissionEnforcement',
    validate(a) {
      if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
      // pods/status is left out: the pod status strategy keeps owner references as they were
      if (a.resource.group === '' && a.resource.resource === 'pods' && a.subresource === 'status') return;
      if (!changingOwnerReferences(a.object, a.oldObject)) return;
      // whoever may create the object could as well not have: only an update needs `delete`
      if (a.operation !== 'CREATE') {
        const d = authz.authorize({
          user: a.user,
          verb: 'delete',
          namespace: a.namespace,
          apiGroup: a.resource.group,
          apiVersion: a.resource.version,
          resource: a.resource.resource,
          subresource: a.subresource,
          name: a.name,
          resourceRequest: true,
        });
        if (d.decision !== 'allow') throw forbidden(a, `cannot set an ownerRef on a resource you can't delete: ${d.reason}, <nil>`);
      }
      const blocking = newBlockingRefs(a.object, a.oldObject);
      if (!blocking.length) return;
      const served = kinds();
      for (const ref of blocking) {
        let mappings: KindDecl[];
        try {
          const gv = parseGroupVersion(ref.apiVersion ?? '');
          mappings = restMappings(served, gv.group, ref.kind ?? '', gv.version);
        } catch (e) {
          throw forbidden(a, `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${ref.apiVersion ?? ''} Kind ${ref.kind ?? ''}: ${(e as Error).message}`);
        }
        for (const m of mappings) {
          const d = authz.authorize({
            user: a.user,
            verb: 'update',
            // an owner is in the dependent's namespace, or cluster-scoped
            namespace: m.namespaced ? a.namespace : '',
            apiGroup: m.group,
            apiVersion: m.version,
            resource: m.resource,
            subresource: 'finalizers',
            name: ref.name ?? '',
            resourceRequest: true,
          });
          if (d.decision !== 'allow') {
            throw forbidden(a, `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${d.reason}, <nil>`);
          }
        }
      }
    },
  };
}
