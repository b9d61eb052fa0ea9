/**
 * Chained prompts of one step (CodeMachine's chains): the agent runs once per prompt, in order,
 * in one job. Each run after the first continues the engine's session: Claude gets
 * `--resume <session_id>`; every engine gets PHASEBRIDGE_SESSION_ID and PHASEBRIDGE_CHAIN_INDEX.
 * A failed run, or a directive other than `continue`, ends the chain there: its outcome is the
 * step's, and the chains completed so far stay completed (a retry goes on from the next one).
 */
import { runAgent } from '../runner/run-agent.ts';
import type { AgentDefinition, AgentInvocation, AgentOutcome } from '../runner/types.ts';

/** What a chain did: the step's outcome (telemetry summed) and the indexes it completed. */
export interface ChainOutcome {
  outcome: AgentOutcome;
  completed: number[];
}

/** The agent for chain `index`, continuing `session` when the engine has announced one. */
export function chainAgent(
  agent: AgentDefinition,
  index: number,
  session: string | undefined,
): AgentDefinition {
  const env: Record<string, string> = { ...agent.env, PHASEBRIDGE_CHAIN_INDEX: String(index) };
  if (session === undefined) return { ...agent, env };
  env.PHASEBRIDGE_SESSION_ID = session;
  // Only when argv extends the default (flags); a full override is the user's own command line.
  const extendsDefault = agent.argv.length === 0 || agent.argv[0]!.startsWith('-');
  const argv =
    agent.engine === 'claude' && extendsDefault ? [...agent.argv, '--resume', session] : agent.argv;
  return { ...agent, env, argv };
}

/** An outcome for a chain whose every prompt had completed before this job: nothing to run. */
function nothingLeft(): AgentOutcome {
  const telemetry = { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 };
  return {
    ok: true,
    exitCode: 0,
    signal: null,
    timedOut: false,
    cancelled: false,
    directive: null,
    telemetry,
    outputTail: [],
    outputTruncated: false,
    durationMs: 0,
  };
}

/**
 * Runs the prompts of `chain` not in `done`, in order; `onChain(i)` after each one that
 * completes (the caller reports it while the job still runs).
 */
export async function runChain(
  agent: AgentDefinition,
  inv: AgentInvocation,
  chain: readonly string[],
  done: readonly number[],
  onChain: (index: number) => void,
): Promise<ChainOutcome> {
  const completed: number[] = [];
  const total = nothingLeft();
  let last: AgentOutcome | null = null;
  let session: string | undefined;
  for (const [i, prompt] of chain.entries()) {
    if (done.includes(i)) continue;
    const outcome = await runAgent(chainAgent(agent, i, session), {
      ...inv,
      prompt,
      onSession: (id) => {
        session ??= id;
        inv.onSession?.(id);
      },
    });
    session ??= outcome.engineSessionId;
    for (const k of ['tokensIn', 'tokensOut', 'cachedTokens', 'costUsd'] as const) {
      total.telemetry[k] += outcome.telemetry[k];
    }
    total.durationMs += outcome.durationMs;
    last = outcome;
    if (!outcome.ok || inv.signal?.aborted) break;
    completed.push(i);
    onChain(i);
    if (outcome.directive !== null && outcome.directive.action !== 'continue') break;
  }
  const outcome: AgentOutcome = {
    ...(last ?? total),
    telemetry: total.telemetry,
    durationMs: total.durationMs,
  };
  if (session !== undefined) outcome.engineSessionId = session;
  return { outcome, completed };
}
