// The strategy of CustomResourceDefinition objects beyond the generic one: validation of the
// definition, status kept by the server, the storage version recorded in status.storedVersions,
// and deletion through the `customresourcecleanup.apiextensions.k8s.io` finalizer (the CRD's
// custom resources are removed first, as apiextensions-apiserver does).
import { setStatusCondition } from '../../machinery/conditions.js';
import type { FieldError } from '../../machinery/errors.js';
import type { Strategy } from '../registry/strategy.js';
import { validateCRD } from './validation.js';

export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** set a condition in a CRD status (lastTransitionTime kept when the status does not change) */
export function setCondition(status: any, cond: { type: string; status: string; reason: string; message: string }): void {
  status.conditions = setStatusCondition(status.conditions, cond);
}

function storageVersion(crd: any): string | undefined {
  return (crd?.spec?.versions ?? []).find((v: any) => v?.storage === true)?.name;
}

/**
 * apiextensions-apiserver checks ObjectMeta with the generic rules: a finalizer needs to be a
 * qualified name, not one of core's standard names or a path (its own cleanup finalizer has no '/').
 */
function genericMeta(errs: FieldError[]): FieldError[] {
  return errs.filter((e) => !(e.field.startsWith('metadata.finalizers') && e.detail === 'name is neither a standard finalizer name nor is it fully qualified'));
}

export function withCRDStrategy(base: Strategy): Strategy {
  return {
    ...base,
    generation: true,
    prepareForCreate(obj) {
      base.prepareForCreate(obj);
      // status is the server's: storedVersions starts with the storage version
      const sv = storageVersion(obj);
      obj.status = { conditions: [], acceptedNames: { plural: '', kind: '' }, storedVersions: sv ? [sv] : [] };
    },
    prepareForUpdate(obj, old) {
      base.prepareForUpdate(obj, old);
      obj.status = structuredClone(old.status ?? {});
      const sv = storageVersion(obj);
      if (sv) {
        obj.status.storedVersions ??= [];
        if (!obj.status.storedVersions.includes(sv)) obj.status.storedVersions.push(sv);
      }
    },
    validate: (obj) => [...genericMeta(base.validate(obj)), ...validateCRD(obj)],
    validateUpdate: (obj, old) => [...genericMeta(base.validateUpdate(obj, old)), ...validateCRD(obj, old)],
    validateSubresource: (sub, obj, old) => genericMeta(base.validateSubresource(sub, obj, old)),
    prepareForSubresourceUpdate(sub, obj, old) {
      base.prepareForSubresourceUpdate?.(sub, obj, old);
      if (sub === 'status') obj.spec = old.spec;
    },
    beforeDelete(obj, grace) {
      if (!obj.metadata.deletionTimestamp) {
        const fin: string[] = obj.metadata.finalizers ?? [];
        if (!fin.includes(CLEANUP_FINALIZER)) obj.metadata.finalizers = [...fin, CLEANUP_FINALIZER];
        obj.status ??= {};
        setCondition(obj.status, {
          type: 'Terminating',
          status: 'True',
          reason: 'InstanceDeletionPending',
          message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
        });
      }
      return base.beforeDelete?.(obj, grace) ?? { graceful: false };
    },
  };
}
