// The scheduler, run in the test's own process against a cluster started without one (its
// `--controllers`' scheduler-less servers): a client certificate for system:kube-scheduler, issued
// by the cluster's CA from its data directory, as keelson server gives its embedded scheduler.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster } from './harness.js';
import { issueClientCert, loadCA } from '../../src/apiserver/pki.js';
import { nopLogger } from '../../src/client/log.js';
import { startEmbeddedScheduler, SCHEDULER_USER } from '../../src/scheduler/scheduler.js';

export async function startTestScheduler(c: Cluster): ReturnType<typeof startEmbeddedScheduler> {
  const pki = join(c.dataDir, 'pki');
  const ca = loadCA(readFileSync(join(pki, 'ca.crt'), 'utf8'), readFileSync(join(pki, 'ca.key'), 'utf8'));
  const cert = await issueClientCert(ca, SCHEDULER_USER);
  return startEmbeddedScheduler({ serverURL: c.url, caPEM: ca.certPEM, certPEM: cert.certPEM, keyPEM: cert.keyPEM, log: nopLogger });
}
