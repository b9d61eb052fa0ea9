import { CommanderError } from 'commander';
import { describeError, PhasebridgeError } from '../errors.ts';
import { CliContext } from './context.ts';
import { buildProgram } from './program.ts';

/** Runs the CLI: usage errors exit 2, domain errors print one line and exit 1 (INVALID_INPUT: 2). */
export async function main(argv: readonly string[]): Promise<number> {
  const ctx = new CliContext();
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv as string[]);
    return Number(process.exitCode ?? 0);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version are "errors" with exit code 0 in commander.
      return err.exitCode === 0 ? 0 : 2;
    }
    const surface = describeError(err);
    const text =
      err instanceof PhasebridgeError ? err.message : String((err as Error)?.stack ?? err);
    process.stderr.write(`phasebridge: ${text}\n`);
    return surface.exitCode;
  } finally {
    await ctx.close();
  }
}

// `phasebridge status | head` closes stdout early: that is the reader's choice, not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const code = await main(process.argv);
process.exitCode = code;
