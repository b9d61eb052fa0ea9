/**
 * Pairing: `phasebridge serve` prints a one-time code; `pair <code>` sent in a chat binds that
 * chat (to the serve's default workspace) and makes the sender its admin. Codes are stored only
 * as hashes, valid 10 minutes, usable once (the repository's conditional UPDATE guarantees it
 * even across processes). 10 characters of a 31-letter alphabet give ~50 bits: not guessable in
 * 10 minutes, and every failed attempt is audited.
 */
import { randomInt } from 'node:crypto';
import type { BindingRecord, Repositories } from '../db/repositories/index.ts';
import { hashPairingCode } from '../db/repositories/pairing.ts';
import { parentChatRef } from './context.ts';
import type { CommandContext, HandlerResult } from './handlers/types.ts';

/** How long a pairing code is valid. */
export const PAIRING_TTL_MS = 10 * 60 * 1000;

/** Letters and digits that cannot be confused when read aloud or typed (no 0/O, 1/I/L). */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 10;

/** Creates and stores (hashed) a one-time code valid for 10 minutes from `now` (ms); returns it. */
export async function createPairingCode(
  repos: Repositories,
  now: number = Date.now(),
): Promise<string> {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  await repos.pairing.create(hashPairingCode(code), now + PAIRING_TTL_MS);
  return code;
}

const FAILURES = {
  unknown:
    'That pairing code is not valid. Check it, or ask for a new one: `phasebridge serve` prints one.',
  used: 'That pairing code was already used. Ask for a new one: `phasebridge serve` prints one.',
  expired: 'That pairing code has expired (codes last 10 minutes). Ask for a new one.',
} as const;

/**
 * `pair <code>`: consumes the code, then makes the sender admin of the binding serving this chat,
 * creating a chat-wide binding to the default workspace when there is none (an existing binding
 * keeps its workspace).
 */
export async function pairCommand(ctx: CommandContext, code: string): Promise<HandlerResult> {
  const { repos, clock, defaultWorkspace } = ctx.deps;
  const result = await repos.pairing.consume(hashPairingCode(code), clock().getTime());
  if (result !== 'ok')
    return { outcome: 'refused', detail: `pairing code ${result}`, reply: FAILURES[result] };
  const { event } = ctx;
  const binding: BindingRecord =
    ctx.access.binding ??
    (await repos.bindings.bind({
      chatRef: parentChatRef(event.chatRef, event.threadRef),
      thread: null,
      workspace: defaultWorkspace,
    }));
  await repos.allowlist.allow(
    { bindingId: binding.id },
    event.user.platform,
    event.user.id,
    'admin',
  );
  return {
    outcome: 'allowed',
    target: `binding:${binding.id}`,
    detail: `paired, workspace ${binding.workspace}`,
    reply: `Paired. This chat works in ${binding.workspace} and you (${ctx.access.actor.name}) are its admin. Send \`help\` for the commands.`,
  };
}
