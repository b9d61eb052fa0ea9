/**
 * An inbound event this process must not apply at all: a newer leader took over (its fencing
 * token moved on). The adapter then leaves the event for the process that leads now, as if it
 * had never arrived here: not recorded as applied, not confirmed, not answered.
 */

/** Thrown by an inbound handler that declines an event (see the module's comment). */
export class UpdateDeclined extends Error {
  override readonly name = 'UpdateDeclined';
}

/** True when `err` (or the error a framework wrapped it in, as grammY's BotError) declines. */
export function isDeclined(err: unknown): boolean {
  if (err instanceof UpdateDeclined) return true;
  const inner = (err as { error?: unknown } | null)?.error;
  return inner instanceof UpdateDeclined;
}
