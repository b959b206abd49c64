// What a request to a custom resource meets before the generic handlers: the patch types
// Kubernetes accepts for custom resources (no strategic merge patch) and no new objects while
// the CRD is being deleted.
import type { IncomingMessage } from 'node:http';
import { errors, StatusError } from '../../machinery/errors.js';
import type { RequestInfo } from '../requestinfo.js';
import type { ResourceStore } from '../registry/store.js';
import type { CRDManager } from './manager.js';

const CR_PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

/** checks a request to a custom resource; returns the warnings it gets (a deprecated version) */
export function routeCustom(req: IncomingMessage, info: RequestInfo, store: ResourceStore, crds: CRDManager): string[] {
  if (info.verb === 'patch') {
    const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (ct === 'application/strategic-merge-patch+json') {
      req.resume();
      throw errors.unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${CR_PATCH_TYPES.join(', ')}`);
    }
  }
  if (info.verb === 'create' && crds.terminating(store)) {
    req.resume();
    // kube-apiserver's MethodNotSupported with its own message for this case
    const e = errors.methodNotSupported({ group: store.kind.group, name: store.kind.resource }, 'create');
    throw new StatusError(e.code, e.reason, 'create not allowed while custom resource definition is terminating', e.details);
  }
  const w = store.kind.custom?.deprecationWarning;
  return w ? [w] : [];
}
