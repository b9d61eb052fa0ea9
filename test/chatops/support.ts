/**
 * The whole bridge for chatops stories, built from the real pieces: a temp bridge.db and
 * workspace, the sqlite job queue, the real Orchestrator running the demo agent, the real
 * Telegram adapter against the fake Bot API, and ChatOps. A bridge can be stopped and started
 * again on the same files (a restart).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Logger, pino } from 'pino';
import type { Channel, Platform } from '../../src/bridges/channel.ts';
import { limitsOf, Outbox, OutboxChannel, OutboxStore } from '../../src/bridges/outbox/index.ts';
import { TelegramChannel } from '../../src/bridges/telegram/index.ts';
import { ChatOps } from '../../src/chatops/index.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import { createRepositories, type Repositories } from '../../src/db/repositories/index.ts';
import type { RunState } from '../../src/engine/model.ts';
import { Orchestrator } from '../../src/jobs/orchestrator/orchestrator.ts';
import type { OrchestratorOptions } from '../../src/jobs/orchestrator/types.ts';
import type { JobQueue } from '../../src/jobs/queue/port.ts';
import { createSqliteQueue } from '../../src/jobs/queue/sqlite-driver.ts';
import {
  type FakeChat,
  FakeTelegram,
  type FakeUser,
  type StoredMessage,
} from '../fakes/telegram.ts';
import { slow } from '../support/slowdown.ts';

/** The people of the stories; Alice starts runs, Bob approves, Carol has no role, Dave views. */
export const ALICE: FakeUser = { id: 501, first_name: 'Alice', username: 'alice' };
export const BOB: FakeUser = { id: 502, first_name: 'Bob', username: 'bob' };
export const CAROL: FakeUser = { id: 503, first_name: 'Carol', username: 'carol' };
export const DAVE: FakeUser = { id: 504, first_name: 'Dave', username: 'dave' };
/** The team's group chat (bound) and a chat nobody bound. */
export const TEAM: FakeChat = { id: -1001, type: 'supergroup', title: 'Team' };
export const STRANGERS: FakeChat = { id: -1002, type: 'supergroup', title: 'Strangers' };
export const TEAM_REF = `telegram:${TEAM.id}`;

/** One running bridge process. */
export interface Bridge {
  db: BridgeDb;
  repos: Repositories;
  queue: JobQueue;
  orchestrator: Orchestrator;
  channel: TelegramChannel;
  chatops: ChatOps;
  /** The outbox (with `outbox: true`). */
  outbox?: { outbox: Outbox; store: OutboxStore };
}

/** Options of World.create. */
export interface WorldOptions {
  /**
   * Serve Telegram as a platform that loses its messages on a restart (`durableMessages: false`)
   * would: the bridge re-posts after a restart, while the fake still shows the old messages.
   */
  forgetMessages?: boolean;
  /** The bridge's logger (default: silent). */
  log?: Logger;
  /** The job queue on the bridge's db (default: the embedded sqlite queue). */
  queue?: (db: BridgeDb) => Promise<JobQueue>;
  /** More orchestrator options (`worker: false` for a bridge whose jobs run in `phasebridge worker`s). */
  orchestrator?: Partial<OrchestratorOptions>;
  /** How often ChatOps looks at bridge.db for tool approvals (default: its own). */
  toolApprovalIntervalMs?: number;
  /**
   * Sends and edits through an outbox on bridge.db, paced by Telegram's table, as `serve` does;
   * the fake then enforces Telegram's limits (a call over them is answered 429).
   */
  outbox?: boolean;
}

/** Files and the fake Telegram shared by every bridge of a test. */
export class World {
  readonly dir: string;
  readonly home: string;
  readonly workspace: string;
  readonly fake: FakeTelegram;
  readonly #options: WorldOptions;
  bridge: Bridge | undefined;

  private constructor(dir: string, fake: FakeTelegram, options: WorldOptions) {
    this.dir = dir;
    this.home = path.join(dir, 'home');
    this.workspace = path.join(dir, 'ws');
    this.fake = fake;
    this.#options = options;
    fs.mkdirSync(this.workspace, { recursive: true });
  }

  /** A new world with the team chat bound to the workspace and roles given. */
  static async create(options: WorldOptions = {}): Promise<World> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-chatops-'));
    const fake = await FakeTelegram.start(options.outbox ? { limits: true } : {});
    const world = new World(dir, fake, options);
    world.fake.addChat(TEAM);
    world.fake.addChat(STRANGERS);
    const b = await world.start();
    const binding = await b.repos.bindings.bind({ chatRef: TEAM_REF, workspace: world.workspace });
    const scope = { bindingId: binding.id };
    await b.repos.allowlist.allow(scope, 'telegram', String(ALICE.id), 'operator');
    await b.repos.allowlist.allow(scope, 'telegram', String(BOB.id), 'approver');
    await b.repos.allowlist.allow(scope, 'telegram', String(DAVE.id), 'approver');
    return world;
  }

  /** Starts a bridge on the world's files (the previous one must be stopped). */
  async start(): Promise<Bridge> {
    const db = openBridgeDb({ file: path.join(this.home, 'bridge.db') });
    await migrateToLatest(db);
    const repos = createRepositories(db);
    const log = this.#options.log ?? pino({ level: 'silent' });
    const queue = this.#options.queue
      ? await this.#options.queue(db)
      : createSqliteQueue({ db, pollMs: 10 });
    const orchestrator = await Orchestrator.create({
      db,
      queue,
      log,
      home: this.home,
      worker: { concurrency: 2 },
      ...this.#options.orchestrator,
    });
    const channel = new TelegramChannel({
      token: this.fake.token,
      apiRoot: this.fake.apiRoot,
      commands: [{ command: 'run', description: 'Start a run' }],
      logger: log,
      // As serve wires it: the updates applied are kept in bridge.db, so an update Telegram
      // gives again after a restart (never confirmed before the stop) is not applied twice.
      state: repos.channelState.scope('telegram'),
    });
    let served: Channel = this.#options.forgetMessages ? forgetful(channel) : channel;
    let paced: Bridge['outbox'];
    // Set below: the outbox may confirm a resend before this.bridge is (during the catch-up).
    let ops: ChatOps | undefined;
    if (this.#options.outbox) {
      const store = OutboxStore.open(db.file);
      const outbox = new Outbox({
        store,
        inner: served,
        limits: limitsOf('telegram'),
        // As serve wires it: a confirmed checkpoint send may show a decision taken meanwhile.
        onConfirmed: (owner) => {
          if (owner.kind === 'checkpoint' || owner.kind === 'offer') {
            ops?.showDecisions();
          }
        },
        onRepeats: (owner, refs) => ops?.repeatsFound(owner, refs),
      });
      served = new OutboxChannel(served, outbox);
      paced = { outbox, store };
    }
    const channels = new Map<Platform, Channel>([['telegram', served]]);
    const chatops = new ChatOps({
      orchestrator,
      repos,
      channels,
      log,
      defaultWorkspace: this.workspace,
      editIntervalMs: 5,
      ...(this.#options.toolApprovalIntervalMs !== undefined && {
        toolApprovalIntervalMs: this.#options.toolApprovalIntervalMs,
      }),
    });
    ops = chatops;
    // As serve does with an outbox: the catch-up's sends (offers, checkpoints) once it delivers.
    await chatops.start(this.#options.outbox ? { catchUp: false } : {});
    await served.start(chatops.handle);
    if (this.#options.outbox) await chatops.catchUp();
    this.bridge = {
      db,
      repos,
      queue,
      orchestrator,
      channel,
      chatops,
      ...(paced && { outbox: paced }),
    };
    return this.bridge;
  }

  /** Stops the bridge the way `serve` does on SIGTERM. */
  async stop(): Promise<void> {
    const b = this.bridge;
    if (!b) return;
    this.bridge = undefined;
    await b.channel.stop();
    await b.chatops.stop();
    if (b.outbox) {
      await b.outbox.outbox.stop();
      b.outbox.store.close();
    }
    await b.orchestrator.close();
    await b.queue.close();
    await b.db.close();
  }

  /** Stops everything and removes the files. */
  async cleanup(): Promise<void> {
    await this.stop();
    await this.fake.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** The running bridge. */
  get b(): Bridge {
    if (!this.bridge) throw new Error('no bridge running');
    return this.bridge;
  }

  /** A user sends text in a chat; returns the update (to deliver it again). */
  say(from: FakeUser, text: string, chat: FakeChat = TEAM, replyTo?: number) {
    return this.fake.userSends({ chat, from, text, ...(replyTo !== undefined && { replyTo }) });
  }

  /** The message id of a user message update. */
  static messageIdOf(update: Record<string, unknown>): number {
    return (update.message as { message_id: number }).message_id;
  }

  /** Bot messages in a chat whose text matches. */
  messages(match: RegExp, chat: FakeChat = TEAM): StoredMessage[] {
    return this.fake.botMessages(chat.id).filter((m) => match.test(m.text ?? ''));
  }

  /** Waits for the one bot message matching `match` in a chat. */
  async message(match: RegExp, chat: FakeChat = TEAM): Promise<StoredMessage> {
    await until(() => this.messages(match, chat).length > 0, `a message matching ${match}`);
    return this.messages(match, chat).at(-1)!;
  }

  /** The private answer given to a callback query (a press). */
  async answerTo(update: Record<string, unknown>): Promise<string> {
    const id = String((update.callback_query as { id: string }).id);
    await until(
      () => typeof this.fake.callbackAnswers.get(id)?.text === 'string',
      'a press answer',
    );
    const answer = this.fake.callbackAnswers.get(id)!;
    if (answer.show_alert !== true) throw new Error('the answer was not private (an alert)');
    return String(answer.text);
  }

  /** Presses a labelled button on a message. */
  press(from: FakeUser, message: StoredMessage, label: string) {
    return this.fake.userPresses({
      chatId: message.chat.id,
      messageId: message.message_id,
      from,
      label,
    });
  }

  /** Waits until the run reaches a state matching `done`. */
  async runState(runId: string, done: (s: RunState) => boolean, what: string): Promise<RunState> {
    let state: RunState | undefined;
    await until(async () => {
      state = await this.b.orchestrator.getRun(runId);
      return done(state);
    }, what);
    return state!;
  }
}

/** Polls `check` until it is true; fails with `what` after a generous deadline (not a timing assertion). */
export async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + slow(15_000);
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The Telegram channel presented as one whose messages do not survive a restart. */
function forgetful(inner: TelegramChannel): Channel {
  return {
    platform: inner.platform,
    capabilities: { ...inner.capabilities, durableMessages: false },
    start: (handler) => inner.start(handler),
    stop: () => inner.stop(),
    send: (chatRef, message) => inner.send(chatRef, message),
    edit: (messageRef, message) => inner.edit(messageRef, message),
    answer: (interaction, text, options) => inner.answer(interaction, text, options),
    askForReason: (interaction, prompt) => inner.askForReason(interaction, prompt),
    sendFile: (chatRef, file) => inner.sendFile(chatRef, file),
  };
}
