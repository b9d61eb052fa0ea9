/**
 * The CLI loads only the module of the command asked for (issue 31: start-up ≤ 2× bare Node).
 * Whatever it loads, each command must read and parse exactly as in the whole tree: same help
 * text (options, arguments, descriptions) for the command and every subcommand.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CliContext } from '../../src/cli/context.ts';
import { buildProgram, commandAsked } from '../../src/cli/program.ts';

/** The help text of `c` and of every subcommand below it, keyed by their path. */
function helpTree(c: Command, path = c.name()): Record<string, string> {
  const out: Record<string, string> = { [path]: c.helpInformation() };
  for (const sub of c.commands as Command[])
    Object.assign(out, helpTree(sub, `${path} ${sub.name()}`));
  return out;
}

const whole = await buildProgram(new CliContext());
const names = (whole.commands as Command[]).flatMap((c) => [c.name(), ...c.aliases()]);

describe('the CLI builds only the asked command', () => {
  it.each(names)('`phasebridge %s` reads and parses as in the whole tree, alone', async (name) => {
    const alone = await buildProgram(new CliContext(), name);
    const asked = (alone.commands as Command[]).find(
      (c) => c.name() === name || c.aliases().includes(name),
    );
    const full = (whole.commands as Command[]).find(
      (c) => c.name() === name || c.aliases().includes(name),
    );
    expect(asked).toBeDefined();
    expect(helpTree(asked!)).toEqual(helpTree(full!));
    // Lazy: its module's commands, not the whole tree.
    expect(alone.commands.length).toBeLessThan(whole.commands.length);
  });

  it('builds the whole tree for --help, `help` and an unknown command (for "did you mean")', async () => {
    for (const argv of [['--help'], ['help', 'status'], ['staus'], []]) {
      const program = await buildProgram(new CliContext(), commandAsked(['node', 'pb', ...argv]));
      expect(program.helpInformation()).toBe(whole.helpInformation());
    }
  });

  it('takes the first word that is not an option as the command', () => {
    expect(commandAsked(['node', 'pb', '--version'])).toBeUndefined();
    expect(commandAsked(['node', 'pb', 'status', 'r1', '--json'])).toBe('status');
    expect(commandAsked(['node', 'pb', '-h', 'run', 'demo'])).toBe('run');
  });
});
