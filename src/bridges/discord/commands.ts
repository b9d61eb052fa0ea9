/**
 * Slash command definitions: one command per chat verb with typed options, their registration
 * body, and turning the options of an invocation back into the neutral `args`/`rawText`. The verb
 * table mirrors chatops' grammar (bridges do not import chatops: data flows one way); the caller
 * may pass its own table. Pure; no I/O.
 */
import {
  type APIApplicationCommandBasicOption,
  ApplicationCommandOptionType,
  ApplicationCommandType,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import type { ConfigProblem } from '../../errors.ts';

/**
 * How an option's value reads: one `word` (a run id, a workflow), free `text` (a spec, a reason),
 * or a Discord `user` picked from a list (its immutable id is passed on).
 */
export type SlashOptionKind = 'word' | 'text' | 'user' | 'attachment';

/** One option of a slash command. */
export interface SlashOptionSpec {
  readonly name: string;
  readonly description: string;
  readonly kind: SlashOptionKind;
  readonly required: boolean;
  /** Fixed values offered in a list (at most 25). */
  readonly choices?: readonly string[];
}

/** A slash command; `options` are in the order their values become arguments. */
export interface SlashCommandSpec {
  readonly name: string;
  readonly description: string;
  readonly options: readonly SlashOptionSpec[];
}

const opt = (
  name: string,
  description: string,
  kind: SlashOptionKind,
  required = false,
  choices?: readonly string[],
): SlashOptionSpec => ({ name, description, kind, required, ...(choices && { choices }) });

const RUN = opt('run', 'Run id (default: the one open here)', 'word');
const runNeeded = opt('run', 'Run id', 'word', true);
const reason = opt('reason', 'Why (shown to everyone)', 'text');
const cmd = (name: string, description: string, ...options: SlashOptionSpec[]) => ({
  name,
  description,
  options,
});

/** Roles the `allow` command offers. */
export const ROLE_CHOICES = ['viewer', 'operator', 'approver', 'admin'] as const;

/** The chat verbs as slash commands; `workflows` become choices of `/run workflow:`. */
export function chatopsCommands(workflows: readonly string[] = []): SlashCommandSpec[] {
  const workflowChoices = workflows.length > 0 && workflows.length <= 25 ? workflows : undefined;
  const verbs = [
    cmd(
      'run',
      'Start a run of a workflow',
      opt('workflow', 'Workflow to run', 'word', false, workflowChoices),
      opt('spec', 'What to build (the specification)', 'text'),
      opt('file', 'A photo or document for the agent (saved in the run inputs)', 'attachment'),
    ),
    cmd('status', "A run's progress (default: this chat's active runs)", RUN),
    cmd('phase', "A PABCD run's phase history: who moved it and why", runNeeded),
    cmd(
      'prompt',
      "The full prompt a step's latest attempt was given",
      runNeeded,
      opt('step', 'Step id (default: the latest step that ran)', 'word'),
    ),
    cmd(
      'diff',
      "A step's diff as a file (default: the open checkpoint's step)",
      runNeeded,
      opt('step', 'Step id', 'word'),
    ),
    cmd('runs', "This chat's recent runs"),
    cmd('sessions', 'Interrupted sessions here, with Resume / Restart / Abort'),
    cmd('approve', 'Approve the open checkpoint', RUN, reason),
    cmd('changes', 'Request changes: the step runs again with your reason', RUN, {
      ...reason,
      required: true,
    }),
    cmd('reject', 'Reject the open checkpoint', RUN, { ...reason, required: true }),
    cmd('cancel', 'Cancel a run', runNeeded, reason),
    cmd('resume', 'Resume a paused or interrupted run', runNeeded),
    cmd('skip', "Skip the run's current step", runNeeded, reason),
    cmd('retry', 'Run the failed step again', runNeeded),
    cmd('reopen', 'Ask an expired checkpoint again, with a fresh expiry', runNeeded),
    cmd(
      'revert',
      'Go back to a step; it and later steps run again',
      runNeeded,
      opt('step', 'Step id', 'word', true),
    ),
    cmd(
      'repair',
      "Repair a run's damaged files",
      runNeeded,
      opt('mode', 'dry-run: only say what is wrong', 'word', false, ['dry-run']),
    ),
    cmd('agents', 'The named agents'),
    cmd('workflows', "The workflows of this chat's workspace"),
    cmd(
      'bind',
      'Serve this chat with a workspace (and default workflow)',
      opt('workspace', 'Workspace directory', 'word', true),
      opt('workflow', 'Default workflow', 'word'),
      opt('follow', "Announce its codexclaw sessions' phase changes", 'word', false, ['--follow']),
    ),
    cmd(
      'allow',
      'Give a user a role here',
      opt('user', 'Who', 'user', true),
      opt('role', 'Role', 'word', true, ROLE_CHOICES),
    ),
    cmd('deny', "Remove a user's role here", opt('user', 'Who', 'user', true)),
    cmd('bindings', 'The chats served: chat, thread, workspace, defaults, follow'),
    cmd(
      'unbind',
      'Stop serving a chat (its roles go too)',
      opt('chat', 'Chat ref, e.g. discord:<guild>:<channel>', 'word', true),
    ),
    cmd('access', 'Who has which role here (and globally)'),
    cmd('whoami', 'Your id and role here'),
    cmd('console', 'A sign-in link to the web console, sent to you privately'),
    cmd(
      'link',
      'One person on several platforms: a code to send from your other account',
      opt('code', 'A code from /link elsewhere, or confirm / cancel', 'word'),
    ),
    cmd(
      'pair',
      'Bind this chat with a code printed by `phasebridge serve`',
      opt('code', 'Pairing code', 'word', true),
    ),
  ];
  const names = [...verbs.map((v) => v.name), 'help'];
  // Discord offers at most 25 choices; past that the command is typed (help suggests on a typo).
  const topics = names.length <= 25 ? names : undefined;
  return [
    ...verbs,
    cmd('help', 'The commands, or one command', opt('command', 'Command', 'word', false, topics)),
  ];
}

const NAME = /^[-_\p{Ll}\p{Lo}\p{N}]{1,32}$/u;

/** Every problem Discord would refuse the commands for (empty when valid). */
export function validateCommands(specs: readonly SlashCommandSpec[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const add = (path: string, problem: string, fix: string) => problems.push({ path, problem, fix });
  const describe = (path: string, text: string) => {
    if (text.length < 1 || text.length > 100) {
      add(path, 'description must be 1-100 characters', 'shorten the description');
    }
  };
  if (specs.length > 100) add('discord.commands', 'more than 100 commands', 'register fewer');
  for (const [i, c] of specs.entries()) {
    const path = `discord.commands[${i}]`;
    if (!NAME.test(c.name)) add(path, `invalid name ${JSON.stringify(c.name)}`, '1-32 lower-case');
    describe(path, c.description);
    if (c.options.length > 25) add(path, 'more than 25 options', 'use fewer options');
    for (const [j, o] of c.options.entries()) {
      const p = `${path}.options[${j}]`;
      if (!NAME.test(o.name)) add(p, `invalid name ${JSON.stringify(o.name)}`, '1-32 lower-case');
      describe(p, o.description);
      if (o.choices && (o.choices.length > 25 || o.choices.some((v) => v.length > 100))) {
        add(p, 'at most 25 choices of at most 100 characters', 'offer fewer choices');
      }
    }
  }
  return problems;
}

function toOption(o: SlashOptionSpec): APIApplicationCommandBasicOption {
  const common = { name: o.name, description: o.description, required: o.required };
  if (o.kind === 'user') return { type: ApplicationCommandOptionType.User, ...common };
  if (o.kind === 'attachment') return { type: ApplicationCommandOptionType.Attachment, ...common };
  return {
    type: ApplicationCommandOptionType.String,
    ...common,
    ...(o.choices && { choices: o.choices.map((v) => ({ name: v, value: v })) }),
    ...(o.kind === 'text' && { max_length: 4000 }),
  };
}

/**
 * The body of `PUT /applications/{id}/commands`. Discord wants required options before optional
 * ones, so they are listed that way; argument order is kept by the spec, not by Discord.
 */
export function toRegistrationBody(
  specs: readonly SlashCommandSpec[],
): RESTPostAPIChatInputApplicationCommandsJSONBody[] {
  return specs.map((c) => ({
    type: ApplicationCommandType.ChatInput,
    name: c.name,
    description: c.description,
    options: [...c.options].sort((a, b) => Number(b.required) - Number(a.required)).map(toOption),
  }));
}

/** One option value of an invocation, as Discord sent it. */
export interface OptionValue {
  readonly name: string;
  readonly value: string;
}

/**
 * The neutral arguments of an invocation: values in the spec's order (options Discord sent that
 * the spec does not know follow in Discord's order). `rawText` reads like the typed command:
 * `/verb value value…`; a multi-word value that is not last is quoted so chatops' grammar keeps
 * it one word.
 */
export function invocationText(
  name: string,
  values: readonly OptionValue[],
  spec: SlashCommandSpec | undefined,
): { args: string[]; rawText: string } {
  const order = spec?.options.map((o) => o.name) ?? [];
  const rank = (n: string) => (order.includes(n) ? order.indexOf(n) : order.length);
  const sorted = values
    .map((v, i) => ({ ...v, i }))
    .filter((v) => v.value.trim() !== '')
    .sort((a, b) => rank(a.name) - rank(b.name) || a.i - b.i);
  const parts = sorted.map((v, i) => {
    const text = v.value.trim();
    const last = i === sorted.length - 1;
    return !last && /\s/.test(text) && !text.includes('"') ? `"${text}"` : text;
  });
  return {
    args: sorted.flatMap((v) => v.value.trim().split(/\s+/)),
    rawText: [`/${name}`, ...parts].join(' '),
  };
}
