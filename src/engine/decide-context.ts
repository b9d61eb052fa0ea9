/**
 * The working context of one decide() call: events are folded as they are emitted so later rules
 * see the state they produce. Pure: evolve() copies, nothing outside is touched.
 */

import type { Command } from './commands.ts';
import type { Effect, Rejection, RunEvent } from './events.ts';
import { evolve } from './evolve.ts';
import type { Actor, RunState } from './model.ts';
import { personName } from './person-name.ts';

/** An event before the context stamps its time. */
export type EventDraft = RunEvent extends infer E
  ? E extends RunEvent
    ? Omit<E, 'at'>
    : never
  : never;

/** Thrown inside decide rules to refuse a command; decide() turns it into a Rejection. */
export class CommandRejected extends Error {
  readonly rejection: Rejection;
  constructor(code: Rejection['code'], message: string) {
    super(message);
    this.rejection = { code, message };
  }
}

/** Refuses the command with ILLEGAL_TRANSITION (or the given code). */
export function refuse(message: string, code: Rejection['code'] = 'ILLEGAL_TRANSITION'): never {
  throw new CommandRejected(code, message);
}

/** Accumulates the events and effects of one command. */
export class DecideContext {
  state: RunState;
  readonly events: RunEvent[] = [];
  readonly effects: Effect[] = [];
  readonly at: string;
  readonly actor: Actor;

  constructor(state: RunState, command: Command, initial: RunEvent[] = []) {
    this.state = state;
    this.at = command.at;
    this.actor = command.actor;
    this.events.push(...initial);
  }

  /** Records an event (stamped with the command's time) and folds it into `state`. */
  emit(draft: EventDraft): void {
    const event = { ...draft, at: this.at } as RunEvent;
    this.state = evolve(this.state, event);
    this.events.push(event);
  }

  /** Records an effect for the caller. */
  effect(effect: Effect): void {
    this.effects.push(effect);
  }
}

/** How an actor is named in messages (see personName). */
export function who(actor: Actor): string {
  return personName(actor);
}
