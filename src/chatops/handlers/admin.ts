/** `bind`, `allow`, `deny` and `agents`: administering the chat (admin role). */
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { parseUserRef, type UserRef } from '../../bridges/refs.ts';
import { followedFormat } from '../../engine/layouts/index.ts';
import { InvalidInputError } from '../../errors.ts';
import type { ParsedCommand } from '../grammar.ts';
import { bindingOf, type CommandContext, type HandlerResult } from './types.ts';

/**
 * `bind <workspace> [workflow] [--follow]`: points the binding that serves this chat at another
 * workspace (an absolute folder on the bridge's host) and sets or keeps its default workflow;
 * `--follow` also follows the log the workspace's format tools write (codexclaw's sessions). The binding keeps its id, so its
 * roles survive. Binding a new chat is done by pairing (or the CLI).
 */
export async function bindCommand(
  ctx: CommandContext,
  cmd: Extract<ParsedCommand, { verb: 'bind' }>,
): Promise<HandlerResult> {
  const current = bindingOf(ctx);
  if (!isAbsolute(cmd.workspace)) {
    throw new InvalidInputError(`the workspace must be an absolute path, e.g. /srv/projects/app`);
  }
  const workspace = resolve(cmd.workspace);
  const info = await stat(workspace).catch(() => undefined);
  if (!info?.isDirectory())
    throw new InvalidInputError(`${workspace} is not a folder on the bridge's host`);
  if (cmd.workflow !== undefined) {
    const known = await ctx.deps.orchestrator.listWorkflows(workspace);
    if (!known.some((w) => w.id === cmd.workflow)) {
      throw new InvalidInputError(`no workflow "${cmd.workflow}" in ${workspace}`);
    }
  }
  const follow = cmd.follow ? followedFormat() : undefined;
  if (cmd.follow && !(await follow?.present(workspace))) {
    throw new InvalidInputError(`${workspace} has no ${follow?.folder ?? 'log'} folder to follow`);
  }
  const bound = await ctx.deps.repos.bindings.bind({
    chatRef: current.chatRef,
    thread: current.thread,
    workspace,
    ...(cmd.workflow !== undefined && { defaultWorkflow: cmd.workflow }),
  });
  const dflt = bound.defaultWorkflow ? ` (default workflow ${bound.defaultWorkflow})` : '';
  // Followed from the log's current end: only rows from now on are announced.
  if (follow) await ctx.deps.repos.followed.follow(workspace, await follow.end(workspace));
  const following = follow
    ? `\nFollowing its ${follow.what} (read-only): ${follow.announces} are announced here.`
    : '';
  return {
    outcome: 'allowed',
    target: `binding:${bound.id}`,
    detail: `workspace ${workspace}${dflt}${follow ? `, following ${follow.label}` : ''}`,
    reply: `This chat now works in ${workspace}${dflt}.${following}`,
  };
}

/** `allow <user> <role>`: gives a user a role in this chat's binding. */
export async function allowCommand(
  ctx: CommandContext,
  cmd: Extract<ParsedCommand, { verb: 'allow' }>,
): Promise<HandlerResult> {
  const binding = bindingOf(ctx);
  const user = userOf(ctx, cmd.user);
  await ctx.deps.repos.allowlist.allow({ bindingId: binding.id }, user.platform, user.id, cmd.role);
  const who = `${user.platform}:${user.id}`;
  return {
    outcome: 'allowed',
    target: who,
    detail: `role ${cmd.role} in binding ${binding.id}`,
    reply: `${who} is now ${cmd.role} here.`,
  };
}

/** `deny <user>`: removes a user's role in this chat's binding (never your own). */
export async function denyCommand(
  ctx: CommandContext,
  cmd: Extract<ParsedCommand, { verb: 'deny' }>,
): Promise<HandlerResult> {
  const binding = bindingOf(ctx);
  const user = userOf(ctx, cmd.user);
  const who = `${user.platform}:${user.id}`;
  if (who === ctx.access.actor.id) {
    return {
      outcome: 'failed',
      target: who,
      detail: 'self',
      reply: 'You cannot remove your own role.',
    };
  }
  const { allowlist } = ctx.deps.repos;
  const removed = await allowlist.deny({ bindingId: binding.id }, user.platform, user.id);
  const global = await allowlist.roleOf(user.platform, user.id, null);
  const still = global
    ? ` They still have the global role ${global} (change it with the CLI).`
    : '';
  return {
    outcome: 'allowed',
    target: who,
    detail: removed ? `removed from binding ${binding.id}` : 'had no role',
    reply: `${removed ? `${who} has no role here any more.` : `${who} had no role here.`}${still}`,
  };
}

/** `agents`: the named agents the bridge knows. */
export async function agentsCommand(ctx: CommandContext): Promise<HandlerResult> {
  const agents = await ctx.deps.repos.agents.list();
  const lines = agents.map(
    (a) =>
      `• ${a.name} — ${a.engine}${a.model ? ` (${a.model})` : ''}${a.enabled ? '' : ', disabled'}`,
  );
  if (!agents.some((a) => a.name === 'demo')) lines.push('• demo — built-in scripted demo agent');
  return { outcome: 'allowed', reply: ['Agents:', ...lines].join('\n') };
}

/** A user named as `platform:id`, or a bare id on the sender's platform. Names are refused: they change. */
function userOf(ctx: CommandContext, text: string): UserRef {
  if (text.includes(':')) return parseUserRef(text);
  if (text.startsWith('@')) {
    throw new InvalidInputError(
      `use the user's id, not a name (names change): e.g. ${ctx.event.user.platform}:123456; they can send whoami to see theirs`,
    );
  }
  return parseUserRef(`${ctx.event.user.platform}:${text}`);
}
