/** `whoami` and `help`: answered in every chat, bound or not. */
import type { Platform } from '../../bridges/refs.ts';
import { REQUIRED_ROLE } from '../authorize.ts';
import type { ParsedCommand } from '../grammar.ts';
import { helpText, likelyVerb, unknownCommandText, usageOf, verbOf } from '../grammar.ts';
import { personWords } from '../person-linking.ts';
import { commandHow } from '../unbound-hints.ts';
import type { CommandContext, HandlerResult } from './types.ts';

/** `whoami`: the sender's immutable id, this chat, and their role here. */
export async function whoamiCommand(ctx: CommandContext): Promise<HandlerResult> {
  const { actor, binding, role } = ctx.access;
  const lines = [`You are ${actor.id} (${actor.name}).`, `This chat is ${ctx.event.chatRef}.`];
  if (binding === null) {
    lines.push('It is not bound to a workspace: an admin can pair it with `pair <code>`.');
  } else {
    lines.push(`It works in ${binding.workspace}.`);
    lines.push(role ? `Your role here: ${role}.` : 'You have no role here.');
  }
  const person = await ctx.deps.repos.personLinks.personOf(actor.id);
  if (person !== null) {
    lines.push(
      `You are one person (${person.name}) with ${await personWords(ctx.deps.repos, person)}.`,
    );
  }
  return { outcome: 'allowed', reply: lines.join('\n') };
}

/** The answer to the bot's mention alone: what it is and the few commands to start with. */
export function shortHelpText(platform: Platform): string {
  const how = (words: string) => commandHow(platform, words);
  return [
    `I am phasebridge: I run coding-agent workflows and ask this chat at their checkpoints. Start one with ${how('run <workflow> <task>')}; ${how('status')} shows the runs here.`,
    `To guide a run, reply to its messages. ${how('help')} lists every command.`,
  ].join('\n');
}

/**
 * `help [command]`: every command, or one command's usage and the role it needs; the bot's
 * mention alone (a bare `help`) gets the short help.
 */
export async function helpCommand(
  ctx: CommandContext,
  cmd: Extract<ParsedCommand, { verb: 'help' }>,
): Promise<HandlerResult> {
  if (ctx.event.bare === true) {
    return { outcome: 'allowed', reply: shortHelpText(ctx.event.user.platform) };
  }
  if (cmd.topic === undefined) return { outcome: 'allowed', reply: helpText() };
  const verb = verbOf(cmd.topic);
  if (verb === undefined) {
    const suggestion = likelyVerb(cmd.topic);
    const reply = unknownCommandText(`unknown command "${cmd.topic}"`, suggestion);
    return { outcome: 'allowed', reply };
  }
  const role = REQUIRED_ROLE[verb];
  const needs = role === null ? 'Anyone may use it.' : `Needs the ${role} role.`;
  return { outcome: 'allowed', reply: `${usageOf(verb)}\n${needs}` };
}
