/**
 * Live runs pages: one event stream per open run page (topic = the run id) and per open runs
 * list (topic '*'). A committed change of a run sends `changed` to that run's pages and to the
 * lists; the pages then fetch what they show again, so an event carries no run data.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SseHub } from './sse.ts';

/** The topic of the runs list streams. */
export const ALL_RUNS = '*';

/** The streams of the runs pages. */
export class RunEvents {
  readonly #hub: SseHub;

  constructor(heartbeatMs?: number) {
    this.#hub = new SseHub(heartbeatMs);
  }

  /** Opens a stream for one run's page, or for the list (`ALL_RUNS`). */
  open(req: IncomingMessage, res: ServerResponse, topic: string): void {
    this.#hub.open(req, res, { sessionId: topic, tab: undefined }, []);
  }

  /** Tells the pages of `runId` and the lists that it changed. */
  changed(runId: string): void {
    const e = { event: 'changed', data: { run: runId } };
    this.#hub.sendTo(runId, undefined, e);
    this.#hub.sendTo(ALL_RUNS, undefined, e);
  }

  /** Ends every stream. */
  closeAll(): void {
    this.#hub.closeAll();
  }
}
