/**
 * chatops: the chat side of phasebridge. `ChatOps` takes inbound events from every channel
 * (commands, button presses, replies), and follows the orchestrator's run updates to keep each
 * following chat's status message current, post checkpoints and announce run ends.
 *
 *   const chatops = new ChatOps({ orchestrator, repos, channels, log, defaultWorkspace });
 *   await chatops.start();
 *   for (const channel of channels.values()) await channel.start(chatops.handle);
 */

import type { InboundEvent } from '../bridges/events.ts';
import type { ChatRef, MessageOwner } from '../bridges/messages.ts';
import { prose } from '../bridges/render-text.ts';
import { StoppingError } from '../errors.ts';
import { ActivityWatch } from './activity.ts';
import { postAnswers } from './answer-post.ts';
import { CheckpointDigests } from './checkpoint-digest.ts';
import { CheckpointPresses } from './checkpoint-press.ts';
import type { Timers } from './coalescer.ts';
import { type ChatOpsDeps, channelFor, sendTo } from './context.ts';
import { DecisionDisplay } from './decision-display.ts';
import { DEFAULT_INPUT_LIMITS } from './input-files.ts';
import { Notifier } from './notifier.ts';
import type { ChatOpsOptions, RunNotice, RunUpdate } from './ports.ts';
import { CheckpointPresenter } from './presenter.ts';
import { ChatRefusals, type RefusalOutcome } from './refusals.ts';
import { Router } from './router.ts';
import { SessionOffers } from './session-offers.ts';
import { ToolApprovalPresenter } from './tool-approval-presenter.ts';
import { ToolApprovalPresses } from './tool-approval-press.ts';
import { WorkspaceFollower } from './workspace-follower.ts';

export { createPairingCode, PAIRING_TTL_MS } from './pairing.ts';
export type { ChatOpsOptions, ChatOpsOrchestrator, RunUpdate, StepProgress } from './ports.ts';

/** The chatops service: inbound handling plus run notifications. */
export class ChatOps {
  readonly #deps: ChatOpsDeps;
  readonly #notifier: Notifier;
  readonly #presenter: CheckpointPresenter;
  readonly #router: Router;
  readonly #follower: WorkspaceFollower;
  readonly #activity: ActivityWatch;
  readonly #tools: ToolApprovalPresenter;
  readonly #refusals: ChatRefusals;
  readonly #sessions: SessionOffers;
  readonly #decisions: DecisionDisplay;
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
      consoleUrl: options.consoleUrl,
      inputLimits: options.inputLimits ?? DEFAULT_INPUT_LIMITS,
      digests: new CheckpointDigests(),
    };
    this.#refusals = new ChatRefusals(this.#deps);
    this.#notifier = new Notifier(
      this.#deps,
      options.editIntervalMs ?? 1000,
      options.timers,
      this.#refusals,
    );
    this.#presenter = new CheckpointPresenter(this.#deps, this.#refusals);
    this.#follower = new WorkspaceFollower(this.#deps, options.followIntervalMs ?? 500);
    this.#activity = new ActivityWatch(
      this.#deps,
      options.activityIntervalMs ?? 500,
      (runId, stepId, text) => this.#notifier.progress(runId, stepId, text),
    );
    this.#tools = new ToolApprovalPresenter(
      this.#deps,
      async (runId) => this.#notifier.followers(await this.#deps.orchestrator.getRun(runId)),
      options.toolApprovalIntervalMs ?? 1000,
    );
    this.#decisions = new DecisionDisplay(this.#deps, this.#presenter, this.#tools, (r, t, f) =>
      this.#inOrder(r, t, f),
    );
    const toolPresses = new ToolApprovalPresses(this.#deps, this.#tools);
    const presses = new CheckpointPresses(this.#deps, toolPresses, {
      // The person who pressed is looking at the message.
      repeat: (state, row, ref) => this.#presenter.closeStray(state, row, ref, 'interactive'),
      stale: (row) => this.#decisions.closeStale([row], 'interactive'),
    });
    this.#sessions = new SessionOffers(this.#deps, {
      follow: (runId, chat) => this.#notifier.follow(runId, chat),
      showCheckpoint: async (state, chat) => {
        if (state.checkpoint !== null)
          await this.#presenter.repost(state, state.checkpoint, [chat]);
      },
    });
    this.#router = new Router(
      this.#deps,
      presses,
      (runId, chat) => this.#notifier.follow(runId, chat),
      (chat) => this.#refusals.retry(chat),
      this.#sessions,
    );
  }

  /**
   * A platform refused a message that nobody waited for (the outbox delivering what a previous
   * process queued) or whose chat moved: marked, told or re-bound as for a direct send.
   */
  refused(chat: ChatRef, err: unknown): Promise<RefusalOutcome | undefined> {
    return this.#refusals.refused(chat, err);
  }

  /**
   * For the approval MCP server's push (the control socket's `toolWait`): shows tool request
   * `id` in its run's chats now and resolves once it is decided or expired.
   */
  awaitToolDecision(id: string, signal: AbortSignal): Promise<'decided' | 'unknown'> {
    return this.#tools.awaitDecision(id, signal);
  }

  /** The inbound handler to give to each channel's `start()`. */
  readonly handle = (event: InboundEvent): Promise<void> => this.#router.handle(event);

  /**
   * Subscribes to run updates and progress, then catches up on awaiting runs: posts the checkpoint
   * where a chat has no message yet (opened while the bridge was down, or by another process), and
   * re-posts the status and the checkpoint (new token) in chats whose channel's messages did not
   * survive the restart (`durableMessages: false`); `catchUp: false` leaves that to a later
   * `catchUp()`. Call once per process: a second start() after
   * stop() would re-post in those chats again.
   */
  async start(opts: { catchUp?: boolean } = {}): Promise<void> {
    if (this.#unsubscribe.length > 0) return;
    const { orchestrator } = this.#deps;
    this.#unsubscribe = [
      orchestrator.onUpdate((u) => this.#enqueue(u)),
      orchestrator.onProgress((p) => this.#notifier.progress(p.runId, p.stepId, p.text)),
      orchestrator.onNotice((n) => {
        void this.#inOrder(n.runId, () => this.#tell(n), 'chatops: notice not delivered');
      }),
    ];
    this.#follower.start();
    this.#activity.start();
    this.#tools.start();
    if (opts.catchUp !== false) await this.catchUp();
  }

  /**
   * Posts what awaiting runs' chats are missing (see `start`), and announces the bound
   * workspaces' interrupted sessions (session-offers.ts). A bridge calls it once its
   * adapters have started, so nothing is sent to a platform not yet connected.
   */
  async catchUp(): Promise<void> {
    // Decided checkpoints whose message still shows buttons (a crash between the two).
    this.#decisions.closeStale(await this.#openCopies(), 'decision');
    this.#decisions.schedule();
    // Session choices a kill left recorded but unapplied, and closed offers still live.
    await this.#sessions
      .settle()
      .catch((err: unknown) => this.#deps.log.error({ err }, 'chatops: session choices'));
    await this.#catchUpAwaitingRuns();
    await this.#watchActiveRuns();
    // Interrupted coordinator sessions and flow runs of the bound workspaces (issue 14).
    await this.#sessions
      .announce()
      .catch((err: unknown) => this.#deps.log.error({ err }, 'chatops: session announcements'));
  }

  /** Watches the activity of steps already running (started before this process). */
  async #watchActiveRuns(): Promise<void> {
    try {
      for (const run of await this.#deps.orchestrator.listRuns({ status: 'active' })) {
        // In the run's order: an update applied meanwhile is never undone by an older state.
        await this.#inOrder(
          run.id,
          async () => {
            const state = await this.#deps.orchestrator.getRun(run.id);
            this.#activity.track(state, await this.#notifier.followers(state));
          },
          'chatops: running step not watched',
        );
      }
    } catch (err) {
      this.#deps.log.warn({ err }, 'chatops: running steps not watched');
    }
  }

  /** The copies bridge.db has open (their checkpoint may have closed while no process saw it). */
  async #openCopies() {
    try {
      return await this.#deps.repos.checkpointMessages.listOpen();
    } catch (err) {
      this.#deps.log.warn({ err }, 'chatops: open checkpoint copies not read');
      return [];
    }
  }

  /**
   * A checkpoint copy's or session offer copy's send was confirmed (maybe queued by an earlier
   * process, its message id written back just now): if it was decided meanwhile, the copy is
   * edited to show it.
   */
  showDecisions(): void {
    this.#decisions.schedule();
    this.#sessions.display.schedule();
  }

  /**
   * Earlier copies of a send made again after a restart (`refs`, their buttons already taken off
   * by the adapter): a checkpoint copy's repeat shows the decision, or the checkpoint pointing at
   * the copy the bridge edits (closeStray); a session offer's repeat becomes a copy of the offer
   * (it shows the choice once made); other owners' repeats keep their text, buttonless.
   */
  repeatsFound(owner: MessageOwner, refs: readonly string[]): void {
    if (owner.kind === 'offer') {
      void this.#sessions.display
        .repeated(owner.id, refs)
        .catch((err: unknown) =>
          this.#deps.log.warn({ err }, 'chatops: a repeated session offer not recorded'),
        );
      return;
    }
    if (owner.kind !== 'checkpoint') return;
    void (async () => {
      const row = await this.#deps.repos.checkpointMessages.get(owner.id);
      if (row === null) return;
      await this.#inOrder(
        row.runId,
        async () => {
          const state = await this.#deps.orchestrator.getRun(row.runId);
          for (const ref of refs) await this.#presenter.closeStray(state, row, ref, 'decision');
        },
        'chatops: a repeated checkpoint message not put right',
      );
    })().catch((err: unknown) =>
      this.#deps.log.warn({ err }, 'chatops: a repeated checkpoint message not put right'),
    );
  }

  /** Unsubscribes, finishes the updates in hand and delivers pending status edits. */
  async stop(): Promise<void> {
    for (const off of this.#unsubscribe) off();
    this.#unsubscribe = [];
    await this.#follower.stop();
    await this.#activity.stop();
    await this.#tools.stop();
    await this.#decisions.idle();
    await this.#sessions.display.idle();
    await Promise.all(this.#chains.values());
    await this.#notifier.flush();
  }

  /** Applies an update in the run's order; resolves once its messages went out. */
  #enqueue(update: RunUpdate): Promise<void> {
    let cut: StoppingError | undefined;
    const apply = () =>
      this.#apply(update).catch((err: unknown) => {
        if (!(err instanceof StoppingError)) throw err;
        cut = err;
      });
    // A stop that cut the update short rejects, so the feed keeps it for the next start.
    return this.#inOrder(update.runId, apply, 'chatops: run update not applied').then(() => {
      if (cut) throw cut;
    });
  }

  /** Sends a notice about a run to every chat following it. */
  async #tell(notice: RunNotice): Promise<void> {
    const state = await this.#deps.orchestrator.getRun(notice.runId);
    for (const chat of await this.#notifier.followers(state)) {
      await this.#refusals
        .deliver(chat, (to) => sendTo(this.#deps, to, { text: prose(notice.text) }), {
          runId: state.id,
        })
        .catch((err: unknown) => this.#deps.log.warn({ err, chat }, 'chatops: notice not sent'));
    }
  }

  /** Runs `task` after the run's earlier chatops work, so one run's messages change in order. */
  #inOrder(runId: string, task: () => Promise<void>, failure: string): Promise<void> {
    const previous = this.#chains.get(runId) ?? Promise.resolve();
    const next = previous
      .then(task)
      .catch((err: unknown) => {
        // The bridge is stopping: what was queued goes at its next start.
        if (err instanceof StoppingError) this.#deps.log.debug({ runId }, `${failure}: stopping`);
        else this.#deps.log.error({ err, runId }, failure);
      })
      .finally(() => {
        if (this.#chains.get(runId) === next) this.#chains.delete(runId);
      });
    this.#chains.set(runId, next);
    return next;
  }

  async #apply(update: RunUpdate): Promise<void> {
    const chats = await this.#notifier.followers(update.state);
    // Before the answer: no "typing…" once the step's end is seen.
    this.#activity.track(update.state, chats);
    // The agent's answer comes before the checkpoint that asks about it.
    await postAnswers(this.#deps, update.state, update.events, chats);
    await this.#presenter.apply(update.state, update.events, chats);
    // A chat that refused the checkpoint just now is left out of the status too.
    const still = await this.#refusals.reachable(chats);
    await this.#notifier.update(update.state, update.events, still);
  }

  async #catchUpAwaitingRuns(): Promise<void> {
    const { orchestrator, log } = this.#deps;
    let awaiting: { id: string }[];
    try {
      awaiting = await orchestrator.listRuns({ status: 'awaiting' });
    } catch (err) {
      log.error({ err }, 'chatops: could not list awaiting runs');
      return;
    }
    // Through each run's chain: an update arriving meanwhile waits for the catch-up.
    for (const run of awaiting) {
      await this.#inOrder(
        run.id,
        () => this.#catchUp(run.id),
        'chatops: could not catch up on an awaiting run',
      );
    }
  }

  async #catchUp(runId: string): Promise<void> {
    const state = await this.#deps.orchestrator.getRun(runId);
    if (state.status !== 'awaiting') return;
    const chats = await this.#notifier.followers(state);
    const forgetful = chats.filter(
      (c) => channelFor(this.#deps, c)?.capabilities.durableMessages === false,
    );
    if (forgetful.length > 0) await this.#notifier.repost(state, forgetful);
    if (state.checkpoint === null) return;
    if (forgetful.length > 0) await this.#presenter.repost(state, state.checkpoint, forgetful);
    await this.#presenter.post(state, state.checkpoint, chats);
  }
}
