/**
 * Runs a step attempt with its reviewers' feedback: the prompt gets the "Feedback from
 * reviewers" section, the agent gets PHASEBRIDGE_FEEDBACK_FILE, and when the payload names the
 * previous attempt's engine session (claude / codex) that session is resumed with the new
 * feedback as its next user message, so the agent keeps its context. When the resumed run fails
 * (the session is gone, the flag unknown) a fresh session runs with the full prompt, and the log
 * says so.
 */
import fs from 'node:fs';
import {
  FEEDBACK_FILE_ENV,
  feedbackFilePath,
  promptWithFeedback,
  resumeMessage,
  writeFeedbackFile,
} from '../runner/feedback.ts';
import { resumeAgent } from '../runner/resume-argv.ts';
import { runAgent } from '../runner/run-agent.ts';
import type { AgentDefinition, AgentInvocation, AgentOutcome } from '../runner/types.ts';
import type { StepJobPayload } from './job-payload.ts';

/** The agent and invocation of an attempt with feedback (prompt section, file, env). */
export function withFeedback(
  agent: AgentDefinition,
  inv: AgentInvocation,
  p: StepJobPayload,
): { agent: AgentDefinition; inv: AgentInvocation } {
  const items = p.feedback ?? [];
  if (items.length === 0) return { agent, inv };
  const file = writeFeedbackFile(
    inv.workspace,
    feedbackFilePath(inv.logFile, inv.stepId, inv.attempt),
    items,
  );
  return {
    agent: { ...agent, env: { ...agent.env, [FEEDBACK_FILE_ENV]: file } },
    inv: { ...inv, prompt: promptWithFeedback(inv.prompt, items) },
  };
}

function note(logFile: string, text: string): void {
  try {
    fs.appendFileSync(logFile, `[phasebridge] ${new Date().toISOString()} ${text}\n`);
  } catch {
    // The note is for humans reading the log; the outcome carries the facts.
  }
}

function sum(a: AgentOutcome, b: AgentOutcome): AgentOutcome {
  const t = { ...b.telemetry };
  for (const k of ['tokensIn', 'tokensOut', 'cachedTokens', 'costUsd'] as const) {
    t[k] += a.telemetry[k];
  }
  return { ...b, telemetry: t, durationMs: a.durationMs + b.durationMs };
}

/** Runs the attempt: resumed when the payload asks and the agent allows, else fresh. */
export async function runWithFeedback(
  agent: AgentDefinition,
  inv: AgentInvocation,
  p: StepJobPayload,
): Promise<AgentOutcome> {
  const fed = withFeedback(agent, inv, p);
  const session = p.resumeSession;
  const resumed = session === undefined ? null : resumeAgent(fed.agent, session);
  if (session === undefined || resumed === null) return runAgent(fed.agent, fed.inv);
  note(inv.logFile, `resuming the agent's session ${session} with the reviewers' feedback`);
  const first = await runAgent(resumed, { ...fed.inv, prompt: resumeMessage(p.feedback ?? []) });
  if (first.ok || first.cancelled || first.timedOut || inv.signal?.aborted) return first;
  note(
    inv.logFile,
    `resuming session ${session} failed (${first.failure ?? 'unknown'}); starting a fresh session with the full prompt`,
  );
  return sum(first, await runAgent(fed.agent, fed.inv));
}

/** The chain's prompts, the first one still to run carrying the feedback section. */
export function chainWithFeedback(p: StepJobPayload): string[] {
  const chain = p.chain ?? [];
  const first = chain.findIndex((_, i) => !(p.chainsDone ?? []).includes(i));
  return chain.map((c, i) => (i === first ? promptWithFeedback(c, p.feedback ?? []) : c));
}
