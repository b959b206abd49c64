// What every controller of the manager gets when it starts, and the helpers its descriptor uses.
// (Apart from manager.ts, which imports every controller, so that a controller's file can import
// these without a cycle.)
import type { InformerFactory, Informer, InformerOptions, InformerSource } from '../client/informer.js';
import type { Logger } from '../client/log.js';
import type { RESTClient } from '../client/rest.js';
import { ResourceClient, type GroupVersionResource, type KubeObject } from '../client/resources.js';
import type { ControllerManagerOptions } from './options.js';
import type { NamespacedPods } from './podwatch.js';
import type { LegacyTokenGenerator } from './tokens.js';
import type { SigningCA } from './csrsigning.js';

/** What a controller gets when it starts. */
export interface ControllerContext {
  options: ControllerManagerOptions;
  /** shared informers (started by the manager once every controller has registered) */
  informers: InformerFactory;
  /** the client the shared informers use */
  informerClient: RESTClient;
  /** the pods of the namespaces some controller's objects need (podwatch.ts), shared */
  pods: NamespacedPods;
  /** a client of the controller's own: User-Agent suffixed with its name, QPS/burst multiplied */
  clientFor(name: string, scale?: { qps?: number; burst?: number }): RESTClient;
  log: Logger;
  /** aborts when the controller must stop (stop, or leadership lost) */
  signal: AbortSignal;
  /** the CA bundle published to namespaces (--root-ca-file, else the CA the manager trusts the server with) */
  rootCA?: string;
  /** signs legacy service account tokens (the manager's --service-account-private-key-file) */
  legacyTokenGenerator?: LegacyTokenGenerator;
  /** the CA of each kubernetes.io signer the CSR signing controller signs for (--cluster-signing-*) */
  signingCAs?: Record<string, SigningCA>;
  /** in the API server's process: metadata informers from its watch cache (ControllerManagerConfig.localMetadataSource) */
  localMetadataSource?: MetadataSourceFinder;
}

/** the in-process metadata source of a resource, or undefined: watch it over HTTP */
export type MetadataSourceFinder = (gvr: GroupVersionResource) => InformerSource<KubeObject> | undefined;

export interface ControllerDescriptor {
  name: string;
  /** runs the controller until ctx.signal aborts */
  run(ctx: ControllerContext): Promise<void>;
}

/** runs `body` with a client of the controller's own (ctx.clientFor: its User-Agent, its rate limits scaled by `scale`), closed when it returns */
export async function withClient(ctx: ControllerContext, agent: string, scale: { qps?: number; burst?: number } | undefined, body: (client: RESTClient) => Promise<void>): Promise<void> {
  const client = ctx.clientFor(agent, scale);
  try {
    await body(client);
  } finally {
    client.close();
  }
}

/** the shared informer of a resource (made on first use), listing and watching with the informers' client */
export function informerOf<T extends KubeObject>(ctx: ControllerContext, gvr: GroupVersionResource, opts?: InformerOptions): Informer<T> {
  return ctx.informers.informerFor(new ResourceClient<T>(ctx.informerClient, gvr), opts);
}
