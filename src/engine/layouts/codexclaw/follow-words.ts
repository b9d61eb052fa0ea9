/** How a followed codexclaw ledger row reads in chat: session, move, why, who, evidence. */

/** The chat line of one row of `.codexclaw/ledger.jsonl` written by codexclaw itself. */
export function followedRowText(workspace: string, row: Record<string, unknown>): string {
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const session = str(row.sessionId) ?? '(no session id)';
  const from = str(row.from) ?? '∅';
  const reason = str(row.reason) ?? 'no reason';
  const to = reason === 'done' ? `D (done → ${str(row.to) ?? '?'})` : (str(row.to) ?? '?');
  const who = row.actor === 'human' ? 'a human' : 'the agent';
  const override = row.override === true ? ' · override' : '';
  const evidence = str(row.evidence) ? ` · “${str(row.evidence)}”` : '';
  return `🔁 codexclaw session ${session} in ${workspace}: ${from} → ${to} · ${reason} by ${who}${override}${evidence}`;
}
