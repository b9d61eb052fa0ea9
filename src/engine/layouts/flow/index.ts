/**
 * The `flow` layout: a run projected into `<workspace>/.flow/runs/<run id>/` as flow's run-state
 * skill writes it (seed 003): `run.yaml` (FlowRun), `activities/NNN-<id>.yaml` (one FlowActivity
 * per phase boundary, numbered, never rewritten) and `events.jsonl` (run_started,
 * activity_recorded with seq and path, session_end, the terminal event).
 *
 * Write discipline: every file goes to a temp file and is renamed into place; nothing is opened
 * through a symlink (O_NOFOLLOW, checked from the workspace down). The files are staged in the
 * commit's batch before its ledger line is written and put in place once the line is durable.
 * No lock file of its own (issue 31): the run's lock (`.phasebridge/runs/<id>/lock`, held by the
 * RunStore while the run is open) already excludes every other writer of `.flow/runs/<id>/`, and
 * flow's helper locks with flock, which such files never excluded (docs/flow.md). Projection
 * is idempotent: an activity's id carries its event's seq, so a repeat after a crash finds it
 * written, and events.jsonl gets only the lines it is missing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { RunEvent } from '../../events.ts';
import { evolve } from '../../evolve.ts';
import type { DurableBatch } from '../../ledger/durable-batch.ts';
import {
  ensureDirInside,
  lstatNoSymlink,
  readTextInside,
  STATE_FILE_MODE,
} from '../../ledger/safe-path.ts';
import type { RunState } from '../../model.ts';
import { fileIdentity, knownFile, rememberFile } from '../known-files.ts';
import { type LayoutProjection, type ProjectionContext, projectThrough } from '../port.ts';
import { type ActivityDraft, activityOf } from './activities.ts';
import { eventsText, readEventsJsonl } from './events-file.ts';
import {
  activityDoc,
  activityFileName,
  flowPaths,
  parseActivityFileName,
  type RepoInfo,
  runDoc,
  terminalEvent,
  toYaml,
} from './format.ts';

export { flowLawViolation } from './laws.ts';

/** The activities (and interruptions) the projected events record, with their seqs. */
function draftsOf(state: RunState, ctx: ProjectionContext, dirMissing: boolean) {
  const useHistory =
    ctx.history !== undefined && (ctx.rebuild || (dirMissing && ctx.previous !== null));
  const events: readonly RunEvent[] = useHistory ? ctx.history!() : ctx.events;
  let before: RunState | null = useHistory ? null : ctx.previous;
  let seq = state.seq - events.length;
  const drafts: ActivityDraft[] = [];
  const interrupted: { seq: number; at: string; stepId: string }[] = [];
  for (const e of events) {
    seq++;
    const d = activityOf(e, seq, before);
    if (d !== null) drafts.push(d);
    if (e.type === 'stepInterrupted') interrupted.push({ seq, at: e.at, stepId: e.stepId });
    before = before === null && e.type !== 'runStarted' ? null : evolve(before, e);
  }
  return { drafts, interrupted };
}

/** Recorded activities in number order. */
function listActivities(dir: string): { n: number; id: string; file: string }[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .flatMap((name) => {
      const p = parseActivityFileName(name);
      return p ? [{ ...p, file: name }] : [];
    })
    .sort((a, b) => a.n - b.n);
}

/**
 * Stages the activities not recorded yet; returns every recorded one, in number order, the new
 * ones included (numbered after the highest in the folder: the run's lock keeps them ours).
 */
function writeActivities(
  workspace: string,
  state: RunState,
  dir: string,
  drafts: ActivityDraft[],
  io: DurableBatch,
): { n: number; id: string; file: string }[] {
  ensureDirInside(workspace, dir);
  const existing = listActivities(dir);
  if (drafts.length === 0) return existing;
  const all = [...existing];
  const ids = new Set(existing.map((a) => a.id));
  let n = existing.at(-1)?.n ?? 0;
  for (const d of drafts) {
    if (ids.has(d.id)) continue;
    n++;
    const name = activityFileName(n, d.id);
    io.writeFile(path.join(dir, name), toYaml(activityDoc(state, d)), {
      root: workspace,
      mode: STATE_FILE_MODE,
    });
    all.push({ n, id: d.id, file: name });
    ids.add(d.id);
  }
  return all;
}

/** events.jsonl's text and its parsed lines. */
interface KnownEvents {
  existing: string | null;
  lines: Record<string, unknown>[];
}

/** events.jsonl's text and parsed lines (from memory when the file is as we last saw it). */
function readEvents(workspace: string, file: string) {
  const known = knownFile<KnownEvents>(file);
  if (known !== undefined) return known.value;
  const before = fileIdentity(file);
  const existing = readTextInside(workspace, file);
  const lines = readEventsJsonl(existing ?? '');
  if (existing !== null) {
    rememberFile(file, Buffer.byteLength(existing), { existing, lines }, before);
  }
  return { existing, lines };
}

/** Appends the events.jsonl lines it is missing (idempotent), once the batch publishes. */
function appendEvents(
  workspace: string,
  state: RunState,
  file: string,
  activities: { n: number; id: string; file: string }[],
  interrupted: { seq: number; at: string; stepId: string }[],
  io: DurableBatch,
) {
  const { existing, lines } = readEvents(workspace, file);
  const has = (type: string, pred: (l: Record<string, unknown>) => boolean = () => true) =>
    lines.some((l) => l.type === type && pred(l));
  const out: Record<string, unknown>[] = [];
  if (!has('run_started'))
    out.push({
      type: 'run_started',
      at: state.createdAt,
      run_id: state.id,
      workflow: state.workflow.id,
    });
  for (const a of activities) {
    const rel = `activities/${a.file}`;
    if (!has('activity_recorded', (l) => l.path === rel)) {
      out.push({
        type: 'activity_recorded',
        at: state.updatedAt,
        seq: a.n,
        activity: a.id,
        path: rel,
      });
    }
  }
  for (const i of interrupted) {
    if (!has('session_end', (l) => l.ledger_seq === i.seq)) {
      out.push({
        type: 'session_end',
        at: i.at,
        ledger_seq: i.seq,
        phase: i.stepId,
        next_action: 'resume',
      });
    }
  }
  const terminal = terminalEvent(state);
  if (terminal !== null && !has(terminal.type)) {
    out.push({
      ...terminal,
      ...(state.status === 'blocked' || state.status === 'failed'
        ? { reason: state.blocked?.reason ?? state.outcome?.reason }
        : {}),
    });
  }
  const appended = eventsText(existing, out);
  if (appended === '') return;
  io.append(file, appended, { root: workspace, mode: STATE_FILE_MODE });
  io.onSettle((published) => {
    if (!published) return;
    // What a reader parses back from the lines just written (undefined fields are dropped).
    const parsed = out.map((l) => JSON.parse(JSON.stringify(l)) as Record<string, unknown>);
    const text = (existing ?? '') + appended;
    rememberFile(file, Buffer.byteLength(text), { existing: text, lines: [...lines, ...parsed] });
  });
}

/** Repository and branch of the workspace, read from `.git` (no git process); safe defaults. */
export function repoInfo(workspace: string): RepoInfo {
  const fallback = { repo: path.basename(workspace), branch: 'unknown' };
  const gitDir = path.join(workspace, '.git');
  const st = lstatNoSymlink(gitDir);
  if (st === null || !st.isDirectory()) return fallback;
  let branch = fallback.branch;
  let repo = fallback.repo;
  try {
    const head = readTextInside(workspace, path.join(gitDir, 'HEAD'))?.trim() ?? '';
    const m = /^ref: refs\/heads\/(.+)$/.exec(head);
    branch = m ? m[1]! : head === '' ? branch : 'HEAD';
    const config = readTextInside(workspace, path.join(gitDir, 'config')) ?? '';
    const origin = /\[remote "origin"\][^[]*?url\s*=\s*(\S+)/.exec(config)?.[1];
    const slug = origin && /[:/]([^/:]+\/[^/]+?)(?:\.git)?$/.exec(origin)?.[1];
    if (slug) repo = slug;
  } catch {
    // An unreadable .git (a planted link) leaves the defaults: context is informational.
  }
  return { repo, branch };
}

/** run.yaml's text parsed for the merge; unreadable YAML is replaced (the run's own facts are ours). */
function parseRunYaml(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const doc = parse(text, { version: '1.1' }) as unknown;
    return doc !== null && typeof doc === 'object' && !Array.isArray(doc)
      ? (doc as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** run.yaml as last seen: its text, parsed document and, when we wrote it, its source's JSON. */
interface KnownRunYaml {
  text: string;
  doc: Record<string, unknown> | null;
  json: string | null;
}

/** Stages run.yaml when its document changed, merged over what the file holds. */
function writeRunYaml(
  workspace: string,
  state: RunState,
  p: ReturnType<typeof flowPaths>,
  activities: readonly string[],
  io: DurableBatch,
): void {
  const repo = repoInfo(workspace);
  const known = knownFile<KnownRunYaml>(p.runYaml);
  // Unchanged since our own last write and the same document again: nothing to do.
  if (known?.value.json != null) {
    const doc = runDoc(state, activities, repo, known.value.doc);
    if (JSON.stringify(doc) === known.value.json) return;
  }
  let existing: Record<string, unknown> | null;
  let current: string | null;
  if (known !== undefined) {
    existing = known.value.doc;
    current = known.value.text;
  } else {
    const before = fileIdentity(p.runYaml);
    current = readTextInside(workspace, p.runYaml);
    existing = parseRunYaml(current);
    if (current !== null) {
      const seenNow = { text: current, doc: existing, json: null };
      rememberFile(p.runYaml, Buffer.byteLength(current), seenNow, before);
    }
  }
  const doc = runDoc(state, activities, repo, existing);
  const text = toYaml(doc);
  if (current !== text) {
    io.writeFile(p.runYaml, text, { root: workspace, mkdirs: true, mode: STATE_FILE_MODE });
  }
  io.onSettle((published) => {
    if (!published) return;
    // Parsed back from the text, so that the next merge starts from what a reader sees.
    const written = { text, doc: parseRunYaml(text), json: JSON.stringify(doc) };
    rememberFile(p.runYaml, Buffer.byteLength(text), written);
  });
}

function projectFlow(state: RunState, ctx: ProjectionContext, io: DurableBatch): void {
  const workspace = path.resolve(ctx.workspace);
  const p = flowPaths(workspace, state.id);
  const dirMissing = lstatNoSymlink(p.activities) === null;
  const { drafts, interrupted } = draftsOf(state, ctx, dirMissing);
  const activities = writeActivities(workspace, state, p.activities, drafts, io);
  appendEvents(workspace, state, p.events, activities, interrupted, io);
  const ids = activities.map((a) => a.id);
  writeRunYaml(workspace, state, p, ids, io);
}

/** The flow layout projection. */
export const flowLayout: LayoutProjection = Object.freeze({
  name: 'flow',
  stages: true,
  project: (state: RunState, ctx: ProjectionContext) =>
    projectThrough(ctx, (io) => projectFlow(state, ctx, io)),
});
