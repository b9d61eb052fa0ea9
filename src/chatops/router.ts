/**
 * Routes inbound events: a duplicate delivery is dropped; a command is parsed, authorized, handled
 * and audited, and its answer posted in the chat; presses and replies go to the checkpoint side;
 * an edit of a message is never applied, and answered when that message was for us (edits.ts).
 * In an unbound chat only `whoami`, `help`, `pair`, `console` and `link` work; any other known verb gets one short
 * answer saying how to pair (and is audited). An unknown command there is answered ("did you
 * mean", how to pair) in a private chat or when addressed to us, and plain text in a private chat
 * gets what the bot is; both at most once a minute per chat (unbound-hints.ts). In groups an
 * unaddressed unknown command and plain text stay silent, as other bots' commands would. User mistakes (typos, bad arguments, refused input) are logged at info, one line.
 */
import type { ButtonPress, Command, DirectText, InboundEvent } from '../bridges/events.ts';
import type { OutgoingMessage } from '../bridges/messages.ts';
import type { Platform } from '../bridges/refs.ts';
import { ROLES } from '../db/repositories/index.ts';
import { describeError, PhasebridgeError } from '../errors.ts';
import { decideAccess, refusalText } from './authorize.ts';
import type { CheckpointPresses } from './checkpoint-press.ts';
import {
  accessOfEvent,
  alreadyAudited,
  audit,
  type ChatOpsDeps,
  channelFor,
  postReply,
  resolveAccess,
} from './context.ts';
import { RecentKeys } from './dedupe.ts';
import { handleEdit } from './edits.ts';
import { argumentText, failureText, type ParsedCommand, parseCommand } from './grammar.ts';
import { handleGuidanceReply } from './guidance.ts';
import { agentsCommand, allowCommand, bindCommand, denyCommand } from './handlers/admin.ts';
import { answerCommand } from './handlers/answer.ts';
import { accessCommand, bindingsCommand, unbindCommand } from './handlers/bindings.ts';
import { consoleCommand } from './handlers/console.ts';
import { controlCommand } from './handlers/control.ts';
import { diffCommand } from './handlers/diff.ts';
import { helpCommand, whoamiCommand } from './handlers/info.ts';
import { linkCommand } from './handlers/link.ts';
import { phaseCommand } from './handlers/phase.ts';
import { promptCommand } from './handlers/prompt.ts';
import { repairCommand } from './handlers/repair.ts';
import { runCommand, runsCommand, statusCommand, workflowsCommand } from './handlers/runs.ts';
import { sessionsCommand } from './handlers/sessions.ts';
import { type CommandContext, type HandlerResult, text } from './handlers/types.ts';
import { pairCommand } from './pairing.ts';
import { SessionOffers } from './session-offers.ts';
import { introText, pairingHint, UnboundHints, unknownInUnboundText } from './unbound-hints.ts';

/** Verbs with effects outside the engine's ledger: deduplicated through the audit table too. */
// `sessions` posts offers: redelivered after a restart, it would offer each session again.
const AUDIT_DEDUPED = new Set(['bind', 'allow', 'deny', 'pair', 'unbind', 'link', 'sessions']);

/** The one answer to a command in a chat nobody bound. */
export function unboundText(platform: Platform): string {
  return `This chat is not bound. ${pairingHint(platform)}`;
}

/** Errors that are the user's mistake, not the bridge's: logged at info without a stack. */
const USER_ERRORS = new Set(['INVALID_INPUT', 'NOT_FOUND', 'UNAUTHORIZED', 'ILLEGAL_TRANSITION']);

/** Turns inbound events into handled, audited actions. */
export class Router {
  readonly #deps: ChatOpsDeps;
  readonly #presses: CheckpointPresses;
  readonly #follow: (runId: string, chat: string) => void;
  readonly #retryChat: (chat: string) => Promise<void>;
  readonly #recent = new RecentKeys();
  readonly #sessions: SessionOffers | undefined;
  readonly #hints = new UnboundHints();

  /**
   * `follow` makes a chat follow a run (the notifier's); `retryChat` tries a chat marked
   * unreachable again, called when an operator (or a stronger role) acts in it; `sessions`
   * offers interrupted sessions (the `sessions` verb and its buttons).
   */
  constructor(
    deps: ChatOpsDeps,
    presses: CheckpointPresses,
    follow: (runId: string, chat: string) => void,
    retryChat: (chat: string) => Promise<void> = async () => {},
    sessions?: SessionOffers,
  ) {
    this.#deps = deps;
    this.#sessions = sessions;
    this.#presses = presses;
    this.#follow = follow;
    this.#retryChat = retryChat;
  }

  /** Handles one inbound event; a second delivery of the same idempotency key does nothing. */
  async handle(event: InboundEvent): Promise<void> {
    if (!this.#recent.add(event.idempotencyKey)) {
      this.#deps.log.debug({ key: event.idempotencyKey }, 'chatops: duplicate event ignored');
      return;
    }
    try {
      if (event.kind === 'command') await this.#command(event);
      else if (event.kind === 'button') await this.#press(event);
      else if (event.kind === 'text') await this.#directText(event);
      else if (event.kind === 'edit') await handleEdit(this.#deps, event);
      else if (!(await this.#presses.reply(event))) await handleGuidanceReply(this.#deps, event);
    } catch (err) {
      this.#deps.log.error(
        { err, kind: event.kind, key: event.idempotencyKey },
        'chatops: event failed',
      );
    }
  }

  /** Plain text in a private chat: an unbound one hears what the bot is; a bound one nothing. */
  async #directText(event: DirectText): Promise<void> {
    const access = await resolveAccess(this.#deps, event.chatRef, undefined, event.user);
    if (access.binding !== null) return;
    await this.#hint(event, introText(event.user.platform));
  }

  /** A hint to an unbound chat, unless that chat had one within the last minute. */
  async #hint(event: Command | DirectText, words: string): Promise<void> {
    if (!this.#hints.allow(event.chatRef)) {
      this.#deps.log.debug({ chat: event.chatRef }, 'chatops: unbound hint held back');
      return;
    }
    await this.#reply(event, words);
  }

  async #press(event: ButtonPress): Promise<void> {
    try {
      if (this.#sessions && SessionOffers.isSessionButton(event.token)) {
        await this.#sessions.press(event);
      } else await this.#presses.press(event);
    } catch (err) {
      // The presser always hears back, even when something broke.
      const channel = this.#deps.channels.get(event.interaction.platform);
      await channel?.answer(event.interaction, describeError(err).chatReply, { private: true });
      throw err;
    }
  }

  async #command(event: Command): Promise<void> {
    const deps = this.#deps;
    const access = await accessOfEvent(deps, event);
    const parsed = parseCommand(event.name, argumentText(event.name, event.rawText, event.args));
    const verb = parsed.ok ? parsed.command.verb : parsed.failure.verb;
    const base = { actor: access.actor, chatRef: event.chatRef, key: event.idempotencyKey };
    const action = `command:${verb ?? event.name}`;
    const bound = access.binding !== null;
    if (verb === undefined) {
      await audit(deps, { ...base, action, outcome: 'refused', detail: 'unknown command' });
      if (!bound) {
        if (event.direct || event.addressed) {
          await this.#hint(event, unknownInUnboundText(event.name, event.user.platform));
        }
        return;
      }
      if (parsed.ok) return;
      deps.log.info({ command: event.name, chat: event.chatRef }, 'chatops: unknown command');
      await this.#reply(event, failureText(parsed.failure));
      return;
    }
    const decision = decideAccess(verb, bound, access.role);
    if (!decision.allowed) {
      const detail =
        decision.why === 'unbound'
          ? 'chat not bound'
          : `role ${access.role ?? 'none'}, needs ${decision.required}`;
      await audit(deps, { ...base, action, outcome: 'refused', detail });
      const platform = event.user.platform;
      await this.#reply(event, decision.why === 'role' ? refusalText(verb) : unboundText(platform));
      return;
    }
    // An operator writing in a chat that refused us earlier: the bot is back, try it again.
    if (access.role !== null && ROLES.indexOf(access.role) >= ROLES.indexOf('operator')) {
      await this.#retryChat(event.chatRef);
    }
    if (!parsed.ok) {
      deps.log.info({ verb, problem: parsed.failure.problem }, 'chatops: bad arguments');
      await audit(deps, { ...base, action, outcome: 'failed', detail: parsed.failure.problem });
      await this.#reply(event, failureText(parsed.failure));
      return;
    }
    // A redelivery after a restart: the in-memory keys are gone, the audit entry is not.
    if (
      AUDIT_DEDUPED.has(verb) &&
      (await alreadyAudited(deps, access.actor, action, event.idempotencyKey))
    )
      return;
    const ctx: CommandContext = {
      deps,
      event,
      access,
      follow: this.#follow,
      ...(this.#sessions && { sessions: this.#sessions }),
    };
    let result: HandlerResult;
    try {
      result = await dispatch(ctx, parsed.command);
    } catch (err) {
      const surface = describeError(err);
      if (err instanceof PhasebridgeError && USER_ERRORS.has(err.code)) {
        deps.log.info({ verb, code: err.code, problem: err.message }, 'chatops: command refused');
      } else {
        deps.log[surface.logLevel]({ err, verb }, 'chatops: command failed');
      }
      result = {
        outcome: 'failed',
        detail: err instanceof Error ? err.message : String(err),
        reply: surface.chatReply,
      };
    }
    const { reply, ...entry } = result;
    // Binding a chat again (bind, pair) is the admin's sign that it works again.
    if ((verb === 'bind' || verb === 'pair') && entry.outcome === 'allowed') {
      await this.#retryChat(event.chatRef);
    }
    await audit(deps, { ...base, action, ...entry });
    if (reply !== undefined) await this.#reply(event, reply);
  }

  /** The answer to what the person just typed: they wait for it (`interactive`, unless set). */
  async #reply(event: Command | DirectText, reply: string | OutgoingMessage): Promise<void> {
    const channel = channelFor(this.#deps, event.chatRef);
    const message = typeof reply === 'string' ? text(reply) : reply;
    if (channel) await postReply(channel, event.chatRef, { urgency: 'interactive', ...message });
  }
}

function dispatch(ctx: CommandContext, cmd: ParsedCommand): Promise<HandlerResult> {
  switch (cmd.verb) {
    case 'run':
      return runCommand(ctx, cmd);
    case 'status':
      return statusCommand(ctx, cmd);
    case 'phase':
      return phaseCommand(ctx, cmd);
    case 'prompt':
      return promptCommand(ctx, cmd);
    case 'diff':
      return diffCommand(ctx, cmd);
    case 'runs':
      return runsCommand(ctx);
    case 'workflows':
      return workflowsCommand(ctx);
    case 'approve':
    case 'reject':
    case 'changes':
      return answerCommand(ctx, cmd);
    case 'cancel':
    case 'skip':
    case 'resume':
    case 'retry':
    case 'reopen':
    case 'revert':
      return controlCommand(ctx, cmd);
    case 'repair':
      return repairCommand(ctx, cmd);
    case 'bind':
      return bindCommand(ctx, cmd);
    case 'allow':
      return allowCommand(ctx, cmd);
    case 'deny':
      return denyCommand(ctx, cmd);
    case 'agents':
      return agentsCommand(ctx);
    case 'bindings':
      return bindingsCommand(ctx);
    case 'unbind':
      return unbindCommand(ctx, cmd);
    case 'access':
      return accessCommand(ctx);
    case 'whoami':
      return whoamiCommand(ctx);
    case 'pair':
      return pairCommand(ctx, cmd.code);
    case 'help':
      return helpCommand(ctx, cmd);
    case 'sessions':
      return sessionsCommand(ctx);
    case 'console':
      return consoleCommand(ctx);
    case 'link':
      return linkCommand(ctx, cmd);
  }
}
