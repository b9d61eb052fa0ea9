/** The fields every event of a run's ledger has (events.ts lists the events). */

/** Fields every event has. */
export interface EventBase {
  /** ISO time (the time of the command that produced it). */
  at: string;
}
