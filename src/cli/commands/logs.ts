import { closeSync, constants, readSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Command } from 'commander';
import { NATIVE_FILES, nativeRunDir } from '../../engine/layouts/native.ts';
import { openInside } from '../../engine/ledger/safe-path.ts';
import type { RunState, StepState } from '../../engine/model.ts';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import { stepLogPath } from '../../jobs/orchestrator/run-files.ts';
import { promptFilePath } from '../../jobs/runner/agent-argv.ts';
import type { CliContext } from '../context.ts';
import { readRun } from '../read-run.ts';

/** How often `--follow` looks for new output and for the run moving on. */
const FOLLOW_POLL_MS = 200;

/** `phasebridge logs RUN [STEP] [--follow | --prompt]`: what the agents printed, or were told. */
export function registerLogsCommand(program: Command, ctx: CliContext): void {
  program
    .command('logs')
    .description("print a run's agent output: one step, or every step that ran, in order")
    .argument('<run>', 'the run id')
    .argument('[step]', 'only this step (its latest attempt unless --attempt)')
    .option('--attempt <n>', 'this attempt of the step instead of the latest')
    .option(
      '-f, --follow',
      'keep printing new output until the run awaits a human, is blocked or ends',
    )
    .option(
      '--prompt',
      'print the full prompt each attempt was given (step prompt, reasons, notes, files) instead',
    )
    .action(async (runId: string, stepId: string | undefined, opts: LogsOptions) => {
      const attempt = attemptOf(opts.attempt, stepId);
      const { record, state } = await readRun(ctx, runId);
      if (stepId !== undefined) stepOf(state, stepId);
      const files: LogFiles = {
        workspace: record.workspace,
        runDir: nativeRunDir(record.workspace, record.id),
        step: (s, n) => stepLogPath(record.workspace, record.id, s.id, n),
        trigger: (s, n) => stepLogPath(record.workspace, record.id, s.id, n, 'trigger'),
      };
      if (opts.prompt && opts.follow)
        throw new InvalidInputError('--prompt and --follow do not go together');
      if (opts.prompt) printPrompts(state, stepId, attempt, files);
      else if (opts.follow) await follow(state, stepId, files);
      else printLogs(state, stepId, attempt, files);
    });
}

/** `phasebridge prompt RUN [STEP]`: chat's `prompt` verb, the same as `logs --prompt`. */
export function registerPromptCommand(program: Command, ctx: CliContext): void {
  program
    .command('prompt')
    .description('print the full prompt each attempt was given (the same as `logs --prompt`)')
    .argument('<run>', 'the run id')
    .argument('[step]', 'only this step (its latest attempt unless --attempt)')
    .option('--attempt <n>', 'this attempt of the step instead of the latest')
    .action(async (runId: string, stepId: string | undefined, opts: LogsOptions) => {
      const attempt = attemptOf(opts.attempt, stepId);
      const { record, state } = await readRun(ctx, runId);
      printPrompts(state, stepId, attempt, {
        workspace: record.workspace,
        runDir: nativeRunDir(record.workspace, record.id),
        step: (s, n) => stepLogPath(record.workspace, record.id, s.id, n),
        trigger: (s, n) => stepLogPath(record.workspace, record.id, s.id, n, 'trigger'),
      });
    });
}

interface LogsOptions {
  attempt?: string;
  prompt?: boolean;
  follow?: boolean;
}

/** Where a run's logs are (the native run folder holds every layout's step logs). */
interface LogFiles {
  /** The run's workspace: logs are read without following a link planted below it. */
  workspace: string;
  runDir: string;
  step(step: StepState, attempt: number): string;
  trigger(step: StepState, attempt: number): string;
}

function attemptOf(text: string | undefined, stepId: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (stepId === undefined) throw new InvalidInputError('--attempt needs a STEP');
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new InvalidInputError(`--attempt must be a whole number >= 1 (got '${text}')`);
  }
  return n;
}

function stepOf(state: RunState, stepId: string): StepState {
  const step = state.steps.find((s) => s.id === stepId);
  if (!step) {
    const ids = state.steps.map((s) => s.id).join(', ');
    throw new NotFoundError(`run ${state.id} has no step '${stepId}' (steps: ${ids})`);
  }
  return step;
}

/** STEP's attempt `attempt` (the latest when undefined); refused when it has not run. */
function ranAttempt(
  state: RunState,
  stepId: string,
  attempt: number | undefined,
): { step: StepState; n: number } {
  const step = stepOf(state, stepId);
  const n = attempt ?? step.attempt;
  if (step.attempt === 0)
    throw new NotFoundError(`step ${step.id} of run ${state.id} has not run yet`);
  if (n > step.attempt) {
    throw new NotFoundError(`step ${step.id} has ${step.attempt} attempt(s), not ${n}`);
  }
  return { step, n };
}

function printLogs(
  state: RunState,
  stepId: string | undefined,
  attempt: number | undefined,
  files: LogFiles,
): void {
  if (stepId !== undefined) {
    const { step, n } = ranAttempt(state, stepId, attempt);
    process.stdout.write(readLog(files.workspace, files.step(step, n)));
    return;
  }
  const ran = state.steps.filter((s) => s.attempt > 0);
  if (ran.length === 0) console.log(`no step of run ${state.id} has run yet`);
  for (const step of ran) {
    printSection(`${step.id} (attempt ${step.attempt})`, files, files.step(step, step.attempt));
    const triggers = step.triggerAttempt ?? 0;
    if (triggers > 0) {
      printSection(
        `${step.id} trigger (attempt ${triggers})`,
        files,
        files.trigger(step, triggers),
      );
    }
  }
}

/** The prompt file of an attempt, beside its log (see promptFilePath). */
function promptOf(files: LogFiles, step: StepState, n: number): string {
  return promptFilePath({ logFile: files.step(step, n), stepId: step.id, attempt: n });
}

/**
 * `--prompt`: the exact prompt of one attempt (the latest unless --attempt) with STEP; else of
 * every attempt of every step that ran, oldest first, each under a heading.
 */
function printPrompts(
  state: RunState,
  stepId: string | undefined,
  attempt: number | undefined,
  files: LogFiles,
): void {
  const one = (step: StepState, n: number): string => {
    const text = readLog(files.workspace, promptOf(files, step, n));
    return text === ''
      ? `(no prompt on record for ${step.id} attempt ${n}: it ran before prompts were kept)\n`
      : text.endsWith('\n')
        ? text
        : `${text}\n`;
  };
  if (stepId !== undefined) {
    const { step, n } = ranAttempt(state, stepId, attempt);
    process.stdout.write(one(step, n));
    return;
  }
  const ran = state.steps.filter((s) => s.attempt > 0);
  if (ran.length === 0) console.log(`no step of run ${state.id} has run yet`);
  for (const step of ran) {
    for (let n = 1; n <= step.attempt; n++) {
      console.log(`==> ${step.id} (attempt ${n}) prompt <==`);
      process.stdout.write(one(step, n));
    }
  }
}

function printSection(title: string, files: LogFiles, file: string): void {
  console.log(`==> ${title} <==`);
  const text = readLog(files.workspace, file);
  process.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
}

/**
 * Prints new output as it is written: every step attempt that starts while following (a quick
 * step is not missed between polls), the current step's from its beginning. Ends once the run
 * is no longer active (or, with STEP, that step has finished), or on Ctrl-C.
 */
async function follow(
  initial: RunState,
  stepId: string | undefined,
  files: LogFiles,
): Promise<void> {
  const offsets = new Map<string, number>();
  // One decoder per log, so a character split across two reads is printed whole.
  const decoders = new Map<string, StringDecoder>();
  // History of earlier steps is not replayed; `logs RUN` without --follow prints it.
  const history = new Set(
    initial.steps
      .filter((s) => s.attempt > 0 && s.index !== initial.cursor && s.id !== stepId)
      .map((s) => `${s.id}#${s.attempt}`),
  );
  let lastSource = '';
  let stopped = false;
  const stop = () => {
    stopped = true;
  };
  process.once('SIGINT', stop);
  try {
    let state = initial;
    // The ledger, read incrementally: run.json holds only a summary, not every step's attempt.
    const { RunFollower } = await import('../../engine/store/run-follower.ts');
    const ledger = new RunFollower(join(files.runDir, NATIVE_FILES.ledger));
    for (;;) {
      state = ledger.poll() ?? state;
      for (const s of state.steps) {
        const key = `${s.id}#${s.attempt}`;
        if (s.attempt === 0 || history.has(key) || (stepId !== undefined && s.id !== stepId)) {
          continue;
        }
        const chunk = readBytes(files.workspace, files.step(s, s.attempt), offsets.get(key) ?? 0);
        offsets.set(key, chunk.next);
        let decoder = decoders.get(key);
        if (decoder === undefined) {
          decoder = new StringDecoder('utf8');
          decoders.set(key, decoder);
        }
        const text = decoder.write(chunk.bytes);
        if (text === '') continue;
        if (stepId === undefined && key !== lastSource) {
          console.log(`==> ${s.id} (attempt ${s.attempt}) <==`);
        }
        lastSource = key;
        process.stdout.write(text);
      }
      if (stopped || followDone(state, stepId)) return;
      await new Promise((r) => setTimeout(r, FOLLOW_POLL_MS));
    }
  } finally {
    process.off('SIGINT', stop);
  }
}

function followDone(state: RunState, stepId: string | undefined): boolean {
  if (state.status !== 'active') return true;
  if (stepId === undefined) return false;
  const step = state.steps.find((s) => s.id === stepId);
  return (
    step !== undefined &&
    step.attempt > 0 &&
    ['completed', 'failed', 'skipped'].includes(step.status)
  );
}

/** The whole text of a log file ('' when it does not exist yet). */
function readLog(workspace: string, file: string): string {
  return readBytes(workspace, file, 0).bytes.toString('utf8');
}

/**
 * Bytes of `file` from `offset` on (none when missing), and the offset after them. A link planted
 * in the workspace throws UnsafePathError naming it; its target is never read.
 */
function readBytes(
  workspace: string,
  file: string,
  offset: number,
): { bytes: Buffer; next: number } {
  let fd: number;
  try {
    fd = openInside(workspace, file, constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return { bytes: Buffer.alloc(0), next: offset };
    }
    throw err;
  }
  try {
    const chunks: Buffer[] = [];
    let position = offset;
    const buffer = Buffer.alloc(64 * 1024);
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, position);
      if (n === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, n)));
      position += n;
    }
    return { bytes: Buffer.concat(chunks), next: position };
  } finally {
    closeSync(fd);
  }
}
