import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { conciseErrors } from '../../src/cli/usage-errors.ts';

/** A small program with the concise usage errors; returns what it wrote to stderr. */
function errorOf(argv: string[]): string {
  let err = '';
  const program = new Command('phasebridge').exitOverride();
  conciseErrors(program);
  program.command('push <remote>').action(() => {});
  program.command('pull <remote>').action(() => {});
  const agents = program.command('agents');
  agents.command('add <name>').action(() => {});
  for (const c of [program, agents, ...program.commands, ...agents.commands]) {
    conciseErrors(c.exitOverride());
    c.configureOutput({ writeErr: (s) => (err += s) });
  }
  expect(() => program.parse(argv, { from: 'user' })).toThrow();
  return err;
}

describe('concise usage errors', () => {
  it('names every equally likely command, each as it would be typed', () => {
    expect(errorOf(['pusl', 'origin']).split('\n')[0]).toBe(
      "error: did you mean phasebridge pull or phasebridge push? (unknown command 'pusl')",
    );
  });

  it('points a command with subcommands to the list of them', () => {
    expect(errorOf(['agents', 'ad', 'x']).trim().split('\n')).toEqual([
      "error: did you mean phasebridge agents add? (unknown command 'ad')",
      'Usage: phasebridge agents [options] [command] (`phasebridge agents --help` lists its commands)',
    ]);
  });

  it('puts the usage of the command that failed in one line', () => {
    expect(errorOf(['agents', 'add']).trim().split('\n')).toEqual([
      "error: missing required argument 'name'",
      'Usage: phasebridge agents add [options] <name> (`phasebridge agents add --help` for the options)',
    ]);
  });
});
