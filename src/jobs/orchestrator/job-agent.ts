/**
 * The agent side of a self-contained job: the bridge turns a resolved agent definition into the
 * payload's `agent` (env names only, never values), a worker turns it back into what the runner
 * starts, and decides whether it takes a job at all (its engine allowlist and labels).
 */

import type { AgentDefinition } from '../runner/types.ts';
import { DEMO_AGENT_NAME, demoAgentDefinition } from './agent-resolver.ts';
import { type JobAgent, type StepJobPayload, stepJobPayloadSchema } from './job-payload.ts';

/** The payload form of a resolved agent: its env values stay on the bridge. */
export function jobAgentOf(def: AgentDefinition, builtinDemo: boolean): JobAgent {
  const agent: JobAgent = {
    name: def.name,
    engine: def.engine,
    argv: [...def.argv],
    env: Object.keys(def.env).sort(),
  };
  if (def.model !== undefined) agent.model = def.model;
  if (def.timeoutMs !== undefined) agent.timeoutMs = def.timeoutMs;
  if (def.promptVia !== undefined) agent.promptVia = def.promptVia;
  if (def.permissions !== undefined) agent.permissions = structuredClone(def.permissions);
  if (builtinDemo) agent.builtin = 'demo';
  return agent;
}

/** The stand-in agent of a job the bridge could not resolve (the job then fails with `problem`). */
export function unresolvedAgent(name: string): JobAgent {
  return { name, engine: 'command', argv: [], env: [] };
}

/**
 * What the runner starts for a job's agent. `envValues` gives the values of the agent's env
 * names: the bridge's stored ones for its in-process worker; a remote worker passes none, so
 * the agent inherits them from the worker's own environment (its credentials live there).
 */
export function definitionOfJob(
  agent: JobAgent,
  envValues: Record<string, string>,
): AgentDefinition {
  if (agent.builtin === DEMO_AGENT_NAME) return demoAgentDefinition();
  const env: Record<string, string> = {};
  for (const name of agent.env) {
    const value = envValues[name];
    if (value !== undefined) env[name] = value;
  }
  const def: AgentDefinition = {
    name: agent.name,
    engine: agent.engine,
    argv: [...agent.argv],
    env,
  };
  if (agent.model !== undefined) def.model = agent.model;
  if (agent.timeoutMs !== undefined) def.timeoutMs = agent.timeoutMs;
  if (agent.promptVia !== undefined) def.promptVia = agent.promptVia;
  if (agent.permissions !== undefined) def.permissions = structuredClone(agent.permissions);
  return def;
}

/** What a worker accepts: engines (all when absent) and the labels it carries. */
export interface WorkerTraits {
  engines?: readonly string[];
  labels: readonly string[];
}

/** Why a worker with `traits` does not take a job, or null when it does. */
export function refusalOf(
  p: Pick<StepJobPayload, 'agent' | 'runsOn'>,
  traits: WorkerTraits,
): string | null {
  if (traits.engines !== undefined && !traits.engines.includes(p.agent.engine)) {
    return `engine ${p.agent.engine} is not in this worker's --engines`;
  }
  const missing = (p.runsOn ?? []).filter((l) => !traits.labels.includes(l));
  return missing.length === 0 ? null : `this worker lacks label(s) ${missing.join(', ')}`;
}

/**
 * Whether a worker with `traits` takes a job. A payload it cannot read is taken, so that it
 * fails with the reason (a version mismatch) instead of waiting for ever.
 */
export function acceptsJob(payload: Record<string, unknown>, traits: WorkerTraits): boolean {
  const parsed = stepJobPayloadSchema.safeParse(payload);
  return !parsed.success || refusalOf(parsed.data, traits) === null;
}
