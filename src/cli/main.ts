// The keelson command: one binary, with a subcommand per daemon (as k3s has).
//
// Each subcommand's modules are loaded only when that subcommand runs: `keelson patch` is a
// short-lived client and must not pay for loading the API server (about half a second).
import { Command, runMain } from './flags.js';
import { formatVersionLine, setProgramName } from './version.js';

setProgramName('Keelson');

const root = new Command({
  use: 'keelson',
  short: 'Keelson: a Kubernetes-compatible control plane',
  long: 'Keelson is a Kubernetes-compatible control plane: an API server that real kubectl, client libraries and operators use unchanged, starting in about a second on an embedded store.',
  args: 'none',
  run: ({ flags }) => {
    if (flags.changed('version')) {
      process.stdout.write(formatVersionLine() + '\n');
      return 0;
    }
    process.stdout.write(root.usageString());
    return 0;
  },
});
root.localFlags.bool('version', false, 'print the version and exit');

const SERVER_COMMANDS = new Set(['server', 'apiserver', 'controller-manager', 'scheduler', 'kubelet', 'proxy']);
const KUBECTL_COMMANDS = new Set(['patch', 'options']);
const sub = process.argv[2] ?? '';
// (each daemon's modules only for that daemon, and all of them for the command list)
const daemon = SERVER_COMMANDS.has(sub) ? sub : KUBECTL_COMMANDS.has(sub) ? 'none' : 'all';
if (daemon === 'server' || daemon === 'apiserver' || daemon === 'all') {
  const { apiserverCommand } = await import('./apiserver.js');
  root.addCommand(apiserverCommand(true), apiserverCommand(false));
}
if (daemon === 'controller-manager' || daemon === 'all') {
  const { controllerManagerCommand } = await import('./controllermanager.js');
  root.addCommand(controllerManagerCommand());
}
if (daemon === 'scheduler' || daemon === 'all') {
  const { schedulerCommand } = await import('./scheduler.js');
  root.addCommand(schedulerCommand());
}
if (daemon === 'kubelet' || daemon === 'all') {
  const { kubeletCommand } = await import('./kubelet.js');
  root.addCommand(kubeletCommand());
}
if (daemon === 'proxy' || daemon === 'all') {
  const { proxyCommand } = await import('./proxy.js');
  root.addCommand(proxyCommand());
}
if (!SERVER_COMMANDS.has(sub)) root.addCommand(...(await import('../kubectl/commands.js')).kubectlCommands());

await runMain(root);
