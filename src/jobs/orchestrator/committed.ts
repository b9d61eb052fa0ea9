/** A commit's result as a state or an error; apart so the CLI reaches it without the engine. */
import type { RunState } from '../../engine/model.ts';
import type { CommitResult } from '../../engine/store/types.ts';
import {
  IllegalTransitionError,
  InvalidInputError,
  NotFoundError,
  UnauthorizedError,
} from '../../errors.ts';

/** The state after an accepted commit; a refusal becomes its error of the one hierarchy. */
export function committed(result: CommitResult): RunState {
  if (result.ok) return result.state;
  const { code, message } = result.rejection;
  switch (code) {
    case 'NOT_FOUND':
      throw new NotFoundError(message);
    case 'UNAUTHORIZED':
      throw new UnauthorizedError(message);
    case 'INVALID_INPUT':
      throw new InvalidInputError(message);
    case 'ILLEGAL_TRANSITION':
      throw new IllegalTransitionError(message);
  }
}
