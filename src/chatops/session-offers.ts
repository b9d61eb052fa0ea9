/**
 * Interrupted sessions offered in chat (issue 14, seed 004 "Resume from Interrupted Session"):
 * a bound chat whose workspace holds a `.coordinator/state.json` that is not IDLE (ours or the
 * coordinator's own) or a flow run left `active`/`blocked` gets one message per session with the
 * seed's summary (a blocked run's reason first) and Resume / Restart / Abort.
 *
 *  - announced once when the bridge starts (a chat with an unanswered copy of the same session
 *    and state is not told again), and on the `sessions` command;
 *  - only the bound workspaces' current state files are read (never ledgers or history), and
 *    of flow runs only the run.yaml files that changed since last read (bridge.db's cache);
 *  - a press is checked like a checkpoint press (our token, this chat and message, operator or
 *    above; a viewer is refused privately), decided once for every copy (a duplicate press is
 *    told who chose), applied through the CLI's own code (session-actions.ts), and every copy is
 *    edited to show who chose what;
 *  - a session resumed by this bridge is not offered again while it runs;
 *  - across a kill of the bridge (issue 39): a choice recorded but not applied is applied at the
 *    next start under the press's own engine keys (so once), every closed copy shows its
 *    closing (session-offer-display.ts), and a chat is offered a session once: the copy of an
 *    earlier state is closed when the session is offered in its new one.
 */

import { resolve } from 'node:path';
import type { ButtonPress } from '../bridges/events.ts';
import type { ChatRef } from '../bridges/messages.ts';
import { prose } from '../bridges/render-text.ts';
import type { SessionKey, SessionOfferRecord } from '../db/repositories/session-offers.ts';
import type { Actor } from '../engine/model.ts';
import { type Person, personName } from '../engine/person-name.ts';
import { describeError } from '../errors.ts';
import type { SessionAction } from '../jobs/orchestrator/session-actions.ts';
import { findInterruptedSessions, type InterruptedSession } from '../jobs/orchestrator/sessions.ts';
import { hasRole } from './authorize.ts';
import { bindingChatRef, type ChatOpsDeps, channelFor, pressContext } from './context.ts';
import { applyChoice, type SessionOfferHooks } from './session-choice.ts';
import { offerKey, SessionOfferCopies } from './session-offer-copies.ts';
import { SessionOfferDisplay } from './session-offer-display.ts';
import { parseSessionButton } from './session-offer-message.ts';

/** The role a Resume / Restart / Abort press needs (as the `resume` command). */
export const SESSION_ROLE = 'operator';

export type { SessionOfferHooks };

const INVALID_BUTTON = 'This button is not valid any more.';

/** Posts, decides and closes session offers. */
export class SessionOffers {
  readonly #deps: ChatOpsDeps;
  readonly #hooks: SessionOfferHooks;
  /** Choices made before this bridge started belong to a process that is gone. */
  readonly #since: number;
  /** Shows closed copies their closing (on start, and as their sends are confirmed). */
  readonly display: SessionOfferDisplay;
  readonly #copies: SessionOfferCopies;
  /** Sessions whose Resume, chosen before a kill, this process finished (`settle`). */
  readonly #resumedAtStart = new Set<string>();

  constructor(deps: ChatOpsDeps, hooks: SessionOfferHooks) {
    this.#deps = deps;
    this.#hooks = hooks;
    this.#since = deps.clock().getTime();
    this.display = new SessionOfferDisplay(deps, this.#since);
    this.#copies = new SessionOfferCopies(deps, this.display);
  }

  /**
   * Start-up, before `announce`: applies the choices a killed process recorded but did not
   * finish (the copies closed, the run untouched or half done), each under the press's own
   * engine keys so nothing is committed twice, and shows every closed copy its closing.
   */
  async settle(): Promise<void> {
    const offers = this.#deps.repos.sessionOffers;
    const done = new Set<string>();
    for (const row of await offers.unapplied()) {
      // A choice of this process is being applied by its press.
      if ((row.decidedAt ?? 0) >= this.#since) continue;
      const key = `${row.workspace}\n${row.kind}\n${row.session}\n${row.state}`;
      if (done.has(key)) continue;
      done.add(key);
      await this.#finish(row).catch((err: unknown) =>
        this.#deps.log.error({ err, offer: row.id }, 'chatops: a session choice not finished'),
      );
    }
    this.display.schedule();
  }

  /** Applies `row`'s recorded choice again (keyed: once in the engine) and closes the copies. */
  async #finish(row: SessionOfferRecord): Promise<void> {
    const offers = this.#deps.repos.sessionOffers;
    const action = row.decision as SessionAction;
    const current = (await this.#read(row.workspace)).find(
      (x) => x.kind === row.kind && x.session === row.session,
    );
    // The session's files may be gone already (an abort or restart got that far).
    const s: InterruptedSession = current ?? {
      kind: row.kind,
      session: row.session,
      state: row.state,
      ...(row.runId === null ? {} : { runId: row.runId }),
      completed: [],
      inProgress: [],
      nextAction: '',
    };
    const person = await this.#deps.repos.people.person(row.decidedBy ?? '');
    const actor: Actor = {
      id: row.decidedBy ?? '',
      ...(person.name === undefined ? {} : { name: person.name }),
    };
    const chat = row.decidedIn ?? row.chatRef;
    let outcome: string;
    try {
      outcome = await applyChoice(this.#deps.orchestrator, this.#hooks, action, s, row.workspace, {
        actor,
        key: row.decisionKey ?? '',
        chat,
        pressed: false,
      });
    } catch (err) {
      if (current !== undefined) {
        // Still interrupted and the choice cannot be made: open again, as after a press.
        await offers.reopen(row);
        await this.#copies.reopen(row, current);
        return;
      }
      this.#deps.log.warn({ err, offer: row.id }, 'chatops: a session choice not applied again');
      outcome = 'The session is no longer interrupted.';
    }
    await offers.applied(row, outcome);
    // Chosen for this interruption: not offered again now (as a resume this process made).
    if (action === 'resume' && current !== undefined) this.#resumedAtStart.add(sessionId(row));
    await this.#copies.close(row, outcome);
  }

  /** True when `token` is a session offer button id. */
  static isSessionButton(token: string): boolean {
    return parseSessionButton(token) !== undefined;
  }

  /** Start-up: every bound chat is told of its workspace's interrupted sessions, once. */
  async announce(): Promise<void> {
    const { repos, log } = this.#deps;
    const found = new Map<string, InterruptedSession[]>();
    for (const b of await repos.bindings.list()) {
      const workspace = resolve(b.workspace);
      const chat = bindingChatRef(b);
      if (!found.has(workspace)) found.set(workspace, await this.#read(workspace));
      for (const s of found.get(workspace) ?? []) {
        const copies = await repos.sessionOffers.copies(offerKey(workspace, s));
        for (const c of copies) {
          // Stored, then the process died before the send's reference was recorded: whether it
          // reached the chat is unknown, and a copy without a reference is never edited. Dropped
          // (a press on it is told the button is not valid) and posted again.
          if (
            c.chatRef === chat &&
            c.status === 'open' &&
            c.messageRef === null &&
            c.createdAt < this.#since &&
            // Still queued in the outbox: delivered later, its ref then written to it.
            !(await repos.sessionOffers.sendInFlight(c.id))
          ) {
            await repos.sessionOffers.removeUnsent(c.id);
            c.status = 'stale';
          }
        }
        if (copies.some((c) => c.chatRef === chat && c.status === 'open')) continue;
        if (await this.#beingResumed(workspace, s)) continue;
        // Offered here in an earlier state (a kill, then the run moved on): one live offer.
        if (
          (await repos.sessionOffers.supersede(
            offerKey(workspace, s),
            chat,
            `The session is ${s.state} now: see the newer offer.`,
          )) > 0
        ) {
          this.display.schedule();
        }
        await this.#copies
          .post(workspace, s, chat)
          .catch((err: unknown) =>
            log.warn({ err, chat }, 'chatops: interrupted session not announced'),
          );
      }
    }
  }

  /**
   * The `sessions` command (`command`: its idempotency key): offers each interrupted session of
   * the workspace here; the reply.
   */
  async offerIn(chat: ChatRef, workspace: string, command?: string): Promise<string> {
    const ws = resolve(workspace);
    const sessions = await this.#read(ws);
    if (sessions.length === 0) return `No interrupted session in ${ws}.`;
    const lines: string[] = [];
    for (const s of sessions) {
      const last = await this.#beingResumed(ws, s);
      if (last) {
        const by = personName(await this.#deps.repos.people.person(last.decidedBy ?? ''));
        lines.push(`${s.kind} session ${s.session}: being resumed (chosen by ${by})`);
        continue;
      }
      await this.#copies.post(ws, s, chat, command);
      lines.push(`${s.kind} session ${s.session}: ${s.state}`);
    }
    return `${sessions.length} interrupted session(s) in ${ws}:\n${lines.join('\n')}`;
  }

  /** Handles one press; always answers the presser privately. */
  async press(ev: ButtonPress): Promise<void> {
    const ctx = await pressContext(this.#deps, ev, 'button:session');
    if (!ctx) return;
    const { say, access, note } = ctx;
    const parsed = parseSessionButton(ev.token);
    const offers = this.#deps.repos.sessionOffers;
    const row = parsed ? await offers.findByToken(parsed.token) : null;
    if (row && row.chatRef === ev.chatRef && (await this.#isRepeat(row, ev.messageRef))) {
      // Pressed on a second message of the copy's send: it counts, and shows the closing too.
      await offers.addRepeat(row, ev.messageRef);
      row.messageRef = ev.messageRef;
      if (row.status !== 'open') this.display.schedule();
    }
    if (
      !parsed ||
      !row ||
      row.chatRef !== ev.chatRef ||
      (row.messageRef !== null && row.messageRef !== ev.messageRef)
    ) {
      await note('refused', 'unknown or foreign button token');
      return say(INVALID_BUTTON);
    }
    const target = `${row.kind}:${row.session}`;
    if (access.binding === null || !hasRole(access.role, SESSION_ROLE)) {
      await note('refused', `role ${access.role ?? 'none'}, needs ${SESSION_ROLE}`, target);
      return say('You are not allowed to resume, restart or abort sessions here.');
    }
    if (resolve(access.binding.workspace) !== row.workspace) {
      await note('refused', 'the chat serves another workspace now', target);
      return say(INVALID_BUTTON);
    }
    if (row.status !== 'open') {
      await note('failed', `offer already ${row.status}`, target);
      return say(closedWords(row, await this.#decider(row)));
    }
    const s = (await this.#read(row.workspace)).find(
      (x) => x.kind === row.kind && x.session === row.session,
    );
    if (s === undefined) {
      await offers.markStale(row, 'The session is no longer interrupted.');
      await note('failed', 'session no longer interrupted', target);
      // The presser first: editing the copies may wait for the chat's pacing (a busy group).
      await say('This session is no longer interrupted.');
      return this.#copies.close(row, 'The session is no longer interrupted.');
    }
    const by = access.actor.id;
    const made = { key: `chat:${ev.idempotencyKey}`, chat: ev.chatRef };
    if (!(await offers.decide(row, parsed.action, by, made))) {
      const now = await offers.findByToken(parsed.token);
      await note('failed', 'offer already decided', target);
      return say(now ? closedWords(now, await this.#decider(now)) : INVALID_BUTTON);
    }
    // Restart and abort may wait on the run (a cancelled step's job): the presser hears at once,
    // and the outcome shows on every copy. Resume answers with where the run stands.
    const early = parsed.action !== 'resume';
    if (early) await say(`${ING[parsed.action]} session ${s.session}…`);
    let outcome: string;
    try {
      outcome = await applyChoice(
        this.#deps.orchestrator,
        this.#hooks,
        parsed.action,
        s,
        row.workspace,
        {
          actor: access.actor,
          key: made.key,
          chat: ev.chatRef,
          pressed: true,
        },
      );
    } catch (err) {
      // Not applied: the choice is open again, and the presser hears why.
      const why = `Could not ${parsed.action} session ${s.session}: ${describeError(err).chatReply}`;
      await offers.reopen(row);
      await this.#copies.reopen(row, s);
      await note('failed', why, target);
      if (!early) return say(why);
      await channelFor(this.#deps, ev.chatRef)
        ?.send(ev.chatRef, { text: prose(why) })
        .catch(() => undefined);
      return;
    }
    // Recorded before the copies are edited: a kill from here on does not apply it again.
    await offers.applied(row, outcome);
    await note('allowed', `${parsed.action} ${target}: ${outcome}`, target);
    // The presser first (a button answer expires): the copies' edits may wait for pacing.
    if (!early) await say(capital(outcome));
    await this.#copies.close(row, outcome);
  }

  /** The interrupted sessions of one workspace (its current state files only). */
  async #read(workspace: string): Promise<InterruptedSession[]> {
    try {
      return await findInterruptedSessions(workspace, this.#deps.repos.flowRunCache);
    } catch (err) {
      this.#deps.log.warn({ err, workspace }, 'chatops: could not read interrupted sessions');
      return [];
    }
  }

  /** The resume choice made for this session since the bridge started, if any. */
  async #beingResumed(workspace: string, s: InterruptedSession) {
    const last = await this.#deps.repos.sessionOffers.lastDecision(offerKey(workspace, s));
    if (last?.decision !== 'resume') return null;
    const now = (last.decidedAt ?? 0) >= this.#since || this.#resumedAtStart.has(sessionId(last));
    return now ? last : null;
  }

  /**
   * Whether `pressed` is another message of `copy`'s send in its chat: its send was handed to
   * the platform twice (a kill before its answer was recorded, the restart sent it again), and
   * that repeat kept its buttons (the outbox could not find it).
   */
  async #isRepeat(copy: SessionOfferRecord, pressed: string): Promise<boolean> {
    if (copy.messageRef === null || copy.messageRef === pressed) return false;
    return this.#deps.repos.sessionOffers.sendAttemptedTwice(copy.id);
  }

  /** Who decided the offer, named as they go by. */
  #decider(r: SessionOfferRecord): Promise<Person> {
    return this.#deps.repos.people.person(r.decidedBy ?? '');
  }
}

/** A session's identity, whatever state it is offered in. */
const sessionId = (k: Omit<SessionKey, 'state'>): string =>
  `${k.workspace}\n${k.kind}\n${k.session}`;

function closedWords(r: SessionOfferRecord, decider: Person): string {
  return r.status === 'decided'
    ? `Already chosen: ${r.decision} by ${personName(decider)}.`
    : 'This offer is out of date: send `sessions` for the current state.';
}

const ING: Readonly<Record<SessionAction, string>> = {
  resume: 'Resuming',
  restart: 'Restarting',
  abort: 'Aborting',
};

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
