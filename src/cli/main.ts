// The keelson command: one binary, with a subcommand per daemon (as k3s has).
import { Command, runMain } from './flags.js';
import { apiserverCommand } from './apiserver.js';
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
root.addCommand(apiserverCommand(true), apiserverCommand(false));
root.addCommand(...(await import('../kubectl/commands.js')).kubectlCommands());

await runMain(root);
