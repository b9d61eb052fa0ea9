/**
 * What every platform offers the contract stories: a person sends a command, presses a button,
 * gives a reason, and reads the bot's messages in the bound chat, each over the platform's fake
 * (or, for the web console, over real HTTP). The stories speak only this interface, so one story
 * runs unchanged on Telegram, Slack, Discord and the web console.
 */

import type { RunningBridge } from '../../src/app/bridge.ts';
import type { Platform } from '../../src/bridges/channel.ts';
import { slow } from '../support/slowdown.ts';

/** The people of the stories: Alice starts runs, Bob and Dave approve, Carol has no role. */
export type Persona = 'alice' | 'bob' | 'carol' | 'dave';

/** A bot message in the bound chat as a person sees it now. */
export interface SeenMessage {
  /** The platform's id of the message (stable across edits). */
  readonly id: string;
  /** Visible text without markup; fields read `Label: value`, one a line. */
  readonly text: string;
  /** Labels of the buttons it shows now. */
  readonly buttons: readonly string[];
  /** True once it was edited in place. */
  readonly edited: boolean;
}

/** One press of a button; only the driver that made it reads `handle`. */
export interface Press {
  /** Who pressed. */
  readonly persona: Persona;
  /** The pressed button's label. */
  readonly label: string;
  /** Driver-private: what the driver needs to find the answer and the prompt. */
  readonly handle: unknown;
}

/** A file a person attaches to a message. */
export interface AttachedFile {
  readonly name: string;
  readonly data: Buffer;
  /** Sent as a photo where the platform tells photos apart (Telegram). */
  readonly photo?: boolean;
}

/** A file the bot uploaded to the bound chat. */
export interface SeenFile {
  readonly name: string;
  readonly data: Buffer;
  /** The caption or message text that came with it, without markup. */
  readonly caption: string;
}

/** One platform, driven through its fake. */
export interface PlatformDriver {
  /** The platform the bridge serves through this driver's fake. */
  readonly platform: Platform;
  /**
   * True when the platform has one person only (the web console's local admin): every persona is
   * that person, so stories needing a second person let them act from outside the chat.
   */
  readonly singleUser: boolean;
  /** The chat the stories bind to the workspace. */
  readonly chatRef: string;
  /** Bridge settings (env names of the config schema) pointing the bridge at the fake. */
  env(): Record<string, string>;
  /** Called after each bridge start (log in, point webhooks at the new port...). */
  attach(bridge: RunningBridge): Promise<void>;
  /** The platform's immutable user id of a persona (for the allowlist). */
  userId(who: Persona): string;
  /** How the bridge names a persona in messages (`@bob`, `Bob`...). */
  displayName(who: Persona): string;
  /** `who` sends a chatops command, e.g. `run demo add login` (no slash, no bot name). */
  sendCommand(who: Persona, text: string): Promise<void>;
  /** Like sendCommand, but the platform delivers the same event twice (a retry). */
  deliverTwice(who: Persona, text: string): Promise<void>;
  /** The bot's messages in the bound chat, oldest first, as they read now. */
  latestMessages(): SeenMessage[];
  /** `who` presses the button labelled `label` on a message. */
  press(who: Persona, message: SeenMessage, label: string): Promise<Press>;
  /** The private answer the presser got (waits for it). */
  answerTo(press: Press): Promise<string>;
  /** The presser answers the reason prompt their press opened (reply, modal or inline prompt). */
  replyReason(press: Press, text: string): Promise<void>;
  /**
   * `who` replies to one of the bot's messages (guidance for its run): a Telegram reply, a Slack
   * thread reply, a Discord reply; absent where the adapter does not receive replies.
   */
  replyTo?(who: Persona, message: SeenMessage, text: string): Promise<void>;
  /**
   * What the bot told `who` privately outside a button press (Slack ephemerals, Discord DMs),
   * oldest first; absent where the platform has no such path (answers go to the chat).
   */
  privateNotices?(who: Persona): string[];
  /**
   * The bot's messages in the thread of `message`: Slack's thread under it (`thread_ts`),
   * Telegram's replies to it (`reply_to_message`), Discord's thread opened on it; absent where the
   * platform has no threads (the console: the run page shows answers, see `runPage`).
   */
  repliesTo?(message: SeenMessage): SeenMessage[];
  /** How many "typing…" indicators the bot showed in the chat; absent where it shows none. */
  typingShown?(): number;
  /** The run page's sections as JSON (the console only). */
  runPage?(runId: string): Promise<Record<string, string>>;
  /** `who` sends a chatops command with a file attached (platforms that carry files). */
  sendCommandWithFile?(who: Persona, text: string, file: AttachedFile): Promise<void>;
  /** `who` replies to a bot message with a file attached (guidance; where replies carry files). */
  replyToWithFile?(
    who: Persona,
    message: SeenMessage,
    text: string,
    file: AttachedFile,
  ): Promise<void>;
  /**
   * `who` edits the last message they sent through this driver (a command or a reply) to read
   * `text` (written as they would type it: a command without its slash); absent on the console.
   */
  editLast?(who: Persona, text: string): Promise<void>;
  /**
   * `who` edits the last command they sent to the command `text` (no slash), where the platform
   * lets a command's author edit it (Telegram); absent elsewhere (slash commands are not edited).
   */
  editCommand?(who: Persona, text: string): Promise<void>;
  /** `who` writes the bot's mention alone (`@phasebridge`) in the chat; absent on the console. */
  mentionBot?(who: Persona): Promise<void>;
  /** The files the bot uploaded to the bound chat, oldest first. */
  sentFiles?(): Promise<SeenFile[]>;
  /** Stops the fake. */
  close(): Promise<void>;
}

/** Polls `check` until true; fails naming `what` after a generous deadline (not a timing assertion). */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  deadlineMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + slow(deadlineMs);
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Polls `probe` until it returns a value; fails naming `what` after the deadline. */
export async function waitFor<T>(probe: () => T | undefined, what: string): Promise<T> {
  let value: T | undefined;
  await until(() => {
    value = probe();
    return value !== undefined;
  }, what);
  return value as T;
}

/**
 * The labels of an open checkpoint offering every answer, as `d`'s platform shows them: Slack and
 * Discord, which open modals, add "Approve with comment" beside Approve.
 */
export function checkpointButtonsOn(d: Pick<PlatformDriver, 'platform'>): string[] {
  const comment = d.platform === 'slack' || d.platform === 'discord';
  return ['Approve', ...(comment ? ['Approve with comment'] : []), 'Request changes', 'Reject'];
}
