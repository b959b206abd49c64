// Admission: a chain of mutating, then validating plugins, run on every create, update, delete
// and connect after the object is decoded, defaulted and prepared by the strategy, and before
// validation (mutating) or storage (validating). A plugin rejects with a Status error (usually
// 403 Forbidden through errors.forbidden, or 422 Invalid).
import type { UserInfo } from '../authz.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  operation: Operation;
  /** the group/version/kind of the object as the request sent it */
  kind: { group: string; version: string; kind: string };
  /** group/version/resource and subresource of the request */
  resource: { group: string; version: string; resource: string };
  subresource: string;
  namespace: string;
  name: string;
  /** the new object (create, update); mutating plugins change it in place */
  object?: any;
  /** the stored object (update, delete) */
  oldObject?: any;
  /** the operation's options (CreateOptions, UpdateOptions, DeleteOptions, PatchOptions) */
  options?: any;
  dryRun: boolean;
  user: UserInfo;
  /**
   * Warnings for the client (sent as `Warning: 299 - "..."` headers): plugins append to it (the
   * webhooks' response warnings, PodSecurity's warn mode). The caller passes the request's own
   * warnings array; the chain creates one when it is missing.
   */
  warnings?: string[];
  /**
   * Audit annotations the plugins add (key -> value), for the audit log: PodSecurity's
   * `pod-security.kubernetes.io/enforce-policy` and `.../audit-violations`, a webhook's
   * `<webhook name>/<key>` annotations, `mutation.webhook.admission.k8s.io/round_0_index_0`.
   */
  auditAnnotations?: Record<string, string>;
  /**
   * Where the webhook plugins add the milliseconds they spend calling webhooks (the request's
   * scope): kube-apiserver's SLI latency of a request leaves that time out. Absent: not counted.
   */
  latency?: { webhookMs: number };
}

/**
 * What plugins may read of the cluster (namespaces, service accounts, limit ranges, quotas,
 * priority classes, webhook configurations...): the API server's own stores, read from their
 * watch caches. `list` returns the objects of a resource in a namespace ('' = all).
 */
export interface ClusterReader {
  get(group: string, resource: string, namespace: string, name: string): any | undefined;
  list(group: string, resource: string, namespace: string): any[];
}

/** writes a plugin may make (ResourceQuota status); never used on dry runs */
export interface ClusterWriter {
  updateStatus(group: string, resource: string, namespace: string, name: string, mutate: (obj: any) => any): Promise<any>;
  /** create an object (NamespaceAutoProvision creates the namespace); optional: plugins that need it are refused at build time without it */
  create?(group: string, resource: string, namespace: string, obj: any): Promise<any>;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** change the object (or reject) */
  mutate?(a: AdmissionAttributes): Promise<void> | void;
  /** accept or reject, without changing anything */
  validate?(a: AdmissionAttributes): Promise<void> | void;
  /** the plugin has side effects a dry run must not trigger (webhooks declare theirs) */
  handles?(a: AdmissionAttributes): boolean;
}
