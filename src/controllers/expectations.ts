// What the workload controllers share about the objects they own: the controller reference of an
// object, and the creates and deletes a sync made that the pod watch has not shown yet
// (client-go's ControllerExpectations, with the deleted pods' keys as its UID-tracking variant
// keeps them), so that a sync started before the watch caught up never makes or deletes a pod twice.

/** the owner reference with controller: true, if any (metav1.GetControllerOf) */
export function controllerRefOf(o: any): any {
  return Array.isArray(o?.metadata?.ownerReferences) ? o.metadata.ownerReferences.find((r: any) => r?.controller === true) : undefined;
}

/** expectations older than this count as met (ExpectationsTimeout) */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Pending {
  add: number;
  del: number;
  /** the keys of the pods whose deletes are awaited */
  deleting: Set<string>;
  at: number;
}

export class Expectations {
  private readonly byKey = new Map<string, Pending>();

  constructor(private readonly now: () => number = Date.now) {}

  /** a sync of `key` is about to make `creates` pods and delete the pods keyed `deleting` */
  expect(key: string, creates: number, deleting: string[] = []): void {
    this.byKey.set(key, { add: creates, del: deleting.length, deleting: new Set(deleting), at: this.now() });
  }

  /** the watch showed one of the creates (or one will never happen) */
  creationObserved(key: string): void {
    const e = this.byKey.get(key);
    if (e) e.add--;
  }

  /** the watch showed the delete of the pod keyed `podKey` (or it will never happen) */
  deletionObserved(key: string, podKey: string): void {
    const e = this.byKey.get(key);
    if (e?.deleting.delete(podKey)) e.del--;
  }

  /** every expected create and delete was seen, none is recorded, or they are too old to wait for */
  satisfied(key: string): boolean {
    const e = this.byKey.get(key);
    if (!e) return true;
    return (e.add <= 0 && e.del <= 0) || this.now() - e.at > EXPECTATIONS_TIMEOUT_MS;
  }

  delete(key: string): void {
    this.byKey.delete(key);
  }
}
