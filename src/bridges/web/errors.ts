/**
 * Errors of the web console: a message the console does not hold, and how any error is answered
 * to the page (status + a message safe to show: internal details stay in the log).
 */
import { describeError, NotFoundError } from '../../errors.ts';
import { httpStatusOf } from '../../http/respond.ts';

/** An edit of a message the console no longer holds (it restarted, or the message aged out). */
export function messageNotHeld(ref: string): NotFoundError {
  return new NotFoundError(
    `web console message ${ref} is not held any more (the bridge restarted or it aged out)`,
  );
}

/** The status and the public text of an error answered to the page. */
export function apiError(err: unknown): { status: number; message: string } {
  return { status: httpStatusOf(err), message: describeError(err).chatReply };
}
