// The kubectl-style subcommands of `keelson` (`patch`, `options`), registered cheaply: the
// command's modules are loaded only when it runs, so other subcommands do not pay for them.
//
//   root.addCommand(...kubectlCommands());

import { Command, FlagSet } from '../cli/flags.js';

/** A FlagSet that keeps every argument: the kubectl-style command parses them itself. */
class RawArgs extends FlagSet {
  private raw: string[] = [];
  override parse(args: readonly string[]): void {
    this.raw = [...args];
  }
  override args(): string[] {
    return [...this.raw];
  }
}

class LazyKubectlCommand extends Command {
  constructor(use: string, short: string, name: 'patch' | 'options') {
    super({
      use,
      short,
      args: 'any',
      run: async ({ args }) => {
        const m = await import('./patch.js');
        return m.runFromProcess(name, args);
      },
    });
  }

  /** keelson's dispatcher must not parse these arguments: the command does, with kubectl's rules. */
  override allFlags(): FlagSet {
    return new RawArgs(this.name);
  }
}

/** `keelson patch` and `keelson options`. */
export function kubectlCommands(): Command[] {
  return [
    new LazyKubectlCommand('patch (-f FILENAME | TYPE NAME) [-p PATCH|--patch-file FILE]', 'Update fields of a resource', 'patch'),
    new LazyKubectlCommand('options', 'Print the list of flags inherited by the kubectl-style commands', 'options'),
  ];
}
