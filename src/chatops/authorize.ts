/**
 * Authorization rules, pure: which role each verb needs and whether a user may use it in a chat.
 * Deny by default: an unbound chat serves only `whoami`, `help`, `pair`, `console` and `link`
 * (which check the person's role themselves); anything else needs a role from the allowlist (the chat's binding or global). viewer < operator < approver < admin.
 */
import { ROLES } from '../db/repositories/allowlist.ts';
import type { Role } from '../db/schema.ts';
import type { Verb } from './grammar.ts';
import { VOCABULARY } from './vocabulary.ts';

/** The role each verb needs; null = anyone (also in an unbound chat). From the vocabulary table. */
export const REQUIRED_ROLE: Readonly<Record<Verb, Role | null>> = Object.fromEntries(
  Object.entries(VOCABULARY).map(([verb, entry]) => [verb, entry.role]),
) as Record<Verb, Role | null>;

/** The role a checkpoint button press needs. */
export const ANSWER_ROLE: Role = 'approver';

/** True when `role` is at least `required`. */
export function hasRole(role: Role | null, required: Role): boolean {
  return role !== null && ROLES.indexOf(role) >= ROLES.indexOf(required);
}

/** Whether a verb may be used: allowed, or refused because the chat is unbound or the role lacks. */
export type AccessDecision =
  | { allowed: true }
  | { allowed: false; why: 'unbound' }
  | { allowed: false; why: 'role'; required: Role };

/** Decides a verb for a user with `role` in a chat that is (or is not) bound. */
export function decideAccess(verb: Verb, bound: boolean, role: Role | null): AccessDecision {
  const required = REQUIRED_ROLE[verb];
  if (required === null) return { allowed: true };
  if (!bound) return { allowed: false, why: 'unbound' };
  return hasRole(role, required) ? { allowed: true } : { allowed: false, why: 'role', required };
}

/** The refusal a user sees: what they may not do, never anything about the target. */
export function refusalText(verb: Verb | 'answer'): string {
  const what = verb === 'answer' ? 'answer checkpoints' : `use ${verb}`;
  return `You are not allowed to ${what} here.`;
}
