/**
 * `agents/agent-config.json`: the subagents registered for the workflow, those `trigger`
 * directives can reach: `[{id, name, engine?, model?}]`. They are the workflow's `subagents:`;
 * a workflow without that list may trigger any agent, so the step agents stand in (in order of
 * first use) rather than an empty file. Engine and model come from the bridge's agent catalogue
 * when the caller provides one; the workflow itself only names agents.
 */
import type { Workflow } from '../../model.ts';

/** One agent of the workflow, as written to agent-config.json. */
export interface AgentConfigEntry {
  /** The agent's name as the workflow steps use it. */
  id: string;
  /** Display name (the id unless the catalogue has a better one). */
  name: string;
  /** Engine kind, e.g. 'claude', 'codex', 'command'. */
  engine?: string;
  /** Model name, when the agent pins one. */
  model?: string;
}

/** What the bridge knows about a named agent; undefined when it knows nothing. */
export type AgentInfoLookup = (
  id: string,
) => { name?: string; engine?: string; model?: string } | undefined;

/** Builds agent-config.json's entries for `workflow`. */
export function buildAgentConfig(workflow: Workflow, lookup?: AgentInfoLookup): AgentConfigEntry[] {
  const seen = new Set<string>();
  const entries: AgentConfigEntry[] = [];
  const ids = workflow.subagents ?? workflow.steps.map((s) => s.agent);
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    const info = lookup?.(id);
    const entry: AgentConfigEntry = { id, name: info?.name ?? id };
    if (info?.engine !== undefined) entry.engine = info.engine;
    if (info?.model !== undefined) entry.model = info.model;
    entries.push(entry);
  }
  return entries;
}

/** The exact bytes of agent-config.json. */
export function serializeAgentConfig(entries: readonly AgentConfigEntry[]): string {
  return `${JSON.stringify(entries, null, 2)}\n`;
}
