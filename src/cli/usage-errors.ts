/**
 * Usage errors in two lines: commander's "Did you mean …" first (it puts it last), then the
 * command's usage in one line, instead of the whole help text (90 lines for the top level).
 */
import type { Command } from 'commander';

/** Makes `command` report its usage errors concisely (see the file comment). */
export function conciseErrors(command: Command): void {
  command.configureOutput({
    outputError: (text, write) => write(`${conciseError(command, text)}\n${usageHint(command)}\n`),
  });
}

/**
 * commander's `error: unknown command 'staus'\n(Did you mean status?)` as
 * `error: did you mean phasebridge status? (unknown command 'staus')`; other errors unchanged.
 */
export function conciseError(command: Command, text: string): string {
  const m = /^error: ([^\n]*)\n\(Did you mean (?:one of )?([^)]*)\?\)\s*$/.exec(text);
  if (!m) return text.trimEnd();
  const problem = m[1]!;
  const names = m[2]!.split(', ');
  // A subcommand is named with its path, so the suggestion can be pasted as it is.
  const likely = problem.startsWith('unknown command')
    ? names.map((name) => `${commandPath(command)} ${name}`)
    : names;
  return `error: did you mean ${likely.join(' or ')}? (${problem})`;
}

/** `phasebridge agents add`: the names from the top command down. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** `Usage: phasebridge run [options] <workflow> (…--help…)`, computed only on an error. */
function usageHint(command: Command): string {
  const path = commandPath(command);
  if (command.parent === null) {
    return `Usage: ${path} <command> [options] (\`${path} --help\` lists the commands)`;
  }
  const more = command.commands.length > 0 ? 'lists its commands' : 'for the options';
  return `Usage: ${path} ${command.usage()} (\`${path} --help\` ${more})`;
}
