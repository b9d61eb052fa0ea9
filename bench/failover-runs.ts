/**
 * The people of bench/failover.ts: one run driven through the fake Telegram as a team member
 * would (a /run, a guidance reply to its plan checkpoint, Approve or Request changes with a
 * reason, Approve on review), and the ledgers read back to count what a takeover lost or
 * applied twice. Each wait is bounded by a patience: a run that does not move within it is
 * recorded where it stopped, and the stream goes on.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FakeChat, FakeTelegram, FakeUser } from '../test/fakes/telegram.ts';

/** One ledger event, as read here. */
interface LedgerEvent {
  type: string;
  spec?: string;
  checkpointId?: string;
  stepId?: string;
  attempt?: number;
  entry?: { text?: string };
}

/** The runs of one workspace, read from their ledgers (each folder's spec read once). */
export class Ledgers {
  readonly #runsDir: string;
  /** Run id → the spec it was started with. */
  readonly #specOf = new Map<string, string>();

  constructor(workspace: string) {
    this.#runsDir = path.join(workspace, '.phasebridge', 'runs');
  }

  /** Every event of `runId`'s ledger so far (a line still being written is left out). */
  events(runId: string): LedgerEvent[] {
    let text: string;
    try {
      text = fs.readFileSync(path.join(this.#runsDir, runId, 'ledger.jsonl'), 'utf8');
    } catch {
      return [];
    }
    const events: LedgerEvent[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        events.push(...(JSON.parse(line) as { events: LedgerEvent[] }).events);
      } catch {
        // the line being appended right now: read whole next time
      }
    }
    return events;
  }

  /** Every run id, each with its spec (folders whose ledger has no runStarted yet wait). */
  runs(): Map<string, string> {
    const names = fs.existsSync(this.#runsDir) ? fs.readdirSync(this.#runsDir) : [];
    for (const name of names) {
      if (this.#specOf.has(name)) continue;
      const started = this.events(name).find((e) => e.type === 'runStarted');
      if (started?.spec !== undefined) this.#specOf.set(name, started.spec);
    }
    return this.#specOf;
  }

  /** The run ids started with `spec`. */
  runsOf(spec: string): string[] {
    return [...this.runs()].filter(([, s]) => s === spec).map(([id]) => id);
  }

  /** How the run ended (`runCompleted`, `runFailed`, `runCancelled`), or undefined while it runs. */
  ending(runId: string): string | undefined {
    const ends = ['runCompleted', 'runFailed', 'runCancelled'];
    return this.events(runId).find((e) => ends.includes(e.type))?.type;
  }
}

/** What one run of the stream did and saw. */
export interface RunRecord {
  /** The spec of its /run, unique in the stream. */
  readonly tag: string;
  runId?: string;
  /** The presses made: callback query id, and when. */
  readonly presses: { id: string; at: number }[];
  /** Words sent as replies (guidance, a Request changes reason): each belongs in the ledger once. */
  readonly replies: { kind: 'guidance' | 'changes'; words: string }[];
  /** What the person waited for when their patience ran out. */
  stalledAt?: string;
  /** How the run ended, as its ledger says. */
  ending?: string;
}

/** What a run needs: the chat, the person, the ledgers, and how long a person waits. */
export interface StreamDeps {
  readonly fake: FakeTelegram;
  readonly chat: FakeChat;
  readonly user: FakeUser;
  readonly ledgers: Ledgers;
  /** How long each wait lasts before the run counts as stalled. */
  readonly patienceMs: number;
  /** Share of runs whose plan gets Request changes (with a reason) before Approve. */
  readonly changesShare: number;
  log(line: string): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it gives something other than undefined/false, or `ms` pass. */
export async function until<T>(check: () => T | Promise<T>, ms: number): Promise<T | undefined> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    await sleep(100);
  }
  return undefined;
}

/** mulberry32: the same numbers for the same seed. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Drives run `rec.tag` from its /run to its end: a guidance reply on each plan checkpoint, then
 * (for a `changesShare` of the runs) Request changes with a reason, then Approve, then Approve
 * on review. Fills `rec` as it goes; returns when the run ended or a wait ran out.
 */
export async function driveRun(d: StreamDeps, rec: RunRecord, random: () => number) {
  const { fake, chat, user } = d;
  const wait = async <T>(what: string, check: () => T | undefined): Promise<T | undefined> => {
    const got = await until(check, d.patienceMs);
    if (got === undefined) {
      rec.stalledAt = what;
      d.log(`${rec.tag} (${rec.runId ?? 'no run'}): nothing came for ${what}`);
    }
    return got;
  };
  const press = (messageId: number, label: string) => {
    const update = fake.userPresses({ chatId: chat.id, messageId, from: user, label });
    const id = (update as { callback_query?: { id: string } }).callback_query!.id;
    rec.presses.push({ id, at: Date.now() });
  };
  const reply = (messageId: number, kind: 'guidance' | 'changes', words: string) => {
    fake.userReplies({ chatId: chat.id, messageId, from: user, text: words });
    rec.replies.push({ kind, words });
  };
  // Decided up front, so a run's choices depend on the seed only, not on timing.
  const asksChanges = random() < d.changesShare;
  const pauses = [random(), random(), random()].map((r) => Math.floor(r * 1500));

  fake.userSends({ chat, from: user, text: `/run demo ${rec.tag}` });
  const runId = await wait('the run to start', () => d.ledgers.runsOf(rec.tag)[0]);
  if (runId === undefined) return;
  rec.runId = runId;
  const decided = new Set<string>();
  let plan = await wait('the plan checkpoint', () => openCheckpoint(fake, chat, runId, 'plan'));
  if (plan === undefined) return;
  reply(plan.messageId, 'guidance', `guidance for ${rec.tag} at ${plan.id}`);
  await sleep(pauses[0]!);
  if (asksChanges) {
    press(plan.messageId, 'Request changes');
    decided.add(plan.id);
    const asked = `checkpoint ${plan.id} of run ${runId}?`;
    const prompt = await wait('the reason prompt', () =>
      fake
        .botMessages(chat.id)
        .find(
          (m) =>
            (m.replyMarkup as { force_reply?: boolean } | undefined)?.force_reply === true &&
            (m.text ?? '').includes(asked),
        ),
    );
    if (prompt === undefined) return;
    await sleep(pauses[1]!);
    reply(prompt.message_id, 'changes', `changes for ${rec.tag}: cover the login form with tests`);
    plan = await wait('the plan checkpoint again', () =>
      openCheckpoint(fake, chat, runId, 'plan', decided),
    );
    if (plan === undefined) return;
    reply(plan.messageId, 'guidance', `guidance for ${rec.tag} at ${plan.id}`);
    await sleep(pauses[2]!);
  }
  press(plan.messageId, 'Approve');
  const review = await wait('the review checkpoint', () =>
    openCheckpoint(fake, chat, runId, 'review'),
  );
  if (review === undefined) return;
  press(review.messageId, 'Approve');
  rec.ending = await wait('the run to end', () => d.ledgers.ending(runId));
}

/** The open checkpoint of `step` for `runId` the chat shows with its buttons (not in `skip`). */
function openCheckpoint(
  fake: FakeTelegram,
  chat: FakeChat,
  runId: string,
  step: string,
  skip: ReadonlySet<string> = new Set(),
): { id: string; messageId: number } | undefined {
  const escaped = runId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const heading = new RegExp(`Checkpoint (${step}:\\d+) — run ${escaped}(\\s|$)`);
  for (const m of fake.botMessages(chat.id)) {
    const id = heading.exec(m.text ?? '')?.[1];
    if (id === undefined || skip.has(id)) continue;
    if (JSON.stringify(m.replyMarkup ?? {}).includes('Approve'))
      return { id, messageId: m.message_id };
  }
  return undefined;
}

/** The counts of the report, each with its goal of 0; `details` names what they count. */
export interface Audit {
  runsLost: number;
  runsDoubled: number;
  runsStalled: number;
  decisionsAppliedTwice: number;
  pressesUnanswered: number;
  /** Answered after Telegram's 15 s, so refused (the person saw the spinner end, no answer). */
  pressesAnsweredTooLate: number;
  repliesLost: number;
  attemptsStartedTwice: number;
  details: string[];
}

/** Reads every run's ledger and the fake's callback answers against what the people did. */
export function audit(records: readonly RunRecord[], ledgers: Ledgers, fake: FakeTelegram): Audit {
  const a: Audit = {
    runsLost: 0,
    runsDoubled: 0,
    runsStalled: 0,
    decisionsAppliedTwice: 0,
    pressesUnanswered: 0,
    pressesAnsweredTooLate: 0,
    repliesLost: 0,
    attemptsStartedTwice: 0,
    details: [],
  };
  const runs = ledgers.runs();
  for (const rec of records) {
    const ids = ledgers.runsOf(rec.tag);
    if (ids.length === 0) {
      a.runsLost++;
      a.details.push(`${rec.tag}: the /run never became a run`);
      continue;
    }
    if (ids.length > 1) {
      a.runsDoubled += ids.length - 1;
      a.details.push(`${rec.tag}: ${ids.length} runs (${ids.join(', ')})`);
    }
    if (rec.ending !== 'runCompleted') {
      a.runsStalled++;
      a.details.push(
        `${rec.tag} (${ids[0]}): ${rec.ending ?? `stalled waiting for ${rec.stalledAt}`}`,
      );
    }
    for (const press of rec.presses) {
      if (fake.callbackAnswers.has(press.id)) continue;
      const tried = fake.calls.find(
        (c) =>
          c.method === 'answerCallbackQuery' && String(c.params.callback_query_id) === press.id,
      );
      if (tried === undefined) {
        a.pressesUnanswered++;
        a.details.push(`${rec.tag}: press ${press.id} never answered`);
      } else {
        a.pressesAnsweredTooLate++;
        const after = (tried.at ?? Date.now()) - press.at;
        a.details.push(`${rec.tag}: press ${press.id} answered ${after} ms after it, refused`);
      }
    }
    const recorded = ids
      .flatMap((id) => ledgers.events(id))
      .filter((e) => e.type === 'feedbackRecorded');
    for (const r of rec.replies) {
      const n = recorded.filter((e) => e.entry?.text === r.words).length;
      if (n === 1) continue;
      a.repliesLost++;
      a.details.push(`${rec.tag}: ${r.kind} reply in the ledger ${n} times: "${r.words}"`);
    }
  }
  // Over every run, the stream's or not: a checkpoint resolved or an attempt started twice.
  for (const runId of runs.keys()) {
    const resolved = new Map<string, number>();
    const started = new Map<string, number>();
    for (const e of ledgers.events(runId)) {
      if (e.type === 'checkpointResolved') bump(resolved, e.checkpointId ?? '');
      if (e.type === 'stepStarted') bump(started, `${e.stepId}:${e.attempt}`);
    }
    for (const [cp, n] of resolved) {
      if (n < 2) continue;
      a.decisionsAppliedTwice += n - 1;
      a.details.push(`${runId}: checkpoint ${cp} resolved ${n} times`);
    }
    for (const [attempt, n] of started) {
      if (n < 2) continue;
      a.attemptsStartedTwice += n - 1;
      a.details.push(`${runId}: step ${attempt} started ${n} times`);
    }
  }
  return a;
}

function bump(m: Map<string, number>, key: string): void {
  m.set(key, (m.get(key) ?? 0) + 1);
}
