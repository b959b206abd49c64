// Fields of Kubernetes 1.33's types whose feature gates are off by default in 1.33: a write that
// sets them has them dropped before validation, unless the object it updates already uses them
// (Kubernetes' DropDisabled*Fields in each strategy's PrepareForCreate and PrepareForUpdate). A
// client that sends them gets the object without them, as from a 1.33 server with default gates.
//
//   PodLevelResources (alpha)          pod spec.resources
//   ContainerStopSignals (alpha)       containers' lifecycle.stopSignal
//   ImageVolume (beta, off)            image volumes, and the mounts of them
//   DynamicResourceAllocation (beta, off)  spec.resourceClaims, containers' resources.claims
//   VolumeAttributesClass (beta, off)  PersistentVolumeClaim and PersistentVolume
//                                      spec.volumeAttributesClassName
//   CoordinatedLeaderElection (beta, off)  Lease spec.strategy and spec.preferredHolder

type Obj = Record<string, any>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);

function allContainers(spec: Obj | undefined): Obj[] {
  if (!isObj(spec)) return [];
  return [...list(spec.containers), ...list(spec.initContainers), ...list(spec.ephemeralContainers)].filter(isObj);
}

function imageVolumeNames(spec: Obj | undefined): Set<string> {
  return new Set(list(spec?.volumes).filter((v) => isObj(v) && v.image != null).map((v) => v.name));
}

/** drop the gated fields of a pod spec (a Pod's, or a template's), unless `oldSpec` uses them */
export function dropDisabledPodSpecFields(spec: unknown, oldSpec?: unknown): void {
  if (!isObj(spec)) return;
  const old = isObj(oldSpec) ? oldSpec : undefined;
  if (old?.resources == null) delete spec.resources;
  if (!allContainers(old).some((c) => c.lifecycle?.stopSignal != null)) {
    for (const c of allContainers(spec)) {
      if (!isObj(c.lifecycle)) continue;
      delete c.lifecycle.stopSignal;
      if (Object.keys(c.lifecycle).length === 0) delete c.lifecycle;
    }
  }
  if (imageVolumeNames(old).size === 0) {
    const image = imageVolumeNames(spec);
    if (image.size > 0) {
      spec.volumes = list(spec.volumes).filter((v) => !(isObj(v) && v.image != null));
      if (spec.volumes.length === 0) delete spec.volumes;
      for (const c of allContainers(spec)) {
        if (!Array.isArray(c.volumeMounts)) continue;
        c.volumeMounts = c.volumeMounts.filter((m: any) => !(isObj(m) && image.has(m.name)));
        if (c.volumeMounts.length === 0) delete c.volumeMounts;
      }
    }
  }
  const claimsInUse = (s: Obj | undefined) => list(s?.resourceClaims).length > 0 || allContainers(s).some((c) => list(c.resources?.claims).length > 0);
  if (!claimsInUse(old)) {
    delete spec.resourceClaims;
    for (const c of allContainers(spec)) {
      if (!isObj(c.resources)) continue;
      delete c.resources.claims;
    }
  }
}

/** a PersistentVolumeClaim's or PersistentVolume's volumeAttributesClassName */
export function dropDisabledVolumeAttributesClass(obj: unknown, old?: unknown): void {
  if (!isObj(obj) || !isObj(obj.spec)) return;
  const o = isObj(old) ? old : undefined;
  if (o?.spec?.volumeAttributesClassName == null) delete obj.spec.volumeAttributesClassName;
}

/** a Lease's strategy and preferredHolder */
export function dropDisabledLeaseFields(lease: unknown, old?: unknown): void {
  if (!isObj(lease) || !isObj(lease.spec)) return;
  const o = isObj(old) ? old : undefined;
  if (o?.spec?.strategy == null) delete lease.spec.strategy;
  if (o?.spec?.preferredHolder == null) delete lease.spec.preferredHolder;
}
