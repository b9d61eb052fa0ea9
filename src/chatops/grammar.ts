/**
 * The chat command grammar, the same on every platform: verbs, their usage lines, and parsing of
 * a command's argument text into a typed command. Pure; no I/O.
 */
import { ROLES } from '../db/repositories/allowlist.ts';
import type { Role } from '../db/schema.ts';
import { RUN_ID_PATTERN } from '../engine/model.ts';
import { closest } from './suggest.ts';
import { restOf, type Token, tokenize } from './tokenize.ts';
import { VOCABULARY } from './vocabulary.ts';

/** Every verb, in the order `help` lists them. */
export const VERBS = [
  'run',
  'status',
  'phase',
  'prompt',
  'diff',
  'runs',
  'sessions',
  'approve',
  'changes',
  'reject',
  'cancel',
  'resume',
  'skip',
  'retry',
  'reopen',
  'revert',
  'repair',
  'agents',
  'workflows',
  'bind',
  'allow',
  'deny',
  'bindings',
  'unbind',
  'access',
  'whoami',
  'console',
  'link',
  'pair',
  'help',
] as const;

/** One chat verb. */
export type Verb = (typeof VERBS)[number];

/** Usage line and one-line description per verb. */
export const USAGE: Readonly<Record<Verb, { usage: string; about: string }>> = {
  run: {
    usage: 'run <workflow> [spec…]',
    about: 'start a run; reply to a message with `run <workflow>` to use it as the spec',
  },
  status: { usage: 'status [run]', about: "a run's progress (default: this chat's active runs)" },
  phase: {
    usage: 'phase <run>',
    about: "a PABCD run's phase history: who moved it, when and why",
  },
  prompt: {
    usage: 'prompt <run> [step]',
    about: "the full prompt a step's latest attempt was given (default: the latest step that ran)",
  },
  diff: {
    usage: 'diff <run> [step]',
    about:
      "a step's diff as a file (default: the open checkpoint's step, else the latest step that ran)",
  },
  runs: { usage: 'runs', about: "this chat's recent runs" },
  sessions: {
    usage: 'sessions',
    about:
      "interrupted coordinator sessions and active/blocked flow runs of this chat's workspace, each with Resume / Restart / Abort buttons",
  },
  approve: { usage: 'approve [run] [reason]', about: 'approve the open checkpoint' },
  changes: {
    usage: 'changes [run] <reason>',
    about:
      'request changes at the open checkpoint: the step runs again with your reason (alias: loop)',
  },
  reject: { usage: 'reject [run] <reason>', about: 'reject the open checkpoint' },
  cancel: { usage: 'cancel <run> [reason]', about: 'cancel a run' },
  resume: { usage: 'resume <run>', about: 'resume a paused or interrupted run' },
  skip: { usage: 'skip <run> [reason]', about: "skip the run's current step" },
  retry: { usage: 'retry <run>', about: 'run the failed step again' },
  reopen: {
    usage: 'reopen <run>',
    about: 'open an expired checkpoint again, with a fresh expiry',
  },
  revert: {
    usage: 'revert <run> <step>',
    about: 'go back to a step; it and later steps run again',
  },
  repair: {
    usage: 'repair <run> [dry-run]',
    about: "repair a run's damaged files (dry-run: only say what is wrong and what it would drop)",
  },
  agents: { usage: 'agents', about: 'the named agents' },
  workflows: { usage: 'workflows', about: "the workflows of this chat's workspace" },
  bind: {
    usage: 'bind <workspace> [workflow] [--follow]',
    about:
      "serve this chat with another workspace (and default workflow); --follow: announce its codexclaw sessions' phase changes here",
  },
  allow: { usage: 'allow <user> <role>', about: `give a user a role here (${ROLES.join(', ')})` },
  deny: { usage: 'deny <user>', about: "remove a user's role here" },
  bindings: {
    usage: 'bindings',
    about: 'the chats served: chat, thread, workspace, defaults, follow',
  },
  unbind: {
    usage: 'unbind <chat>',
    about: 'stop serving a chat (its roles go too), e.g. unbind telegram:-1001234',
  },
  access: { usage: 'access', about: 'who has which role here (and globally)' },
  whoami: { usage: 'whoami', about: 'your id and role here' },
  console: {
    usage: 'console',
    about: 'a one-time link, sent to you privately, that signs you in to the web console as you',
  },
  link: {
    usage: 'link [code|confirm|cancel]',
    about:
      'one person on several platforms: link gives a code to send from your other account, link confirm finishes (no role is granted)',
  },
  pair: {
    usage: 'pair <code>',
    about: 'bind this chat with a code printed by `phasebridge serve`',
  },
  help: { usage: 'help [command]', about: 'the commands, or one command' },
};

/** Other names a verb is known by (`start` is what Telegram sends when a chat opens the bot). */
const ALIASES: Readonly<Record<string, Verb>> = { start: 'help', list: 'runs', loop: 'changes' };

/** A parsed chat command. */
export type ParsedCommand =
  /** `first`/`rest`: the first word and what follows; `text`: all of it (for a default workflow). */
  | { verb: 'run'; first?: string; rest?: string; text?: string }
  | { verb: 'status'; runId?: string }
  | { verb: 'approve'; runId?: string; reason?: string }
  | { verb: 'reject' | 'changes'; runId?: string; reason: string }
  | { verb: 'cancel' | 'skip'; runId: string; reason?: string }
  | { verb: 'resume' | 'retry' | 'reopen'; runId: string }
  | { verb: 'phase'; runId: string }
  | { verb: 'prompt'; runId: string; stepId?: string }
  | { verb: 'diff'; runId: string; stepId?: string }
  | { verb: 'revert'; runId: string; stepId: string }
  | { verb: 'repair'; runId: string; dryRun: boolean }
  | { verb: 'bind'; workspace: string; workflow?: string; follow?: true }
  | { verb: 'allow'; user: string; role: Role }
  | { verb: 'deny'; user: string }
  | { verb: 'unbind'; chat: string }
  | { verb: 'pair'; code: string }
  /** No field: ask for a code; `code`: send one from another account; `step`: the issuer's answer. */
  | { verb: 'link'; code?: string; step?: 'confirm' | 'cancel' }
  | { verb: 'help'; topic?: string }
  | {
      verb:
        | 'runs'
        | 'sessions'
        | 'agents'
        | 'workflows'
        | 'whoami'
        | 'bindings'
        | 'access'
        | 'console';
    };

/** Why a command could not be parsed; `verb` is set when the verb was known (bad arguments). */
export interface ParseFailure {
  readonly verb?: Verb;
  readonly problem: string;
  /** For an unknown command: the verb it most likely meant. */
  readonly suggestion?: Verb;
}

/** Parse outcome. */
export type ParseResult =
  | { ok: true; command: ParsedCommand }
  | { ok: false; failure: ParseFailure };

/** The verb a name stands for (case-insensitive, aliases included), or undefined. */
export function verbOf(name: string): Verb | undefined {
  const n = name.toLowerCase();
  return (VERBS as readonly string[]).includes(n) ? (n as Verb) : ALIASES[n];
}

/**
 * The verb a mistyped or shortened command most likely meant: the first verb it starts (2 letters
 * or more), else the nearest verb or alias (`lop` means `changes`), else none.
 */
export function likelyVerb(name: string): Verb | undefined {
  const n = name.toLowerCase();
  const prefixed = n.length >= 2 ? VERBS.find((v) => v.startsWith(n)) : undefined;
  if (prefixed !== undefined) return prefixed;
  const word = closest(n, [...VERBS, ...Object.keys(ALIASES)]);
  return word === undefined ? undefined : verbOf(word);
}

/** True when `text` has the shape of a run id. */
export const isRunId = (text: string): boolean => RUN_ID_PATTERN.test(text);

/**
 * The argument text of a command: `rawText` without its leading `/verb[@bot]`; when the raw text
 * does not start with the verb (an adapter that strips it), the words joined by spaces.
 */
export function argumentText(name: string, rawText: string, args: readonly string[]): string {
  const m = /^\s*\/?([^\s@]+)(@\S*)?/.exec(rawText);
  if (m && m[1]!.toLowerCase() === name.toLowerCase()) return rawText.slice(m[0].length);
  return args.join(' ');
}

/** Parses a verb and its argument text. */
export function parseCommand(name: string, text: string): ParseResult {
  const verb = verbOf(name);
  if (verb === undefined) {
    const suggestion = likelyVerb(name);
    const problem = `unknown command "${name}"`;
    return { ok: false, failure: suggestion ? { problem, suggestion } : { problem } };
  }
  const tokens = tokenize(text);
  const words = tokens.map((t) => t.value);
  const count = (min: number, max: number) => words.length >= min && words.length <= max;
  const ok = (command: ParsedCommand): ParseResult => ({ ok: true, command });
  switch (verb) {
    case 'run':
      return ok({ verb, ...runArgs(text, tokens) });
    case 'status':
      if (!count(0, 1) || (words[0] !== undefined && !isRunId(words[0]))) return bad(verb);
      return ok(words[0] === undefined ? { verb } : { verb, runId: words[0] });
    case 'approve':
    case 'reject':
    case 'changes':
      return answerArgs(verb, text, tokens);
    case 'cancel':
    case 'skip':
      if (words[0] === undefined || !isRunId(words[0])) return bad(verb);
      return ok(withReason({ verb, runId: words[0] }, restOf(text, tokens, 1)));
    case 'resume':
    case 'retry':
    case 'reopen':
    case 'phase':
      if (!count(1, 1) || !isRunId(words[0]!)) return bad(verb);
      return ok({ verb, runId: words[0]! });
    case 'prompt':
    case 'diff':
      if (!count(1, 2) || !isRunId(words[0]!)) return bad(verb);
      return ok(
        words[1] === undefined
          ? { verb, runId: words[0]! }
          : { verb, runId: words[0]!, stepId: words[1] },
      );
    case 'revert':
      if (!count(2, 2) || !isRunId(words[0]!)) return bad(verb);
      return ok({ verb, runId: words[0]!, stepId: words[1]! });
    case 'repair': {
      const mode = words[1]?.toLowerCase().replace(/^--/, '');
      if (!count(1, 2) || !isRunId(words[0]!)) return bad(verb);
      if (mode !== undefined && mode !== 'dry-run') {
        return fail(verb, `"${words[1]}" is not dry-run`);
      }
      return ok({ verb, runId: words[0]!, dryRun: mode === 'dry-run' });
    }
    case 'bind': {
      const follow = words.filter((w) => w.toLowerCase() === '--follow').length;
      const rest = words.filter((w) => w.toLowerCase() !== '--follow');
      if (follow > 1 || rest.length < 1 || rest.length > 2) return bad(verb);
      return ok({
        verb,
        workspace: rest[0]!,
        ...(rest[1] !== undefined && { workflow: rest[1] }),
        ...(follow === 1 && { follow: true as const }),
      });
    }
    case 'allow': {
      const role = words[1]?.toLowerCase();
      if (!count(2, 2)) return bad(verb);
      if (!(ROLES as readonly string[]).includes(role!)) {
        return fail(verb, `"${words[1]}" is not a role; roles: ${ROLES.join(', ')}`);
      }
      return ok({ verb, user: words[0]!, role: role as Role });
    }
    case 'deny':
      return count(1, 1) ? ok({ verb, user: words[0]! }) : bad(verb);
    case 'unbind':
      return count(1, 1) ? ok({ verb, chat: words[0]! }) : bad(verb);
    case 'pair':
      return count(1, 1) ? ok({ verb, code: words[0]! }) : bad(verb);
    case 'link': {
      if (!count(0, 1)) return bad(verb);
      const word = words[0];
      if (word === undefined) return ok({ verb });
      const step = word.toLowerCase();
      return ok(step === 'confirm' || step === 'cancel' ? { verb, step } : { verb, code: word });
    }
    case 'help':
      if (!count(0, 1)) return bad(verb);
      return ok(words[0] === undefined ? { verb } : { verb, topic: words[0].replace(/^\//, '') });
    default:
      return count(0, 0) ? ok({ verb }) : bad(verb);
  }
}

function runArgs(text: string, tokens: readonly Token[]) {
  const first = tokens[0]?.value;
  const rest = restOf(text, tokens, 1);
  const all = restOf(text, tokens, 0);
  return {
    ...(first !== undefined && { first }),
    ...(rest !== undefined && { rest }),
    ...(all !== undefined && { text: all }),
  };
}

/** `approve [run] [reason]` / `reject|changes [run] <reason>`: a first word shaped like a run id is one. */
function answerArgs(
  verb: 'approve' | 'reject' | 'changes',
  text: string,
  tokens: readonly Token[],
) {
  const hasRun = tokens[0] !== undefined && !tokens[0].quoted && isRunId(tokens[0].value);
  const reason = restOf(text, tokens, hasRun ? 1 : 0);
  const runId = hasRun ? { runId: tokens[0]!.value } : {};
  if (verb === 'reject' || verb === 'changes') {
    if (reason === undefined || reason === '') {
      return fail(verb, verb === 'reject' ? 'a reject needs a reason' : 'say what to change');
    }
    return { ok: true, command: { verb, ...runId, reason } } as const;
  }
  return { ok: true, command: withReason({ verb, ...runId }, reason) } as const;
}

function withReason<T extends object>(
  base: T,
  reason: string | undefined,
): T & { reason?: string } {
  return reason === undefined || reason === '' ? base : { ...base, reason };
}

function bad(verb: Verb): ParseResult {
  return fail(verb, 'bad arguments');
}

function fail(verb: Verb | undefined, problem: string): ParseResult {
  return { ok: false, failure: verb === undefined ? { problem } : { verb, problem } };
}

/** `Usage: <usage line> — <about>` for one verb. */
export function usageOf(verb: Verb): string {
  return `Usage: ${USAGE[verb].usage} — ${USAGE[verb].about}`;
}

/** Help's groups, in order: who may use the verbs listed under each heading. */
const HELP_GROUPS = [
  ['Anyone', null],
  ['Viewers', 'viewer'],
  ['Operators', 'operator'],
  ['Approvers', 'approver'],
  ['Admins', 'admin'],
] as const;

/** The whole command list, grouped by the role each verb needs, one usage line each. */
export function helpText(): string {
  const groups = HELP_GROUPS.map(([title, role]) => {
    const lines = VERBS.filter((v) => VOCABULARY[v].role === role).map(
      (v) => `${USAGE[v].usage} — ${USAGE[v].about}`,
    );
    return [`${title}:`, ...lines].join('\n');
  });
  return ['Commands (each role may also use those of the roles above it):', ...groups].join('\n\n');
}

/** What to answer a failed parse: the problem and that command's usage (or the list). */
export function failureText(failure: ParseFailure): string {
  if (failure.verb === undefined) return unknownCommandText(failure.problem, failure.suggestion);
  return `${capitalise(failure.problem)}.\n${usageOf(failure.verb)}`;
}

/**
 * An unknown command's answer: the likely command first, with its usage; otherwise one line
 * pointing to `help` (the full list is long on a phone).
 */
export function unknownCommandText(problem: string, suggestion?: Verb): string {
  if (suggestion !== undefined) {
    return `Did you mean ${suggestion}? (${problem})\n${usageOf(suggestion)}`;
  }
  return `${capitalise(problem)}. Send help for the list of commands.`;
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
