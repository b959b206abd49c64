// The query and path parameters of the REST operations, with descriptions in our own words.
// Names, locations and types are those of the Kubernetes API.

export type ParamType = 'string' | 'boolean' | 'integer';

export interface Param {
  name: string;
  in: 'query' | 'path';
  type: ParamType;
  description: string;
  required?: boolean;
}

function q(name: string, type: ParamType, description: string): Param {
  return { name, in: 'query', type, description };
}

export const P = {
  pretty: q('pretty', 'string', "If 'true', the response body is indented for reading by a person."),
  dryRun: q(
    'dryRun',
    'string',
    'When set, the request goes through every stage (defaulting, admission, validation) but nothing is persisted. The only valid value is All: run all dry-run stages. Any other value is rejected.',
  ),
  fieldManager: q(
    'fieldManager',
    'string',
    'The name of the actor making this change, recorded in the managedFields of the object. At most 128 printable characters.',
  ),
  fieldManagerPatch: q(
    'fieldManager',
    'string',
    'The name of the actor making this change, recorded in the managedFields of the object. At most 128 printable characters. Required for apply patches (application/apply-patch+yaml); optional for JSON, merge and strategic merge patches.',
  ),
  fieldValidation: q(
    'fieldValidation',
    'string',
    'What the server does with unknown or duplicated fields in the object of a POST, PUT or PATCH request. Ignore: drop unknown fields and keep the last of duplicated ones, silently. Warn (the default): do the same, and report each one in a Warning response header. Strict: reject the request with a BadRequest error that lists every unknown and duplicated field.',
  ),
  force: q(
    'force',
    'boolean',
    'Take over the fields that other managers own when applying (server-side apply), instead of failing with a conflict. Must be unset for patches other than apply patches.',
  ),
  gracePeriodSeconds: q(
    'gracePeriodSeconds',
    'integer',
    'How many seconds to wait before the object is deleted: a non-negative integer, zero meaning at once. When unset, the default grace period of the kind applies.',
  ),
  ignoreStoreReadErrorWithClusterBreakingPotential: q(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'boolean',
    'When true, an object that cannot be read from storage (it cannot be decrypted or decoded) is removed anyway, without finalizers or precondition checks. This unsafe deletion can break workloads that rely on the normal deletion flow: use it only to remove corrupt objects. Defaults to false.',
  ),
  orphanDependents: q(
    'orphanDependents',
    'boolean',
    "Deprecated: use propagationPolicy. When true the 'orphan' finalizer is added to the object and its dependents are orphaned; when false that finalizer is removed. Cannot be set together with propagationPolicy.",
  ),
  propagationPolicy: q(
    'propagationPolicy',
    'string',
    "How the garbage collector treats the dependents of the object. Orphan: leave them. Background: delete them in the background once the object is gone. Foreground: delete them first, then the object. When unset, the object's finalizers and the default policy of the kind decide. Cannot be set together with orphanDependents.",
  ),
  allowWatchBookmarks: q(
    'allowWatchBookmarks',
    'boolean',
    'Ask for BOOKMARK events: events that carry only a resource version, from which the watch can be resumed. The server chooses when to send them and may send none. Ignored when this is not a watch.',
  ),
  continue: q(
    'continue',
    'string',
    'The token from the metadata of the previous page of a list, to fetch the next page; every other parameter must be the same as for that page. When the token has expired the server answers 410 Gone with a fresh token, which continues the list from a newer snapshot. Not supported with watch.',
  ),
  fieldSelector: q('fieldSelector', 'string', 'Only objects whose fields match this selector (such as metadata.name=x,status.phase!=Running). Defaults to everything.'),
  labelSelector: q('labelSelector', 'string', 'Only objects whose labels match this selector (such as app=web,tier in (a,b)). Defaults to everything.'),
  limit: q(
    'limit',
    'integer',
    'The largest number of items to return. When more remain, the metadata of the list carries a continue token for the next page; the pages of one list together are one consistent snapshot. A page may hold fewer items than the limit, even none, while more remain. Not supported with watch.',
  ),
  resourceVersion: q(
    'resourceVersion',
    'string',
    'Which resource version the request may be served from; resourceVersionMatch says how it applies. Unset: the most recent state. "0": any state the server holds.',
  ),
  resourceVersionMatch: q(
    'resourceVersionMatch',
    'string',
    'How resourceVersion applies to a list: NotOlderThan (a state at least that recent) or Exact (that state). Should be set on every list that sets resourceVersion. Defaults to unset.',
  ),
  sendInitialEvents: q(
    'sendInitialEvents',
    'boolean',
    'With watch=true: begin the stream with an ADDED event for each object of the current state, then a BOOKMARK event annotated "k8s.io/initial-events-end": "true" at the resource version of that state, then the changes that follow. Requires resourceVersionMatch=NotOlderThan; with resourceVersion unset, the state is a consistent read.',
  ),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'End the list or watch call after this many seconds, whatever the activity.'),
  watch: q(
    'watch',
    'boolean',
    'Watch the selected objects instead of listing them: the response is a stream of ADDED, MODIFIED, DELETED, BOOKMARK and ERROR events. Set resourceVersion to start after a known state.',
  ),
};

export function pathParam(name: string, description: string): Param {
  return { name, in: 'path', type: 'string', description, required: true };
}

export const NAMESPACE_PARAM = pathParam('namespace', 'The namespace of the object: the scope of its name and of access to it.');

/** the parameters of a list (and of the legacy watch paths) */
export const LIST_PARAMS: Param[] = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];

export const CREATE_PARAMS: Param[] = [P.dryRun, P.fieldManager, P.fieldValidation];
export const UPDATE_PARAMS: Param[] = [P.dryRun, P.fieldManager, P.fieldValidation];
export const PATCH_PARAMS: Param[] = [P.dryRun, P.fieldManagerPatch, P.fieldValidation, P.force];
export const DELETE_PARAMS: Param[] = [P.dryRun, P.gracePeriodSeconds, P.ignoreStoreReadErrorWithClusterBreakingPotential, P.orphanDependents, P.propagationPolicy];
export const DELETECOLLECTION_PARAMS: Param[] = [
  P.continue,
  P.dryRun,
  P.fieldSelector,
  P.gracePeriodSeconds,
  P.ignoreStoreReadErrorWithClusterBreakingPotential,
  P.labelSelector,
  P.limit,
  P.orphanDependents,
  P.propagationPolicy,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
];

/** parameters never moved to the path level, nor shared in v2: kubectl looks for them on the PATCH operation itself */
export const KEEP_ON_OPERATION = new Set(['fieldValidation', 'dryRun']);
