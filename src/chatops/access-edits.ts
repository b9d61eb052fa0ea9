/**
 * The operator's access edits, shared by the CLI (`allow`, `deny`, `bind`, `unbind`) and the web
 * console's Access page, so both apply the same rules and write the same audit entries: refs are
 * checked for their platform's shape, a per-chat role needs the chat bound, a bound workspace
 * must be an existing folder and a default agent a known one. Each returns the sentence to show.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { formatChatRef, parseChatRef, parseUserRef } from '../bridges/refs.ts';
import type { AllowScope, Repositories } from '../db/repositories/index.ts';
import type { Role } from '../db/schema.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { unbindWords } from './listing-words.ts';

/** The repositories the edits touch. */
export type AccessRepos = Pick<
  Repositories,
  'allowlist' | 'bindings' | 'agents' | 'audit' | 'unreachable'
>;

async function scopeOf(repos: AccessRepos, chat: string | undefined): Promise<AllowScope> {
  if (!chat) return 'global';
  const ref = parseChatRef(chat);
  const binding = await repos.bindings.find(ref.chat, ref.thread ?? null);
  if (!binding) {
    throw new NotFoundError(
      `${chat} is not bound; run \`phasebridge bind ${chat} --workspace DIR\` first`,
    );
  }
  return { bindingId: binding.id };
}

async function audit(
  repos: AccessRepos,
  actor: string,
  action: string,
  target: string,
  chatRef: string | undefined,
  detail: string,
): Promise<void> {
  await repos.audit.record({
    actor,
    action,
    target,
    chatRef: chatRef ?? null,
    outcome: 'allowed',
    detail,
  });
}

/** `allow <user> --role R [--chat C]`. */
export async function allowUser(
  repos: AccessRepos,
  actor: string,
  input: { user: string; role: Role; chat?: string | undefined },
): Promise<string> {
  const user = parseUserRef(input.user);
  const scope = await scopeOf(repos, input.chat);
  await repos.allowlist.allow(scope, user.platform, user.id, input.role);
  await audit(repos, actor, 'allow', input.user, input.chat, `role ${input.role}`);
  return `${input.user} is now ${input.role} ${input.chat ? `in ${input.chat}` : 'globally'}`;
}

/** `deny <user> [--chat C]`. */
export async function denyUser(
  repos: AccessRepos,
  actor: string,
  input: { user: string; chat?: string | undefined },
): Promise<string> {
  const user = parseUserRef(input.user);
  const scope = await scopeOf(repos, input.chat);
  const removed = await repos.allowlist.deny(scope, user.platform, user.id);
  await audit(repos, actor, 'deny', input.user, input.chat, removed ? 'removed' : 'had no role');
  const where = input.chat ? `in ${input.chat}` : 'globally';
  return removed
    ? `${input.user} has no role ${where} any more`
    : `${input.user} had no role ${where}`;
}

/** `bind <chat> --workspace DIR [--workflow W] [--agent A]` (following is the CLI's own step). */
export async function bindChat(
  repos: AccessRepos,
  actor: string,
  input: {
    chat: string;
    workspace: string;
    workflow?: string | undefined;
    agent?: string | undefined;
  },
  checkWorkspace: (workspace: string) => Promise<void> = async () => {},
): Promise<string> {
  const ref = parseChatRef(input.chat);
  const workspace = resolve(input.workspace);
  if (!existsSync(workspace) || !statSync(workspace).isDirectory()) {
    throw new InvalidInputError(`workspace ${workspace} is not a folder; create it first`);
  }
  await checkWorkspace(workspace);
  if (input.agent && !(await repos.agents.get(input.agent))) {
    throw new NotFoundError(`no agent named '${input.agent}'; see \`phasebridge agents list\``);
  }
  await repos.bindings.bind({
    chatRef: ref.chat,
    thread: ref.thread ?? null,
    workspace,
    ...(input.workflow && { defaultWorkflow: input.workflow }),
    ...(input.agent && { defaultAgent: input.agent }),
  });
  // An admin binding a chat again is the sign it works again: it is tried again.
  await repos.unreachable.clear(formatChatRef(ref));
  if (ref.thread !== undefined) await repos.unreachable.clear(ref.chat);
  await audit(repos, actor, 'bind', input.chat, input.chat, workspace);
  return `${input.chat} is bound to ${workspace}`;
}

/** `unbind <chat>`: NOT_FOUND when it is not bound. */
export async function unbindChat(repos: AccessRepos, actor: string, chat: string): Promise<string> {
  const ref = parseChatRef(chat);
  const removed = await repos.bindings.remove(ref.chat, ref.thread ?? null);
  if (!removed) throw new NotFoundError(unbindWords(chat, false));
  await audit(repos, actor, 'unbind', chat, chat, 'unbound');
  return unbindWords(chat, true);
}
