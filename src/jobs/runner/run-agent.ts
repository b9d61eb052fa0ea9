import fs from 'node:fs';
import type { Directive } from '../../engine/directive.ts';
import { writeFileAtomic } from '../../engine/ledger/atomic-write.ts';
import { markStage } from '../../trace.ts';
import { buildArgv, mcpConfigPath, promptFilePath } from './agent-argv.ts';
import { readDirectiveFile, resetDirectiveFile } from './directive-file.ts';
import { buildAgentEnv } from './env.ts';
import { missingBinaryFix } from './failure/known-causes.ts';
import { FailureObserver } from './failure/observer.ts';
import { LineSplitter, parseProgressLine, TailBuffer } from './output-lines.ts';
import { confinedRoot, DEFAULT_OUTPUT_CAP_BYTES, OutputSink } from './output-sink.ts';
import { spawnProcess } from './spawn.ts';
import { formatDuration, type SupervisedEnd, supervise } from './supervise.ts';
import { TelemetryAccumulator } from './telemetry/accumulator.ts';
import type { AgentCommand, AgentDefinition, AgentInvocation, AgentOutcome } from './types.ts';

function sessionField(id: string | null): { engineSessionId?: string } {
  return id === null ? {} : { engineSessionId: id };
}

/** Default time between SIGTERM and SIGKILL. */
export const DEFAULT_KILL_GRACE_MS = 5000;

/** Collects what the agent printed: tail, telemetry, engine session, progress. */
class OutputObserver {
  readonly tail = new TailBuffer();
  readonly telemetry = new TelemetryAccumulator();
  readonly failure = new FailureObserver();
  readonly stdout: LineSplitter;
  readonly stderr: LineSplitter;

  constructor(inv: Pick<AgentInvocation, 'onProgress' | 'onSession'>) {
    this.stdout = new LineSplitter((line) => {
      this.tail.push(line);
      this.failure.stdout(line);
      const session = this.telemetry.feed(line);
      if (session !== null) notify(inv.onSession, session);
      const progress = parseProgressLine(line);
      if (progress !== null) notify(inv.onProgress, progress);
    });
    this.stderr = new LineSplitter((line) => {
      this.tail.push(line);
      this.failure.stderrLine(line);
    });
  }
}

function notify(listener: ((text: string) => void) | undefined, text: string): void {
  try {
    listener?.(text);
  } catch {
    // A failing listener must not break the agent's output handling.
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The failure reason for a spawn error. */
function spawnFailure(
  err: NodeJS.ErrnoException,
  file: string,
  engine: AgentDefinition['engine'],
): string {
  if (err.code === 'ENOENT') {
    return `agent binary not found: ${file} — fix: ${missingBinaryFix(engine, file)}`;
  }
  if (err.code === 'EACCES') return `agent binary not executable: ${file}`;
  return `cannot start agent ${file}: ${err.message}`;
}

/**
 * The failure reason for a finished process, or undefined when it ran cleanly: the agent's own
 * words (engine error events, else its last stderr lines) with how it ended and a fix line.
 */
function processFailure(
  end: SupervisedEnd,
  timeoutMs: number,
  said: FailureObserver,
): string | undefined {
  if (end.fault !== undefined) return end.fault;
  if (end.cancelled) return 'cancelled';
  if (end.timedOut) return said.failure(`timed out after ${formatDuration(timeoutMs)}`, true);
  if (end.exit.code !== null && end.exit.code !== 0) {
    return said.failure(`exit code ${end.exit.code}`, false);
  }
  if (end.exit.code === null) {
    return said.failure(`killed by signal ${end.exit.signal ?? 'unknown'}`, false);
  }
  return undefined;
}

/** True when `dir` is an existing directory; permission errors count as "not found". */
function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}

/** True when the agent asks people for each tool use (Claude with `permissions: ask`). */
function asks(agent: AgentDefinition): boolean {
  return agent.engine === 'claude' && agent.permissions?.posture === 'ask';
}

/** Writes the MCP config that makes Claude start the approval server; a failure reason or null. */
function writeMcpConfig(agent: AgentDefinition, inv: AgentInvocation, file: string): string | null {
  const server = inv.approvalServer;
  if (server === undefined)
    return 'permissions: ask needs the bridge (its approval server); run the step through phasebridge';
  const args = [
    ...server.args,
    '--run',
    inv.runId,
    '--step',
    inv.stepId,
    '--attempt',
    String(inv.attempt),
  ];
  // The workflow's (or agent's) `expiresIn`; without it the server's default (10 minutes).
  const expires = agent.permissions?.expiresInMs;
  if (expires !== undefined) args.push('--expires-in', `${expires}ms`);
  const config = {
    mcpServers: { phasebridge: { type: 'stdio', command: server.command, args, env: server.env } },
  };
  try {
    writeFileAtomic(file, `${JSON.stringify(config, null, 2)}\n`, {
      root: confinedRoot(inv.workspace, file),
      mkdirs: true,
      mode: 0o600,
      durable: false, // written again before every attempt
    });
    return null;
  } catch (err) {
    return `cannot write MCP config ${file}: ${errorText(err)}`;
  }
}

/**
 * Resets the directive and writes the prompt file; returns a failure reason or null. On the
 * bridge's thread on purpose: on the thread pool these short calls queued behind other runs'
 * fsyncs (measured: p50 0.8 → 22 ms with 50 busy runs), and they are on the spawn path.
 */
function prepare(inv: AgentInvocation, cmd: AgentCommand): string | null {
  try {
    resetDirectiveFile(inv.directiveFile, confinedRoot(inv.workspace, inv.directiveFile));
  } catch (err) {
    return `cannot reset directive file ${inv.directiveFile}: ${errorText(err)}`;
  }
  if (cmd.promptFile === null) return null;
  try {
    const root = confinedRoot(inv.workspace, cmd.promptFile);
    // Scratch for this attempt (written again by a retry): no fsync before the spawn.
    writeFileAtomic(cmd.promptFile, inv.prompt, {
      root,
      mkdirs: true,
      mode: 0o600,
      durable: false,
    });
  } catch (err) {
    return `cannot write prompt file ${cmd.promptFile}: ${errorText(err)}`;
  }
  return null;
}

/**
 * Keeps the prompt of an agent that reads it on stdin on record, at the path a `file` agent's
 * prompt has (issue 29: `logs --prompt` shows it), 0600. Returns why it could not, for the log:
 * the record is for humans, the attempt runs without it.
 */
function recordPrompt(inv: AgentInvocation): string | null {
  const file = promptFilePath(inv);
  try {
    writeFileAtomic(file, inv.prompt, {
      root: confinedRoot(inv.workspace, file),
      mkdirs: true,
      mode: 0o600,
      durable: false,
    });
    return null;
  } catch (err) {
    return `the prompt could not be kept in ${file}: ${errorText(err)}`;
  }
}

/**
 * Runs one agent attempt to completion and reports what happened. Never throws for agent
 * failures (missing binary, exit code, timeout, cancel, invalid directive): they come back as
 * `ok: false` with a `failure` reason. Resolves only once the agent's process group is gone.
 */
export async function runAgent(
  agent: AgentDefinition,
  inv: AgentInvocation,
): Promise<AgentOutcome> {
  const started = Date.now();
  const observer = new OutputObserver(inv);
  let sink: OutputSink | null = null;
  const outcome = (fields: Partial<AgentOutcome>): AgentOutcome => ({
    ok: false,
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled: false,
    directive: null,
    telemetry: observer.telemetry.total(),
    outputTail: observer.tail.toArray(),
    outputTruncated: sink?.truncated ?? false,
    ...sessionField(observer.telemetry.sessionId()),
    durationMs: Date.now() - started,
    ...fields,
  });

  if (inv.signal?.aborted) return outcome({ cancelled: true, failure: 'cancelled before start' });
  let cmd: AgentCommand;
  const mcpConfig = asks(agent) ? mcpConfigPath(inv) : undefined;
  try {
    cmd = buildArgv(agent, mcpConfig === undefined ? inv : { ...inv, mcpConfig });
  } catch (err) {
    return outcome({ failure: errorText(err) });
  }
  if (!isDirectory(inv.workspace)) {
    return outcome({ failure: `workspace not found: ${inv.workspace}` });
  }
  try {
    sink = OutputSink.open(
      inv.workspace,
      inv.logFile,
      inv.extraLogFiles ?? [],
      inv.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
    );
  } catch (err) {
    return outcome({ failure: `cannot open log file ${inv.logFile}: ${errorText(err)}` });
  }
  try {
    const log = sink;
    const prepared =
      prepare(inv, cmd) ?? (mcpConfig === undefined ? null : writeMcpConfig(agent, inv, mcpConfig));
    if (prepared !== null) return outcome({ failure: prepared });
    markStage(inv.runId, 'files');

    log.writeLine(
      `[phasebridge] ${new Date().toISOString()} start agent=${agent.name} run=${inv.runId} ` +
        `step=${inv.stepId} attempt=${inv.attempt} cwd=${inv.workspace} argv=${JSON.stringify([cmd.file, ...cmd.args])}`,
    );
    const unrecorded = cmd.promptFile === null ? recordPrompt(inv) : null;
    if (unrecorded !== null) log.writeLine(`[phasebridge] ${unrecorded}`);
    if (inv.logPrompt) {
      log.writeLine('[phasebridge] prompt:');
      log.writeLine(inv.prompt);
      log.writeLine('[phasebridge] end of prompt');
    }
    // No room for even the header: fail now (retryable once space is free), before spawning.
    if (log.faulted.aborted) return outcome({ failure: String(log.faulted.reason) });
    const env = buildAgentEnv({
      baseEnv: inv.baseEnv ?? process.env,
      agentEnv: agent.env,
      runId: inv.runId,
      stepId: inv.stepId,
      directiveFile: inv.directiveFile,
      specFile: inv.specFile,
      secretEnvNames: inv.secretEnvNames,
    });
    markStage(inv.runId, 'spawning');
    const spawned = await spawnProcess(cmd, {
      cwd: inv.workspace,
      env,
      ...(inv.nice === undefined ? {} : { nice: inv.nice }),
    });
    if (!spawned.ok) {
      const failure = spawnFailure(spawned.error, cmd.file, agent.engine);
      log.writeLine(`[phasebridge] ${new Date().toISOString()} ${failure}`);
      return outcome({ failure });
    }
    markStage(inv.runId, 'spawned');
    try {
      inv.onSpawn?.(spawned.process.pid);
    } catch {
      // The caller's bookkeeping failing must not orphan a running agent.
    }
    const end = await supervise(spawned.process, {
      timeoutMs: inv.timeoutMs,
      killGraceMs: inv.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
      signal: inv.signal,
      fault: log.faulted,
      onStdout: (chunk) => {
        log.write(chunk);
        observer.stdout.push(chunk);
      },
      onStderr: (chunk) => {
        log.write(chunk);
        observer.stderr.push(chunk);
      },
      log: (line) => log.writeLine(line),
    });
    observer.stdout.flush();
    observer.stderr.flush();

    const read = readDirectiveFile(
      inv.directiveFile,
      confinedRoot(inv.workspace, inv.directiveFile),
    );
    const directive: Directive | null = read.ok ? read.directive : null;
    const failure =
      processFailure(end, inv.timeoutMs, observer.failure) ?? (read.ok ? undefined : read.error);
    const durationMs = Date.now() - started;
    log.writeLine(
      `[phasebridge] ${new Date().toISOString()} end exit=${end.exit.code} signal=${end.exit.signal} ` +
        `duration=${durationMs}ms${failure ? ` failure=${JSON.stringify(failure)}` : ''}`,
    );
    return outcome({
      ok: failure === undefined,
      exitCode: end.exit.code,
      signal: end.exit.signal,
      timedOut: end.timedOut,
      cancelled: end.cancelled,
      directive,
      ...(failure !== undefined ? { failure } : {}),
      durationMs,
    });
  } finally {
    sink.close();
  }
}
