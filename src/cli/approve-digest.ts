/**
 * `phasebridge approve`'s content binding (issue 36): the open checkpoint's digest is computed
 * here, as chat does on a press. `--digest <short|full>` must be a prefix of it, or the approval
 * is refused; without it, on a terminal, the CLI prints what it approves. Content changed since
 * the checkpoint was shown is recorded as its new version (chat copies show it) and refused
 * unless `--digest` names that new version.
 */
import { SYSTEM_ACTOR } from '../engine/model.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import type { RunControl } from './drive.ts';

/** What `approve` passes on: the digest the approval is bound to (none when no checkpoint is open). */
export async function approvalDigest(
  control: RunControl,
  runId: string,
  opts: { digest?: string; checkpoint?: string },
  out: { isTTY: boolean; write(text: string): void } = {
    isTTY: process.stdout.isTTY === true,
    write: (t) => process.stdout.write(t),
  },
): Promise<string | undefined> {
  const given = opts.digest?.trim().toLowerCase();
  if (given !== undefined && !/^[0-9a-f]{6,64}$/.test(given)) {
    throw new InvalidInputError(
      `--digest takes the checkpoint's digest as its message shows it (6 to 64 hex digits), not '${opts.digest}'`,
    );
  }
  const state = await control.getRun(runId);
  const cp = state.checkpoint;
  // No open checkpoint (or another one named): the engine refuses the approval in its words.
  if (cp === null || (opts.checkpoint !== undefined && opts.checkpoint !== cp.id)) return undefined;
  const { CheckpointDigests, changeWords } = await import('../chatops/checkpoint-digest.ts');
  const now = await new CheckpointDigests().compute(state, cp);
  if (given !== undefined && !now.digest.startsWith(given)) {
    throw new ConflictError(
      `checkpoint ${cp.id} of run ${runId} is now ${now.label} (sha256 ${now.digest}), not the ${given} you approve: look at it again`,
    );
  }
  if (cp.digest !== undefined && cp.digest !== now.digest) {
    const change = changeWords(undefined, now.parts);
    await control.command(runId, `digest:${cp.id}:${cp.digest}:${now.digest}`, {
      type: 'recordCheckpointDigest',
      checkpointId: cp.id,
      digest: now.digest,
      label: now.label,
      change,
      actor: SYSTEM_ACTOR,
    });
    if (given === undefined) {
      throw new ConflictError(
        `${change} after checkpoint ${cp.id} was shown (it showed ${cp.digestLabel ?? cp.digest.slice(0, 6)}, it is now ${now.label}): look at it again, then approve with --digest ${now.digest.slice(0, 6)}`,
      );
    }
  }
  if (given === undefined && out.isTTY) {
    out.write(
      `approving checkpoint ${cp.id} of run ${runId}: ${now.label} (sha256 ${now.digest})\n`,
    );
  }
  return now.digest;
}
