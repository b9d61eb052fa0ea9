/**
 * What the flow layout writes, as pure data (seed 003; schemas run.schema.json and
 * activity.schema.json): the FlowRun of `run.yaml`, each FlowActivity, the `events.jsonl` lines,
 * and YAML text that reads back identically through a YAML 1.1 reader (PyYAML): every string
 * that 1.1 would read as something else (timestamps, yes/no/on/off, octal-looking numbers) is
 * quoted. Optional fields are omitted rather than written as null.
 */
import path from 'node:path';
import { stringify } from 'yaml';
import type { RunState } from '../../model.ts';
import { type ActivityDraft, flowId } from './activities.ts';

/** The layout's folder inside a workspace. */
export const FLOW_DIR = '.flow';
/** apiVersion of every flow document. */
export const FLOW_API_VERSION = 'flow.synapti.ai/v1';

/** Absolute paths of a run's flow files. */
export function flowPaths(workspace: string, runId: string) {
  const runDir = path.join(path.resolve(workspace), FLOW_DIR, 'runs', runId);
  return {
    runDir,
    runYaml: path.join(runDir, 'run.yaml'),
    activities: path.join(runDir, 'activities'),
    events: path.join(runDir, 'events.jsonl'),
  };
}

/** File name of activity number `n`: `NNN-<id>.yaml` (001, 002, …). */
export function activityFileName(n: number, id: string): string {
  return `${String(n).padStart(3, '0')}-${id}.yaml`;
}

/** Parses an activity file name into its number and id; null for other files. */
export function parseActivityFileName(name: string): { n: number; id: string } | null {
  const m = /^(\d{3,})-([a-z0-9][a-z0-9_-]*)\.yaml$/.exec(name);
  return m ? { n: Number(m[1]), id: m[2]! } : null;
}

/** The FlowActivity document of a draft. */
export function activityDoc(state: Pick<RunState, 'id' | 'workflow'>, a: ActivityDraft) {
  const activity: Record<string, unknown> = { type: a.type, name: a.name, status: a.status };
  if (a.startedAt !== undefined) activity.started_at = a.startedAt;
  activity.completed_at = a.completedAt;
  const doc: Record<string, unknown> = {
    apiVersion: FLOW_API_VERSION,
    kind: 'FlowActivity',
    metadata: { id: a.id, run_id: state.id, workflow: state.workflow.id, phase: a.phase },
    activity,
  };
  if (a.exitCode !== undefined) doc.outputs = { command_exit_code: a.exitCode };
  if (a.summary !== undefined) doc.result = { summary: a.summary };
  return doc;
}

/** flow's run status: `awaiting` is `active`; a failed run is `blocked` (the schema has no failed). */
export function flowStatus(state: RunState): 'active' | 'completed' | 'blocked' | 'cancelled' {
  switch (state.status) {
    case 'active':
    case 'awaiting':
      return 'active';
    case 'blocked':
    case 'failed':
      return 'blocked';
    case 'completed':
      return 'completed';
    case 'cancelled':
      return 'cancelled';
  }
}

/** The reason a blocked flow run shows (`blocked_reason`), or undefined when not blocked. */
export function blockedReason(state: RunState): string | undefined {
  if (state.status === 'blocked') return state.blocked?.reason ?? 'blocked';
  if (state.status === 'failed') return `run failed: ${state.outcome?.reason ?? 'unknown reason'}`;
  return undefined;
}

/** What the workspace's git tells (read by the caller from `.git`), for `context`. */
export interface RepoInfo {
  repo: string;
  branch: string;
}

/** Issue and PR numbers a run id names (`…-issue-42`, `…-pr-7`), when it does. */
export function refsOfRunId(runId: string): { issue?: number; pr?: number } {
  const issue = /-issue-(\d+)(?:-|$)/.exec(runId)?.[1];
  const pr = /-pr-(\d+)(?:-|$)/.exec(runId)?.[1];
  const out: { issue?: number; pr?: number } = {};
  if (issue !== undefined && Number(issue) >= 1) out.issue = Number(issue);
  if (pr !== undefined && Number(pr) >= 1) out.pr = Number(pr);
  return out;
}

/** The lifecycle events kept inline in run.yaml (high-volume ones go to events.jsonl). */
export function lifecycleEvents(
  state: RunState,
): { at: string; type: string; activity?: string }[] {
  const events: { at: string; type: string; activity?: string }[] = [
    { at: state.createdAt, type: 'run_started' },
  ];
  const terminal = terminalEvent(state);
  if (terminal !== null) events.push(terminal);
  return events;
}

/** The terminal event of a run that reached flow's terminal state, else null. */
export function terminalEvent(state: RunState): { at: string; type: string } | null {
  const s = flowStatus(state);
  if (s === 'active') return null;
  return { at: state.updatedAt, type: `run_${s}` };
}

/**
 * The FlowRun document of `state`, merged over `existing` (what run.yaml held: keys written by
 * flow's own tools, such as `limits` or `context.journal`, are kept). `activities` are the ids
 * of the recorded activities in order.
 */
export function runDoc(
  state: RunState,
  activities: readonly string[],
  repo: RepoInfo,
  existing: Record<string, unknown> | null,
): Record<string, unknown> {
  const old = (k: string) => {
    const v = existing?.[k];
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : {};
  };
  const step = state.steps[state.cursor];
  const statePart: Record<string, unknown> = {
    ...old('state'),
    status: flowStatus(state),
    current_phase: flowId(step?.id ?? 'run'),
    completed_activities: [...activities],
  };
  delete statePart.current_activity;
  delete statePart.blocked_reason;
  if (activities.length > 0) statePart.current_activity = activities.at(-1);
  const reason = blockedReason(state);
  if (reason !== undefined) statePart.blocked_reason = reason;
  const doc: Record<string, unknown> = {
    ...(existing ?? {}),
    apiVersion: FLOW_API_VERSION,
    kind: 'FlowRun',
    metadata: {
      ...old('metadata'),
      id: state.id,
      workflow: state.workflow.id,
      created_at: state.createdAt,
    },
    context: { ...old('context'), repo: repo.repo, branch: repo.branch, ...refsOfRunId(state.id) },
    state: statePart,
    events: lifecycleEvents(state),
  };
  return doc;
}

/** YAML text that PyYAML (YAML 1.1) reads back as the same data. */
export function toYaml(doc: unknown): string {
  return stringify(doc, { version: '1.1', lineWidth: 0 });
}
