// The storage interface: a key-value store with revisions, in the etcd model.
//
// One global revision counts every write; it only ever increases. Each key remembers the
// revision that created it and the revision that last modified it. History is kept until it
// is compacted: a list or watch at a revision older than the compacted one fails with
// CompactedError. Backends: memory, sqlite (and etcd, later). Every backend passes the one
// conformance suite in test/storage/conformance.ts.

export interface KeyValue {
  key: string;
  /**
   * the stored bytes (for the API server: the JSON of the object, without resourceVersion).
   * Ownership: a backend keeps the very Uint8Array a write passes (no copy) and hands it out again
   * in the write's result and its watch event, so a caller can recognise its own bytes by identity;
   * nobody may modify a value once it was passed to or returned by a backend.
   */
  value: Uint8Array;
  /** the revision of the write that created this key (since its last deletion) */
  createRevision: number;
  /** the revision of the write that last changed it: the object's resourceVersion */
  modRevision: number;
}

export type StorageEventType = 'put' | 'delete';

export interface StorageEvent {
  type: StorageEventType;
  /** for 'put', the new value; for 'delete', the key's last value with modRevision = the deletion's revision */
  kv: KeyValue;
  /** the value before this event (absent for a create) */
  prevKv?: KeyValue;
  /** the revision of this event (= kv.modRevision) */
  revision: number;
}

export interface ListOptions {
  /** list the state at this revision (0 or absent: the latest) */
  revision?: number;
  /** only keys >= startKey (a continue position); keys are compared as byte strings */
  startKey?: string;
  /** at most this many keys (0 or absent: no limit) */
  limit?: number;
}

export interface ListResult {
  kvs: KeyValue[];
  /** the revision the list was read at */
  revision: number;
  /** more keys follow the last returned one */
  more: boolean;
  /** how many keys in the range follow the returned ones (when more is true) */
  remaining: number;
}

export interface Watch {
  /** stop the watch; no event is delivered after it returns */
  cancel(): void;
}

export interface WatchOptions {
  /** deliver every event with revision > afterRevision (the events after a list at that revision) */
  afterRevision: number;
  /** events of one commit, in revision order; called synchronously for in-process backends,
   *  before the writing call's promise resolves (the array and its events are shared with other
   *  watchers: read-only) */
  onEvents(events: StorageEvent[]): void;
  /** the watch failed (for example the start revision was compacted); no more events follow */
  onError(err: Error): void;
  /**
   * optional progress notification: every event with a revision <= `revision` has been delivered
   * (called after a commit whose newest revision is past the last event this watch received, so a
   * watch cache knows how fresh it is even when its prefix sees no writes)
   */
  onProgress?(revision: number): void;
}

/** Failure of a conditional write: the key's current state, if it exists. */
export class ConflictError extends Error {
  constructor(
    readonly key: string,
    readonly current: KeyValue | undefined,
  ) {
    super(`storage conflict on ${key}`);
    this.name = 'ConflictError';
  }
}

/**
 * create of a key that exists. `revision`: the newest revision the storage had given out when it
 * refused; the write that made the key exist is at or before it (it may not be committed yet:
 * a backend decides on the writes it has accepted, in order), so a reader that waits for this
 * revision sees the key.
 */
export class KeyExistsError extends Error {
  constructor(
    readonly key: string,
    readonly revision?: number,
  ) {
    super(`key exists: ${key}`);
    this.name = 'KeyExistsError';
  }
}

/** update or delete of a key that does not exist; `revision` as for KeyExistsError (the deletion is at or before it) */
export class KeyNotFoundError extends Error {
  constructor(
    readonly key: string,
    readonly revision?: number,
  ) {
    super(`key not found: ${key}`);
    this.name = 'KeyNotFoundError';
  }
}

/** a read or watch at a revision older than the compacted revision */
export class CompactedError extends Error {
  constructor(
    readonly requested: number,
    readonly compacted: number,
  ) {
    super(`required revision ${requested} has been compacted (compacted revision ${compacted})`);
    this.name = 'CompactedError';
  }
}

/** a read at a revision newer than the store's current revision */
export class FutureRevisionError extends Error {
  constructor(
    readonly requested: number,
    readonly current: number,
  ) {
    super(`required revision ${requested} is a future revision (current revision ${current})`);
    this.name = 'FutureRevisionError';
  }
}

export interface Backend {
  /** 'memory', 'sqlite', 'etcd' */
  readonly name: string;

  /** open or create the store; returns when it can serve */
  open(): Promise<void>;
  /** wait for in-flight writes to be durable, then release the store */
  close(): Promise<void>;

  /** the latest revision (of any key) */
  currentRevision(): Promise<number>;
  /**
   * the latest revision when this process knows it without asking anyone (a store it owns
   * alone: sqlite, memory); undefined for a store shared with other servers (etcd)
   */
  revisionNow?(): number | undefined;
  /** the revision history has been compacted to (reads and watches below it fail) */
  compactedRevision(): Promise<number>;

  /** the key's latest value */
  get(key: string): Promise<KeyValue | undefined>;
  /** keys with the given prefix, in byte order, at a revision */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /** the number of keys with the prefix at the latest revision */
  count(prefix: string): Promise<number>;

  /** create a key that must not exist; KeyExistsError otherwise. Resolves once durable. */
  create(key: string, value: Uint8Array): Promise<KeyValue>;
  /**
   * replace a key's value if its modRevision equals expectedModRevision (ConflictError carries the
   * current state otherwise; KeyNotFoundError when it is gone). Resolves once durable.
   */
  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue>;
  /**
   * delete a key, if expectedModRevision is given only when it matches (ConflictError otherwise);
   * KeyNotFoundError when absent. Resolves with the deleted value (modRevision = the deletion's revision).
   */
  delete(key: string, expectedModRevision?: number): Promise<KeyValue>;

  /** events for keys with the prefix, starting after opts.afterRevision; CompactedError through onError when too old */
  watch(prefix: string, opts: WatchOptions): Watch;

  /** drop history older than revision (the latest value of every live key is kept) */
  compact(revision: number): Promise<void>;

  /** a cheap liveness probe for the health check */
  healthy(): Promise<boolean>;

  /** the bytes the store takes on disk (undefined: none, or not known) */
  sizeBytes?(): number | undefined;
}
