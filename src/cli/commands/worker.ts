import type { Command } from 'commander';
import { InvalidInputError } from '../../errors.ts';
import type { CliContext } from '../context.ts';
import { withOrchestrator } from '../orchestrator-context.ts';

/** Engines `--engines` accepts. */
const ENGINES = ['command', 'claude', 'codex'] as const;
const LABEL_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** `phasebridge worker`: a process that runs queued agent jobs until stopped (SIGINT/SIGTERM). */
export function registerWorkerCommand(program: Command, ctx: CliContext): void {
  program
    .command('worker')
    .description(
      'run queued agent jobs: with REDIS_URL on any machine (jobs are self-contained; no bridge.db needed), else the embedded queue in bridge.db',
    )
    .option(
      '--concurrency <n>',
      'jobs run at once (at most one per run, except the tasks of a `tasks` step)',
      '2',
    )
    .option(
      '--engines <list>',
      `only run agents of these engines, comma-separated (${ENGINES.join(', ')}); default all`,
    )
    .option(
      '--label <label>',
      'a label this worker carries (repeat or comma-separate); steps with runsOn need them',
      (value: string, prev: string[]) => [...prev, ...value.split(',')],
      [] as string[],
    )
    .action(async (opts: { concurrency: string; engines?: string; label: string[] }) => {
      const concurrency = Number(opts.concurrency);
      if (!/^\d+$/.test(opts.concurrency) || concurrency < 1 || concurrency > 64) {
        throw new InvalidInputError(
          `--concurrency must be a whole number from 1 to 64 (got '${opts.concurrency}')`,
        );
      }
      const labels = parseLabels(opts.label);
      const engines = opts.engines === undefined ? undefined : parseEngines(opts.engines);
      const config = await ctx.config();
      if (config.redisUrl === undefined) {
        if (labels.length > 0 || engines !== undefined) {
          throw new InvalidInputError(
            '--label and --engines need the BullMQ queue: set REDIS_URL (the embedded queue runs every job on every worker)',
          );
        }
        await withOrchestrator(ctx, { worker: { concurrency } }, async () => {
          console.log(
            `worker ${process.pid} running jobs from bridge.db (${await ctx.dbFile()}), concurrency ${concurrency}; Ctrl-C stops it`,
          );
          await announceStop();
        });
      } else {
        const { runRemoteWorker } = await import('../remote-worker.ts');
        await runRemoteWorker(ctx, {
          concurrency,
          labels,
          ...(engines === undefined ? {} : { engines }),
          untilStopped: announceStop,
        });
      }
      console.log('worker stopped');
    });
}

function parseLabels(raw: readonly string[]): string[] {
  const labels = [...new Set(raw.map((l) => l.trim()).filter((l) => l !== ''))];
  const bad = labels.filter((l) => !LABEL_RE.test(l));
  if (bad.length > 0) {
    throw new InvalidInputError(
      `--label ${bad.join(', ')}: a label is a letter or digit, then letters, digits, _ . - (64 at most)`,
    );
  }
  return labels;
}

function parseEngines(raw: string): string[] {
  const engines = [
    ...new Set(
      raw
        .split(',')
        .map((e) => e.trim())
        .filter((e) => e !== ''),
    ),
  ];
  const bad = engines.filter((e) => !(ENGINES as readonly string[]).includes(e));
  if (engines.length === 0 || bad.length > 0) {
    throw new InvalidInputError(
      `--engines ${bad.join(', ') || '(empty)'}: engines are ${ENGINES.join(', ')}`,
    );
  }
  return engines;
}

/** Waits for SIGINT/SIGTERM and says the worker is finishing its jobs. */
async function announceStop(): Promise<void> {
  const signal = await stopSignal();
  console.log(`worker ${process.pid}: ${signal}, finishing running jobs`);
}

/** Resolves with the first SIGINT or SIGTERM; a second one then has its default effect (exit). */
function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
