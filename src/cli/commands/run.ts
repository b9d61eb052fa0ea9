import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { layoutNames } from '../../engine/layouts/index.ts';
import { READ_LIMITS, readRegularFile, UnsafePathError } from '../../engine/ledger/safe-path.ts';
import type { Layout } from '../../engine/model.ts';
import { InvalidInputError } from '../../errors.ts';
import { makeDirs } from '../../fs-errors.ts';
import type { CliContext } from '../context.ts';
import { driveRun } from '../drive.ts';
import { cliKey } from '../orchestrator-context.ts';

/** `phasebridge run <workflow>`: start a run and drive it here until it needs a human. */
export function registerRunCommand(program: Command, ctx: CliContext): void {
  program
    .command('run')
    .description(
      'start a run of a workflow and drive it in this process until it awaits a human, is blocked or ends',
    )
    .argument('<workflow>', "a workflow id ('demo', or workflows/<id>.workflow.yaml) or a file")
    .requiredOption('--workspace <dir>', 'the folder the agents work in (created when missing)')
    .option('--spec <text>', 'what to build: the specification text')
    .option('--spec-file <file>', 'read the specification from a file')
    .option('--track <track>', 'the workflow track to follow')
    .option('--condition <names...>', 'conditions to select (steps needing others are skipped)')
    .addOption(
      new Option(
        '--layout <layout>',
        'on-disk format of the run state (default: the workflow’s)',
      ).choices(layoutNames()),
    )
    .option(
      '--no-resume',
      'after a crash mid-step, block the run for a human instead of re-running the step',
    )
    .option('--detach', 'only start it; `phasebridge serve` or `phasebridge worker` runs the jobs')
    .action(async (workflow: string, opts: RunOptions) => {
      if (opts.workspace.trim() === '') {
        throw new InvalidInputError('--workspace needs a folder, not ""');
      }
      const spec = specOf(opts);
      // The workflow is checked before the workspace is created: a failed run leaves nothing.
      await assertWorkflow(ctx, workflow, resolve(opts.workspace));
      const workspace = workspaceOf(opts.workspace);
      await driveRun(ctx, { detach: opts.detach === true }, (orchestrator) =>
        orchestrator.startRun({
          workflow,
          workspace,
          spec,
          actor: { id: ctx.actor },
          key: cliKey(),
          ...(opts.track === undefined ? {} : { track: opts.track }),
          ...(opts.condition === undefined ? {} : { conditions: opts.condition }),
          ...(opts.layout === undefined ? {} : { layout: opts.layout }),
          ...(opts.resume === false ? { resumeFromLastStep: false } : {}),
        }),
      );
    });
}

interface RunOptions {
  workspace: string;
  spec?: string;
  specFile?: string;
  track?: string;
  condition?: string[];
  layout?: Layout;
  detach?: boolean;
  resume?: boolean;
}

function specOf(opts: RunOptions): string {
  if (opts.spec !== undefined && opts.specFile !== undefined) {
    throw new InvalidInputError('give the spec with --spec or with --spec-file, not both');
  }
  if (opts.specFile !== undefined) {
    if (opts.specFile === '') throw new InvalidInputError('--spec-file needs a path, not ""');
    let data: Buffer | null;
    try {
      // A FIFO or /dev/zero is refused at once; the spec is bounded (1 MB).
      data = readRegularFile(opts.specFile, { limit: READ_LIMITS.spec, followLink: true });
    } catch (err) {
      const why =
        err instanceof UnsafePathError
          ? err.message
          : ((err as NodeJS.ErrnoException).code ?? (err as Error).message);
      throw new InvalidInputError(`cannot read --spec-file ${opts.specFile}: ${why}`);
    }
    if (data === null) {
      throw new InvalidInputError(`cannot read --spec-file ${opts.specFile}: it does not exist`);
    }
    return data.toString('utf8');
  }
  if (opts.spec === undefined || opts.spec.trim() === '') {
    throw new InvalidInputError('say what to build with --spec TEXT or --spec-file FILE');
  }
  return opts.spec;
}

/** Throws NotFoundError (saying where it looked) unless `workflow` can be found for `workspace`. */
async function assertWorkflow(ctx: CliContext, workflow: string, workspace: string): Promise<void> {
  const { WorkflowRegistry } = await import('../../jobs/orchestrator/workflow-registry.ts');
  const { home } = await ctx.config();
  await new WorkflowRegistry({ home, log: await ctx.logger() }).find(workflow, workspace);
}

/** The workspace, created when missing (ResourceError naming the path when it cannot be). */
function workspaceOf(dir: string): string {
  if (dir.trim() === '') throw new InvalidInputError('--workspace needs a folder, not ""');
  const workspace = resolve(dir);
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(workspace, { throwIfNoEntry: false });
  } catch {
    st = undefined; // EACCES, ENOTDIR…: makeDirs says which part of the path is at fault
  }
  // A file given as --workspace is bad usage (exit 2); the machine refusing a folder is not.
  if (st && !st.isDirectory())
    throw new InvalidInputError(`workspace ${workspace} is not a folder`);
  makeDirs(workspace);
  return workspace;
}
