/** Small pure formatters for chat text: durations, token counts, cost, policies, people, times. */

import type { RichSegment } from '../bridges/messages.ts';
import { mention, plain } from '../bridges/render-text.ts';
import type { Actor, CheckpointPolicy, Telemetry } from '../engine/model.ts';
import { type Person, peopleNames, personName } from '../engine/person-name.ts';

/** A duration for humans: "300 ms", "45 s", "3 min 20 s", "2 h", "1 h 30 min", "3 d". */
export function durationWords(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return m < 10 && s % 60 !== 0 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

/** A token count: 950, 1.2k, 3.4M. */
export function countWords(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${trim(n / 1000)}k`;
  return `${trim(n / 1_000_000)}M`;
}

const trim = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(1).replace(/\.0$/, ''));

/** A cost in dollars: $0.04, $12.50, or $0.0031 for small amounts. */
export function costWords(usd: number): string {
  return usd > 0 && usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** Tokens and cost in one line, or undefined when nothing was spent. */
export function telemetryWords(t: Telemetry): string | undefined {
  if (t.tokensIn === 0 && t.tokensOut === 0 && t.costUsd === 0) return undefined;
  return `${countWords(t.tokensIn)} in / ${countWords(t.tokensOut)} out · ${costWords(t.costUsd)}`;
}

const ON_EXPIRY: Readonly<Record<CheckpointPolicy['onExpiry'], string>> = {
  reject: 'rejected',
  approve: 'approved',
  keep: 'kept open for a human',
};

/** A checkpoint policy in words: "needs 2 approvals, not from the requester; expires in 2 h, then rejected". */
export function policyWords(p: CheckpointPolicy): string {
  const approvals = `needs ${p.approvals} approval${p.approvals === 1 ? '' : 's'}`;
  const who = p.fourEyes ? ', not from the requester' : '';
  const expiry =
    p.expiresInMs === undefined
      ? ''
      : `; expires in ${durationWords(p.expiresInMs)}, then ${ON_EXPIRY[p.onExpiry]}`;
  return `${approvals}${who}${expiry}`;
}

/** How a person is named in chat (see personName: one rule everywhere). */
export function actorName(a: Actor): string {
  return personName(a);
}

/** Several people: "Alice", "Alice and Bob", "Alice, Bob and Carol". */
export function namesWords(actors: readonly Actor[]): string {
  return peopleNames(actors);
}

/**
 * A person in a chat message's text: a mention in their own platform's chats (Slack `<@U…>`,
 * Discord `<@…>`, rendered by that adapter), personName everywhere else.
 */
export function personSegment(p: Person): RichSegment {
  const at = p.id.indexOf(':');
  const name = personName(p);
  return at <= 0 ? plain(name) : mention(name, p.id.slice(0, at), p.id.slice(at + 1));
}

/** Several people as text segments, joined as namesWords joins them ("nobody" for none). */
export function namesSegments(people: readonly Person[]): RichSegment[] {
  if (people.length === 0) return [plain('nobody')];
  return people.flatMap((p, i) => {
    const sep = i === 0 ? [] : [plain(i === people.length - 1 ? ' and ' : ', ')];
    return [...sep, personSegment(p)];
  });
}

/** An ISO time as "2026-11-29 14:30 UTC" (chats span time zones; UTC is unambiguous). */
export function timeWords(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
