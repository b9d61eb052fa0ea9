/**
 * POST `/api/run-action`: the run page's Approve / Request changes / Reject, Retry failed step
 * and Cancel run. The button becomes the chat command a person would type (`approve <run>
 * [reason]`, `changes <run> <reason>`, `reject <run> <reason>`, `retry <run>`, `reopen <run>`,
 * `cancel <run> [reason]`) and goes through the same chat command path (grammar, authorization,
 * engine, audit) as the console's command box, never a second one; `changes` is the chat alias
 * of `loop`. The chat shows it as typed, and the page gets the chat's answers back.
 */
import { z } from 'zod';
import type { ConsoleContext, PostOutcome } from './console-routes.ts';
import { type ConsoleActor, eventKey, MAX_INPUT_LENGTH, toCommand } from './inbound.ts';

/** POST /api/run-action */
export const runActionBody = z.object({
  run: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/),
  action: z.enum(['approve', 'changes', 'reject', 'retry', 'reopen', 'cancel']),
  reason: z
    .string()
    .trim()
    .max(MAX_INPUT_LENGTH - 300)
    .optional(),
  key: z
    .string()
    .regex(/^[A-Za-z0-9_-]{8,64}$/)
    .optional(),
});

/** The chat's text of an HTML message (tags dropped, entities decoded). */
export function htmlText(html: string): string {
  return html
    .replace(/<br\s*\/?>|<\/(div|dd|dt|p|li)>/g, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\n{2,}/g, '\n')
    .trim();
}

/** Sends the answer as the chat command; returns the chat's replies to it. */
export async function handleRunAction(
  ctx: ConsoleContext,
  body: z.infer<typeof runActionBody>,
  who?: ConsoleActor,
): Promise<PostOutcome> {
  const bare = body.action === 'retry' || body.action === 'reopen';
  const reason = bare ? '' : (body.reason ?? '').replace(/\s+/g, ' ');
  if ((body.action === 'changes' || body.action === 'reject') && reason === '') {
    const what = body.action === 'reject' ? 'why you reject' : 'what should change';
    return { status: 400, error: `Say ${what} in the reason box.` };
  }
  const text = `${body.action} ${body.run}${reason ? ` ${reason}` : ''}`;
  ctx.echo(`› ${text}`);
  // Messages the chat adds while the command is handled are its answers (edits are not).
  const before = Math.max(0, ...ctx.history.all().map((m) => m.n));
  const command = toCommand(text, eventKey('cmd', body.key), [], who);
  if (command) await ctx.emit(command);
  const replies = ctx.history
    .all()
    .filter((m) => m.n > before && m.author === 'bridge')
    .map((m) => htmlText(m.html));
  return { status: 200, back: `/runs/${encodeURIComponent(body.run)}`, replies };
}
