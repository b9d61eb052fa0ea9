import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { readRun } from '../read-run.ts';

/** `phasebridge phase RUN`: a PABCD run's phase strip and every phase move (chat `phase <run>`). */
export function registerPhaseCommand(program: Command, ctx: CliContext): void {
  program
    .command('phase')
    .description("a PABCD run's phase history: the phase strip, then who moved it, when and why")
    .argument('<run>', 'the run id')
    .action(async (runId: string) => {
      const { state } = await readRun(ctx, runId);
      // Loaded here: only this command renders phases.
      const { phaseHistory } = await import('../../chatops/phase-strip.ts');
      console.log(phaseHistory(state, Date.now()));
    });
}
