/**
 * chatops: the chat side of phasebridge. `ChatOps` takes inbound events from every channel
 * (commands, button presses, replies), and follows the orchestrator's run updates to keep each
 * following chat's status message current, post checkpoints and announce run ends.
 *
 *   const chatops = new ChatOps({ orchestrator, repos, channels, log, defaultWorkspace });
 *   await chatops.start();
 *   for (const channel of channels.values()) await channel.start(chatops.handle);
 */
import type { InboundEvent } from '../bridges/channel.ts';
import { CheckpointPresses } from './checkpoint-press.ts';
import type { Timers } from './coalescer.ts';
import type { ChatOpsDeps } from './context.ts';
import { Notifier } from './notifier.ts';
import type { ChatOpsOptions, RunUpdate } from './ports.ts';
import { CheckpointPresenter } from './presenter.ts';
import { Router } from './router.ts';

export { createPairingCode, PAIRING_TTL_MS } from './pairing.ts';
export type { ChatOpsOptions, ChatOpsOrchestrator, RunUpdate, StepProgress } from './ports.ts';

/** The chatops service: inbound handling plus run notifications. */
export class ChatOps {
  readonly #deps: ChatOpsDeps;
  readonly #notifier: Notifier;
  readonly #presenter: CheckpointPresenter;
  readonly #router: Router;
  /** Per run, the tail of its update chain: updates of one run are applied in order. */
  readonly #chains = new Map<string, Promise<void>>();
  #unsubscribe: (() => void)[] = [];

  /** Builds the service; nothing happens until `start()` and the channels deliver events. */
  constructor(options: ChatOpsOptions & { timers?: Timers }) {
    this.#deps = {
      orchestrator: options.orchestrator,
      repos: options.repos,
      channels: options.channels,
      log: options.log,
      clock: options.clock ?? (() => new Date()),
      defaultWorkspace: options.defaultWorkspace,
    };
    this.#notifier = new Notifier(this.#deps, options.editIntervalMs ?? 1000, options.timers);
    this.#presenter = new CheckpointPresenter(this.#deps);
    const presses = new CheckpointPresses(this.#deps);
    this.#router = new Router(this.#deps, presses, (runId, chat) =>
      this.#notifier.follow(runId, chat),
    );
  }

  /** The inbound handler to give to each channel's `start()`. */
  readonly handle = (event: InboundEvent): Promise<void> => this.#router.handle(event);

  /**
   * Subscribes to run updates and progress, then posts the checkpoint of any awaiting run that has
   * no message yet (opened while the bridge was down, or by another process).
   */
  async start(): Promise<void> {
    if (this.#unsubscribe.length > 0) return;
    const { orchestrator } = this.#deps;
    this.#unsubscribe = [
      orchestrator.onUpdate((u) => this.#enqueue(u)),
      orchestrator.onProgress((p) => this.#notifier.progress(p.runId, p.stepId, p.text)),
    ];
    await this.#postMissingCheckpoints();
  }

  /** Unsubscribes, finishes the updates in hand and delivers pending status edits. */
  async stop(): Promise<void> {
    for (const off of this.#unsubscribe) off();
    this.#unsubscribe = [];
    await Promise.all(this.#chains.values());
    await this.#notifier.flush();
  }

  #enqueue(update: RunUpdate): void {
    const previous = this.#chains.get(update.runId) ?? Promise.resolve();
    const next = previous
      .then(() => this.#apply(update))
      .catch((err: unknown) =>
        this.#deps.log.error({ err, runId: update.runId }, 'chatops: run update not applied'),
      )
      .finally(() => {
        if (this.#chains.get(update.runId) === next) this.#chains.delete(update.runId);
      });
    this.#chains.set(update.runId, next);
  }

  async #apply(update: RunUpdate): Promise<void> {
    const chats = await this.#notifier.followers(update.state);
    await this.#presenter.apply(update.state, update.events, chats);
    await this.#notifier.update(update.state, update.events, chats);
  }

  async #postMissingCheckpoints(): Promise<void> {
    const { orchestrator, log } = this.#deps;
    try {
      for (const run of await orchestrator.listRuns({ status: 'awaiting' })) {
        const state = await orchestrator.getRun(run.id);
        if (state.checkpoint === null) continue;
        const chats = await this.#notifier.followers(state);
        await this.#presenter.post(state, state.checkpoint, chats);
      }
    } catch (err) {
      log.error({ err }, 'chatops: could not post checkpoints of awaiting runs');
    }
  }
}
