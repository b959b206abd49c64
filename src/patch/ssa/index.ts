// Server-side apply and managed fields (metadata.managedFields), as Kubernetes does them.
//
// Two pure functions cover every write; neither modifies its arguments. Both take the kind's
// TypeDecl name (`io.k8s.api.apps.v1.Deployment`; a name the schema does not know is handled
// schemaless: metadata typed, the rest free-form) and a ManagerInfo:
//   manager      the `fieldManager` query parameter, else managerOrUserAgent(param, User-Agent)
//   apiVersion   the request's group/version (`v1`, `apps/v1`)
//   subresource  '' or the subresource written (`status`)
//   resetFields  the paths the (sub)resource's strategy resets (Kubernetes' GetResetFields):
//                resetFieldsFor(subresource, kind has a status subresource) for the usual ones
//   time         optional; now, in RFC 3339 seconds
//
// How the API server calls them (objects in their normalized JSON form, as stored):
//
// POST (create), PUT (update, and create-on-update), PATCH json/merge/strategic:
//   decode + normalize + default the new object (and for PATCH apply the patch to the live
//   object first), then
//     obj = trackUpdate(live /* undefined for a create */, obj, typeName, info)
//   then admission, strategy.prepareForCreate/prepareForUpdate, validation, dry-run or storage.
//   Call it before the strategy resets what the (sub)resource may not change; `resetFields`
//   keeps those fields out of the record. kubectl's CSA->SSA migration is a JSON patch of
//   /metadata/managedFields: trackUpdate keeps managedFields sent on the main resource.
//   When the result equals the live object (managedFields included), do not write: kubectl
//   prints `patched (no change)` only when resourceVersion and managedFields are unchanged.
//
// PATCH application/apply-patch+yaml (and +cbor): `fieldManager` is required and `force` is for
//   apply only; Kubernetes answers both with errors.invalid({group: 'meta.k8s.io', name:
//   'PatchOptions'}, '', [field.required('fieldManager', 'is required for apply patch')] or
//   [field.forbidden('force', 'may not be specified for non-apply patch')]), plus
//   validateFieldManager(fieldManager) on every write. Parse the body (YAML
//   or JSON) without pruning unknown fields: apply rejects them as Kubernetes does. Then
//     out = apply(live /* undefined when absent: the apply creates */, body, typeName,
//                 { ...info, force: query.force === 'true' })
//   - out === live: nothing changes; answer 200 with live, write nothing;
//   - else normalize + default `out` like a decoded object (it holds the applied values as
//     sent), then the usual update (or create: 201) path: admission, strategy, validation,
//     resourceVersion precondition if the body carried one, storage;
//   - ApplyConflictError is a 409 StatusError with Kubernetes' message and causes; other
//     StatusErrors (400 wrong kind / managedFields in the body, 500 untypeable body) as thrown.
//   kubectl prints `serverside-applied` for either answer.
//
// Subresources: pass `subresource`; managedFields sent in the body are ignored there, and each
//   subresource keeps its own entries (`subresource: status`). The scale subresource needs
//   Kubernetes' scale handler translation (not here): track it on the parent object.
//
// dryRun=All: the same calls; only the write is skipped.
//
// The fieldsV1 documents in returned objects are frozen and shared between objects (they are
// values: copy an object with structuredClone before changing its managedFields in place).
export {
  apply,
  trackUpdate,
  defaultFieldManager,
  managerOrUserAgent,
  validateFieldManager,
  resetFieldsFor,
  FIELD_MANAGER_MAX_LENGTH,
  type ApplyOptions,
  type ManagerInfo,
} from './fieldmanager.js';
export { ApplyConflictError, printManager, type FieldConflict } from './conflict.js';
export { FieldSet, type FieldsV1 } from './fieldset.js';
export { decodeManagedFields, encodeManagedFields, type ManagedFieldsEntry } from './managed.js';
export { rootShape, type Shape } from './shape.js';
export { compare, toFieldSet, merge, type Comparison } from './typed.js';
export { pathString, type Path, type PathElement } from './pathelement.js';
