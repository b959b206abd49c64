// Server-side apply and managed fields. See fieldmanager.ts for how the API server calls them.
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
