// Subresources served in another kind than their resource: a view of the object (`toView`) and
// the change a write of the view makes to the object (`fromView`). The scale subresource of
// Deployments, ReplicaSets, StatefulSets and ReplicationControllers is autoscaling/v1 Scale.
import { errors, field } from '../machinery/errors.js';
import { fromLabelSelector, labelSelectorString } from '../machinery/selectors.js';
import type { KindDecl } from '../schema/model.js';

export interface ViewKind {
  group: string;
  version: string;
  kind: string;
  /** TypeDecl name of the view */
  type: string;
}

export interface SubresourceView {
  view: ViewKind;
  toView(obj: any): any;
  /** the object after a write of `view`; throws a Status error for an invalid view */
  fromView(view: any, obj: any): any;
}

const SCALE: ViewKind = { group: 'autoscaling', version: 'v1', kind: 'Scale', type: 'io.k8s.api.autoscaling.v1.Scale' };

function selectorString(kind: KindDecl, obj: any): string {
  const sel = obj.spec?.selector;
  if (kind.group === '' && kind.kind === 'ReplicationController') {
    return Object.entries((sel ?? {}) as Record<string, string>)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  }
  try {
    const reqs = fromLabelSelector(sel);
    return reqs ? labelSelectorString(reqs) : '';
  } catch {
    return '';
  }
}

function scaleView(kind: KindDecl): SubresourceView {
  return {
    view: SCALE,
    toView(obj) {
      const m = obj.metadata;
      const meta: any = { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp };
      const status: any = { replicas: obj.status?.replicas ?? 0 };
      const sel = selectorString(kind, obj);
      if (sel) status.selector = sel;
      // ScaleSpec.replicas is omitempty: zero replicas is an empty spec
      const replicas = obj.spec?.replicas ?? 0;
      return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: meta, spec: replicas ? { replicas } : {}, status };
    },
    fromView(view, obj) {
      const replicas = view?.spec?.replicas ?? 0;
      if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
        throw errors.invalid({ group: 'autoscaling', name: 'Scale' }, obj.metadata.name, [field.invalid('spec.replicas', replicas, 'must be greater than or equal to 0')]);
      }
      // a uid in the Scale is a precondition (scaleUpdatedObjectInfo.UpdatedObject)
      const uid = view?.metadata?.uid;
      if (uid && uid !== obj.metadata.uid) {
        throw errors.conflict({ group: kind.group, name: `${kind.resource}/scale` }, obj.metadata.name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${obj.metadata.uid}`);
      }
      const rv = view?.metadata?.resourceVersion;
      const next = { ...obj, spec: { ...(obj.spec ?? {}), replicas } };
      next.metadata = { ...obj.metadata };
      if (rv) next.metadata.resourceVersion = rv;
      return next;
    },
  };
}

export function subresourceView(kind: KindDecl, sub: string): SubresourceView | undefined {
  if (sub === 'scale' && kind.custom) return kind.custom.scale && { view: SCALE, ...kind.custom.scale };
  if (sub === 'scale' && kind.subresources.some((s) => s.name === 'scale')) return scaleView(kind);
  return undefined;
}
