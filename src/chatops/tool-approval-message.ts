/**
 * The tool approval message of `permissions: ask`, pure: open (tool, input summary, expiry,
 * buttons Allow once / Allow for this run / Deny) or closed (who decided what, or the expiry).
 * Button ids are the message's token from checkpoint_messages plus `.o`, `.u` or `.d`.
 */

import type { MessageButton, OutgoingMessage, RichSegment } from '../bridges/messages.ts';
import { bold, code, plain, rich } from '../bridges/render-text.ts';
import type { ToolApprovalRecord } from '../db/repositories/tool-approvals.ts';
import type { Person } from '../engine/person-name.ts';
import { personSegment, timeWords } from './words.ts';

/** Prefix of a tool approval's id where checkpoint ids go (checkpoint_messages, reason_prompts). */
export const TOOL_PREFIX = 'tool:';

/** What a button does. */
export type ToolAnswer = 'once' | 'run' | 'deny';

const SUFFIX: Readonly<Record<ToolAnswer, string>> = { once: 'o', run: 'u', deny: 'd' };

/** The three buttons of an open request. */
export function toolButtons(token: string, rule: string): MessageButton[] {
  return [
    { id: `${token}.o`, label: 'Allow once', style: 'primary' },
    { id: `${token}.u`, label: `Allow for this run (${rule})`, style: 'default' },
    { id: `${token}.d`, label: 'Deny', style: 'danger' },
  ];
}

/** Splits a pressed button id into token and answer; undefined when it is not a tool button. */
export function parseToolButton(id: string): { token: string; answer: ToolAnswer } | undefined {
  const m = /^([A-Za-z0-9_-]{16,60})\.([oud])$/.exec(id);
  if (!m) return undefined;
  const answer = (Object.keys(SUFFIX) as ToolAnswer[]).find((a) => SUFFIX[a] === m[2]);
  return answer === undefined ? undefined : { token: m[1]!, answer };
}

/** The open message: which step asks to use which tool on what, until when (and four-eyes). */
export function renderOpenTool(
  r: ToolApprovalRecord,
  token: string,
  rule: string,
  fourEyes = false,
): OutgoingMessage {
  return {
    text: rich(
      plain('🔐 '),
      bold('Tool approval'),
      plain(` — run ${r.runId}, step ${r.stepId}\nThe agent wants to use ${r.tool}:\n`),
      code(r.summary),
    ),
    fields: [
      {
        label: 'Expires',
        value: `${timeWords(new Date(r.expiresAt).toISOString())} (then denied)`,
      },
      ...(fourEyes
        ? [{ label: 'Policy', value: 'four-eyes: not allowed by the run starter' }]
        : []),
    ],
    buttons: toolButtons(token, rule),
  };
}

/** The closed message: allowed (once or for the run), denied with the reason, or expired. */
export function renderClosedTool(
  r: ToolApprovalRecord,
  decider: Person = { id: r.decidedBy ?? '' },
): OutgoingMessage {
  // The decider as every decision shows them: a mention in their own platform's chat.
  const by = personSegment(decider);
  const at = r.decidedAt === null ? '' : ` at ${timeWords(new Date(r.decidedAt).toISOString())}`;
  let outcome: RichSegment[];
  if (r.status === 'allowed') {
    const how = r.scope === 'run' ? `for this run (${r.rule})` : 'once';
    outcome = [plain(`✅ Allowed ${how} by `), by, plain(at)];
  } else if (r.decidedBy === 'system') {
    outcome = [plain(`⌛ Expired${at}: nobody answered, so it was denied`)];
  } else {
    outcome = [plain('❌ Denied by '), by, plain(`${at}: ${r.reason}`)];
  }
  return {
    text: rich(
      bold('Tool approval'),
      plain(` — run ${r.runId}, step ${r.stepId}: ${r.tool}\n`),
      code(r.summary),
      plain('\n'),
      ...outcome,
    ),
    buttons: [],
  };
}
