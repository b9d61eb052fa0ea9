/**
 * The words of `bindings`, `unbind` and `access`, shared by chat and CLI so both say the same.
 * Pure; types only, so the CLI can load it without the chatops runtime.
 */
import type { AllowEntry } from '../db/repositories/allowlist.ts';
import type { BindingRecord } from '../db/repositories/bindings.ts';

/** A binding's chat ref with its thread, as `bind` and `unbind` take it. */
export function bindingRef(b: Pick<BindingRecord, 'chatRef' | 'thread'>): string {
  return b.thread ? `${b.chatRef}:${b.thread}` : b.chatRef;
}

/** The `bindings` list: one line per chat (thread), workspace, defaults and follow. */
export function bindingsLines(
  bindings: readonly BindingRecord[],
  followed: ReadonlySet<string>,
): string[] {
  if (bindings.length === 0) return ['No chats are bound.'];
  const lines = bindings.map((b) => {
    const extra = [
      b.defaultWorkflow ? `default workflow ${b.defaultWorkflow}` : '',
      b.defaultAgent ? `default agent ${b.defaultAgent}` : '',
      followed.has(b.workspace) ? 'following its codexclaw sessions' : '',
    ].filter((s) => s !== '');
    return `• ${bindingRef(b)} → ${b.workspace}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
  });
  return [`Bound chats (${bindings.length}):`, ...lines];
}

/** What `unbind` answers. */
export function unbindWords(ref: string, removed: boolean): string {
  return removed
    ? `${ref} is not served any more; its roles are gone too.`
    : `${ref} was not bound.`;
}

/** The `access` list: roles grouped by where they apply (globally, then per chat). */
export function accessLines(
  entries: readonly AllowEntry[],
  bindings: ReadonlyMap<number, BindingRecord>,
): string[] {
  if (entries.length === 0) return ['Nobody has a role.'];
  const groups = new Map<string, string[]>();
  // Global roles first; a stable sort keeps each chat's entries in their given order.
  const globalFirst = [...entries].sort(
    (a, b) => Number(a.bindingId !== null) - Number(b.bindingId !== null),
  );
  for (const e of globalFirst) {
    const b = e.bindingId === null ? undefined : bindings.get(e.bindingId);
    const where = e.bindingId === null ? 'Globally' : `In ${b ? bindingRef(b) : e.scope}`;
    const list = groups.get(where) ?? [];
    list.push(`• ${e.platform}:${e.userId} — ${e.role}`);
    groups.set(where, list);
  }
  return [...groups].flatMap(([where, lines]) => [`${where}:`, ...lines]);
}
