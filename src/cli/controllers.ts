// The controller manager inside `keelson server`: started once the API server is ready, as a
// client of it over loopback HTTPS with a client certificate of its own
// (CN=system:kube-controller-manager, as kubeadm and k3s give kube-controller-manager), with
// leader election on the Lease kube-system/kube-controller-manager.
import type { LegacyTokenGenerator } from '../controllers/tokens.js';
import type { CertKey } from '../apiserver/pki.js';
import { issueClientCert } from '../apiserver/pki.js';
import type { Logger } from '../client/log.js';
import { ControllerManager } from '../controllers/manager.js';
import { SIGNERS } from '../controllers/csrsigning.js';
import type { ControllerManagerOptions } from '../controllers/options.js';
import type { MetadataSourceFinder } from '../controllers/context.js';
import { userAgent } from './version.js';

export const CONTROLLER_MANAGER_USER = 'system:kube-controller-manager';

export interface StartControllersOptions {
  /** the API server, e.g. `https://127.0.0.1:6443` */
  serverURL: string;
  /** the cluster CA (verifies the server) */
  caPEM: string;
  /** the controller manager's client certificate and key */
  certPEM: string;
  keyPEM: string;
  log: Logger;
  /** overrides of the controller manager's defaults (flags, later) */
  options?: Partial<ControllerManagerOptions>;
  /** signs legacy service account tokens (the service account signing key) */
  legacyTokenGenerator?: LegacyTokenGenerator;
  /** the CA that signs approved certificate signing requests of the kubernetes.io signers */
  signingCA?: { certPEM: string; keyPEM: string };
  /** the garbage collector's graph fed from the server's watch cache (APIServer.localMetadataSource) */
  localMetadataSource?: MetadataSourceFinder;
}

/** A client certificate for the embedded controller manager, signed by the cluster CA (kept in memory). */
export async function controllerManagerCert(ca: CertKey): Promise<{ certPEM: string; keyPEM: string }> {
  // The in-process controller manager acts for every built-in controller under one identity;
  // until each controller runs under its own service account (as --use-service-account-credentials
  // does in Kubernetes), it is a cluster administrator.
  const ck = await issueClientCert(ca, CONTROLLER_MANAGER_USER, ['system:masters']);
  return { certPEM: ck.certPEM, keyPEM: ck.keyPEM };
}

/**
 * Starts the controller manager and returns at once (leader election and cache sync proceed in
 * the background). stop() stops the controllers and releases the Lease; it never rejects and
 * gives up waiting after `stopTimeoutMs` (5 s).
 */
export async function startControllers(opts: StartControllersOptions & { stopTimeoutMs?: number }): Promise<{ stop(): Promise<void> }> {
  const mgr = new ControllerManager({
    rest: { server: opts.serverURL, ca: opts.caPEM, cert: opts.certPEM, key: opts.keyPEM },
    // (the manager of its writes is kube-controller-manager, the User-Agent's first part, as in Kubernetes)
    userAgent: userAgent('kube-controller-manager'),
    options: opts.options,
    log: opts.log,
    legacyTokenGenerator: opts.legacyTokenGenerator,
    signingCAs: opts.signingCA ? Object.fromEntries(SIGNERS.map((s) => [s, opts.signingCA!])) : undefined,
    localMetadataSource: opts.localMetadataSource,
  });
  mgr.start();
  opts.log.info('Started the controller manager', { identity: mgr.identity, leaderElect: mgr.options.leaderElect });
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<void>((r) => (timer = setTimeout(() => {
          opts.log.warn('The controller manager did not stop in time; going on');
          r();
        }, opts.stopTimeoutMs ?? 5000)));
        await Promise.race([mgr.stop().catch((e) => opts.log.error(e, 'Stopping the controller manager failed')), timeout]);
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
