// A kind's strategy: the only place where a kind's special behaviour lives. The generic store
// (store.ts) knows no kind by name; it asks the strategy how to name, prepare, validate and
// delete objects of its kind.
import type { FieldError } from '../../machinery/errors.js';
import type { UserInfo } from '../authz.js';
import type { NameRule } from '../../machinery/validation.js';
import type { KindDecl } from '../../schema/model.js';
import { nameRuleFor, validateCreate, validateStatusUpdate, validateSubresourceUpdate, validateUpdate } from '../../schema/validation/index.js';

export interface DeleteDecision {
  /** a first delete sets a grace period (CheckGracefulDelete): the store sets deletionTimestamp */
  graceful: boolean;
  /** deletionGracePeriodSeconds to record when graceful */
  gracePeriodSeconds?: number | bigint;
  /** the delete only marks the object (deletionTimestamp, no grace period): a namespace's first delete */
  markOnly?: boolean;
  /** the delete changes nothing and the object is answered as it is (a terminating namespace) */
  unchanged?: boolean;
}

export interface Strategy {
  /** how object names are checked */
  nameRule: NameRule;
  /** metadata.generation starts at 1 and increases on every change of spec */
  generation: boolean;
  /** a change of metadata.annotations also increases generation (Deployments: ReplicaSets copy them) */
  generationOnAnnotations?: boolean;
  /**
   * whether an update changes what generation counts, when that is not `spec` (a webhook
   * configuration's `webhooks`, a PodTemplate's `template`, everything of an EndpointSlice)
   */
  generationChanged?: (next: any, old: any) => boolean;
  /** the kind has a status subresource: the main resource ignores status changes */
  statusSubresource: boolean;
  /** DELETE answers with the deleted object rather than a Status */
  returnDeletedObject: boolean;
  /** PUT of an absent object creates it */
  allowCreateOnUpdate: boolean;
  /** PUT without metadata.resourceVersion is allowed (last writer wins) */
  allowUnconditionalUpdate: boolean;
  /** fill in server-owned fields of a new object (status reset, defaults) */
  /** `user`: who creates it (absent for the server's own writes); `dryRun`: nothing will be stored */
  prepareForCreate(obj: any, user?: UserInfo, dryRun?: boolean): void;
  /**
   * a new object prepared under a generated name that was taken meanwhile gets another one
   * (rare): set again what prepareForCreate made of the name `from`, as Kubernetes prepares a
   * fresh copy under each name it tries
   */
  renamed?(obj: any, from: string): void;
  /** carry over server-owned fields on an update of the main resource */
  prepareForUpdate(obj: any, old: any, dryRun?: boolean): void;
  /** kind-specific validation of a new object (metadata is validated by the store) */
  validate(obj: any): FieldError[];
  /**
   * kind-specific validation of an update; `warnings` (the request's Warning list) takes what a
   * kind reports without refusing the write (a custom resource's ratcheted validation rules)
   */
  validateUpdate(obj: any, old: any, warnings?: string[]): FieldError[];
  /**
   * after a create attempt: `stored` is false when it failed or was a dry run (release
   * allocations). A promise it returns is awaited before the write is answered (and must not fail).
   */
  afterCreate?(obj: any, stored: boolean): void | Promise<void>;
  /** after an update attempt of the main resource: release what the losing side holds (awaited as afterCreate) */
  afterUpdate?(obj: any, old: any, stored: boolean): void | Promise<void>;
  /** after the object was removed from storage (awaited as afterCreate) */
  afterDelete?(obj: any): void | Promise<void>;
  /** carry over what a write through a subresource may not change, before validation */
  prepareForSubresourceUpdate?(sub: string, obj: any, old: any): void;
  /** validation of a write through a subresource (status, finalize, approval) */
  validateSubresource(sub: string, obj: any, old: any, warnings?: string[]): FieldError[];
  /**
   * how a delete proceeds beyond metadata.finalizers (a pod's grace period, a Namespace's
   * spec.finalizers); `obj` is the copy to be written
   */
  beforeDelete?(obj: any, gracePeriodSeconds: number | bigint | undefined): DeleteDecision;
  /**
   * DefaultGarbageCollectionPolicy: OrphanDependents (a delete without a policy orphans the
   * dependents: core/v1 ReplicationController, batch/v1 Job), Unsupported (no garbage-collector
   * finalizers: Events); DeleteDependents when absent
   */
  garbageCollectionPolicy?: 'OrphanDependents' | 'DeleteDependents' | 'Unsupported';
  /** a Namespace's delete: its own precondition wording (namespace REST) */
  namespaceStyleDelete?: boolean;
  /** an update of a terminating object may complete its deletion (all finalizers gone) */
  readyToRemove?(obj: any): boolean;
  /**
   * The kind is another representation of objects stored in another form (events.k8s.io/v1
   * Event is stored as core/v1 Event): conversions to and from the stored form.
   */
  storageForm?: { toStorage(obj: any): any; fromStorage(obj: any): any };
  /** a CRD converted by its webhook: an object of any of its versions in another (admission's equivalent versions) */
  convertByWebhook?: (obj: any, apiVersion: string) => Promise<any>;
}

export function defaultStrategy(kind: KindDecl): Strategy {
  const hasStatus = kind.subresources.some((s) => s.name === 'status');
  return {
    nameRule: nameRuleFor(kind.group, kind.kind),
    generation: false,
    statusSubresource: hasStatus,
    returnDeletedObject: false,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    prepareForCreate() {},
    prepareForUpdate() {},
    validate: (obj) => validateCreate(kind.group, kind.kind, obj),
    validateUpdate: (obj, old) => validateUpdate(kind.group, kind.kind, obj, old),
    validateSubresource: (sub, obj, old) =>
      sub === 'status' ? validateStatusUpdate(kind.group, kind.kind, obj, old) : validateSubresourceUpdate(kind.group, kind.kind, sub, obj, old),
  };
}
