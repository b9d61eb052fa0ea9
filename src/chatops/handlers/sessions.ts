/** `sessions`: the workspace's interrupted sessions, each offered with Resume / Restart / Abort. */
import { bindingOf, type CommandContext, type HandlerResult } from './types.ts';

/** Posts one offer per interrupted session of the chat's workspace; the reply lists them. */
export async function sessionsCommand(ctx: CommandContext): Promise<HandlerResult> {
  const binding = bindingOf(ctx);
  if (ctx.sessions === undefined) {
    return {
      outcome: 'failed',
      detail: 'no session offers',
      reply: 'Sessions are not offered here.',
    };
  }
  const reply = await ctx.sessions.offerIn(
    ctx.event.chatRef,
    binding.workspace,
    ctx.event.idempotencyKey,
  );
  return { outcome: 'allowed', target: binding.workspace, reply };
}
