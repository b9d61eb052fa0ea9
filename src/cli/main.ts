import { CommanderError } from 'commander';
import { describeError, PhasebridgeError } from '../errors.ts';
import { explainError } from '../fs-errors.ts';
import { CliContext } from './context.ts';
import { buildProgram, commandAsked } from './program.ts';

/** Runs the CLI: usage errors exit 2, domain errors print one line and exit 1 (INVALID_INPUT: 2). */
export async function main(argv: readonly string[]): Promise<number> {
  const ctx = new CliContext();
  try {
    // Only the asked command's module is loaded (`--help` and unknown commands load them all).
    const program = await buildProgram(ctx, commandAsked(argv));
    await program.parseAsync(argv as string[]);
    return Number(process.exitCode ?? 0);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version are "errors" with exit code 0 in commander.
      return err.exitCode === 0 ? 0 : 2;
    }
    const explained = explainError(err, { dbFile: ctx.dbFileIfKnown });
    const surface = describeError(explained);
    // A stack trace helps a developer, never a user: only LOG_LEVEL=debug/trace shows it.
    if (/^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '')) {
      process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
    }
    process.stderr.write(`phasebridge: ${oneLine(explained)}\n`);
    return surface.exitCode;
  } finally {
    await ctx.close();
  }
}

/** The message of a phasebridge error, or the first line of anything else (never a stack). */
function oneLine(err: unknown): string {
  if (err instanceof PhasebridgeError) return err.message;
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return `internal error: ${text.split('\n')[0]} (set LOG_LEVEL=debug to see where)`;
}

// `phasebridge status | head` closes stdout early: that is the reader's choice, not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

// No top-level await: the bundle is CommonJS (see scripts/bundle.mjs), so V8 can cache its code.
void main(process.argv).then((code) => {
  process.exitCode = code;
});
