/**
 * Binding a checkpoint's approval to its content, at the edge: the digest is recorded in the run
 * when the message is posted, and checked again on Approve. A mismatch is refused out loud and
 * recorded as the new digest, which edits every copy of the message to the new version; the
 * next press approves that version (see docs/workflows.md, "Approvals bound to content").
 */
import type { CheckpointState, RunState } from '../engine/model.ts';
import { SYSTEM_ACTOR } from '../engine/model.ts';
import { stepLogPath } from '../jobs/orchestrator/run-files.ts';
import { changesFilePath, gitChanges, writeChangesFile } from '../jobs/runner/git-changes.ts';
import { type CheckpointDigests, type ContentDigest, changeWords } from './checkpoint-digest.ts';
import type { ChatOpsDeps } from './context.ts';

/** Records `d` as the open checkpoint's digest; the checkpoint as the run now has it. */
export async function recordDigest(
  deps: ChatOpsDeps,
  runId: string,
  cp: CheckpointState,
  d: ContentDigest,
  change?: string,
): Promise<CheckpointState> {
  deps.digests?.remember(runId, cp.id, d);
  const result = await deps.orchestrator.command(
    runId,
    `digest:${cp.id}:${cp.digest ?? 'first'}:${d.digest}`,
    {
      type: 'recordCheckpointDigest',
      checkpointId: cp.id,
      digest: d.digest,
      label: d.label,
      actor: SYSTEM_ACTOR,
      ...(change !== undefined ? { change } : {}),
    },
  );
  const open = result.ok ? result.state.checkpoint : null;
  return open?.id === cp.id ? open : { ...cp, digest: d.digest, digestLabel: d.label };
}

/** The open checkpoint with its digest recorded (computed now when it has none). */
export async function withDigest(
  deps: ChatOpsDeps,
  state: RunState,
  cp: CheckpointState,
): Promise<CheckpointState> {
  const digests = deps.digests;
  if (digests === undefined || cp.digest !== undefined || state.checkpoint?.id !== cp.id) return cp;
  try {
    return await recordDigest(deps, state.id, cp, await digests.compute(state, cp));
  } catch (err) {
    deps.log.warn({ err, runId: state.id, checkpoint: cp.id }, 'chatops: no checkpoint digest');
    return cp;
  }
}

/** What a press may approve: the digest it is bound to, or the refusal in words. */
export type DigestCheck = { ok: true; digest: string; label: string } | { ok: false; text: string };

/**
 * Computes the open checkpoint's digest again for an Approve. Unchanged (or none recorded): the
 * press is bound to it. Changed: the step's changed-files list is refreshed, the new digest is
 * recorded (the copies are edited to show it) and the press is refused, naming what changed.
 */
export async function checkDigest(
  deps: ChatOpsDeps,
  state: RunState,
  cp: CheckpointState,
): Promise<DigestCheck | undefined> {
  const digests = deps.digests;
  if (digests === undefined) return undefined;
  const now = await digests.compute(state, cp);
  if (cp.digest === undefined || cp.digest === now.digest) {
    if (cp.digest === undefined) await recordDigest(deps, state.id, cp, now);
    return { ok: true, digest: now.digest, label: now.label };
  }
  const fresh = await refreshed(deps, digests, state, cp, now);
  const change = changeWords(digests.partsOf(state.id, cp.id), fresh.parts);
  await recordDigest(deps, state.id, cp, fresh, change);
  return {
    ok: false,
    text: `${change} after this message was posted. The checkpoint now shows the new version (${fresh.label}): look at it, then press Approve again.`,
  };
}

/** The digest after the step's changed-files list was listed again (new content, new list). */
async function refreshed(
  deps: ChatOpsDeps,
  digests: CheckpointDigests,
  state: RunState,
  cp: CheckpointState,
  now: ContentDigest,
): Promise<ContentDigest> {
  const step = state.steps.find((s) => s.id === cp.stepId);
  if (step === undefined || step.attempt === 0 || !now.changes?.base) return now;
  const listed = await gitChanges(state.workspace, now.changes.base);
  if (typeof listed === 'string') return now;
  const note = now.changes.note;
  try {
    const log = stepLogPath(state.workspace, state.id, step.id, step.attempt);
    const file = changesFilePath(log, step.id, step.attempt);
    writeChangesFile(state.workspace, file, note === undefined ? listed : { ...listed, note });
  } catch (err) {
    deps.log.warn({ err, runId: state.id }, 'chatops: could not list the changed files again');
    return now;
  }
  return digests.compute(state, cp);
}
