import { type Command, Option } from 'commander';
import type { AgentRecord } from '../../db/repositories/index.ts';
import { DURATION_HINT, formatDuration, parseDuration } from '../../engine/workflow/duration.ts';
import {
  type AgentPermissions,
  type PermissionPosture,
  POSTURES,
} from '../../engine/workflow/types.ts';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import { assertSupported, describePermissions } from '../../jobs/runner/permissions.ts';
import type { CliContext } from '../context.ts';
import { registerFullAccessCommands } from './full-access.ts';

/** `agents list|add|remove`: the named agents workflows refer to. */
export function registerAgentsCommand(program: Command, ctx: CliContext): void {
  const agents = program.command('agents').description('list, add or remove named agents');

  agents
    .command('list')
    .description('show every named agent')
    .action(async () => {
      const list = await (await ctx.repos()).agents.list();
      if (list.length === 0) {
        console.log('no agents yet; add one with `phasebridge agents add NAME --engine claude`');
        return;
      }
      for (const a of list) console.log(describeAgent(a));
    });

  agents
    .command('add')
    .description('add a named agent; for engine "command" give its argv after --')
    .argument('<name>', 'a short name workflows use, e.g. planner')
    .argument('[argv...]', 'the command and its arguments (engine command), after --')
    .addOption(
      new Option('--engine <engine>', 'how to run it')
        .choices(['command', 'claude', 'codex'])
        .makeOptionMandatory(),
    )
    .option('--model <model>', 'model passed to claude or codex')
    .option('--timeout <duration>', `longest a step may run (${DURATION_HINT})`)
    .addOption(
      new Option('--prompt-via <how>', 'how the prompt reaches the agent').choices([
        'stdin',
        'file',
      ]),
    )
    .option(
      '--env <KEY=VALUE...>',
      'extra environment of the agent (never put bridge secrets here)',
    )
    .addOption(
      new Option(
        '--permissions <posture>',
        'what the agent may do (default: read-only for plan/review steps, else edit; see docs/permissions.md)',
      ).choices(POSTURES),
    )
    .option('--allow-tool <tool...>', 'claude: tools always allowed, e.g. "Bash(npm test)"')
    .option('--deny-tool <tool...>', 'claude: tools always refused, e.g. "Bash(git push:*)"')
    .option('--four-eyes', "ask: the run's starter may not allow its tool requests (only deny)")
    .option(
      '--ask-expires-in <duration>',
      `ask: how long a tool request waits before it is denied (default 10m; ${DURATION_HINT})`,
    )
    .option('--disabled', 'add it disabled')
    .action(async (name: string, argv: string[], opts: AddOptions) => {
      if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(name)) {
        throw new InvalidInputError(
          `agent name '${name}' must be lower-case letters, digits, - or _ (at most 64)`,
        );
      }
      if (opts.engine === 'command' && argv.length === 0) {
        throw new InvalidInputError(
          'engine "command" needs its argv after --, e.g. `agents add lint --engine command -- npm run lint`',
        );
      }
      const timeoutMs = opts.timeout === undefined ? null : parseDuration(opts.timeout);
      if (timeoutMs === null && opts.timeout !== undefined) {
        throw new InvalidInputError(
          `--timeout '${opts.timeout}' is not a duration; ${DURATION_HINT}`,
        );
      }
      const permissions = permissionsOf(name, opts);
      const repos = await ctx.repos();
      const added = await repos.agents.add({
        permissions,
        name,
        engine: opts.engine,
        argv,
        model: opts.model ?? null,
        env: parseEnv(opts.env ?? []),
        timeoutMs,
        promptVia: opts.promptVia ?? null,
        enabled: !opts.disabled,
      });
      await repos.audit.record({
        actor: ctx.actor,
        action: 'agents.add',
        target: name,
        outcome: 'allowed',
      });
      console.log(`added ${describeAgent(added)}`);
    });

  registerFullAccessCommands(agents, ctx);

  agents
    .command('remove')
    .description('remove a named agent')
    .argument('<name>')
    .action(async (name: string) => {
      const repos = await ctx.repos();
      if (!(await repos.agents.remove(name))) throw new NotFoundError(`no agent named '${name}'`);
      await repos.audit.record({
        actor: ctx.actor,
        action: 'agents.remove',
        target: name,
        outcome: 'allowed',
      });
      console.log(`removed agent ${name}`);
    });
}

interface AddOptions {
  engine: 'command' | 'claude' | 'codex';
  model?: string;
  timeout?: string;
  promptVia?: 'stdin' | 'file';
  env?: string[];
  permissions?: PermissionPosture;
  allowTool?: string[];
  denyTool?: string[];
  fourEyes?: boolean;
  askExpiresIn?: string;
  disabled?: boolean;
}

/** The posture given with `agents add`, checked against the engine; null when none was given. */
function permissionsOf(name: string, opts: AddOptions): AgentPermissions | null {
  const lists = (opts.allowTool?.length ?? 0) + (opts.denyTool?.length ?? 0) > 0;
  const asking = opts.fourEyes !== undefined || opts.askExpiresIn !== undefined;
  if (opts.permissions === undefined && !lists && !asking) return null;
  if (opts.permissions === undefined) {
    throw new InvalidInputError(
      '--allow-tool/--deny-tool/--four-eyes/--ask-expires-in need --permissions (read-only, edit, full or ask)',
    );
  }
  const perms: AgentPermissions = { posture: opts.permissions };
  if (opts.allowTool?.length) perms.allow = opts.allowTool;
  if (opts.denyTool?.length) perms.deny = opts.denyTool;
  if (opts.fourEyes !== undefined || opts.askExpiresIn !== undefined) {
    if (opts.permissions !== 'ask') {
      throw new InvalidInputError('--four-eyes and --ask-expires-in need --permissions ask');
    }
    if (opts.fourEyes) perms.fourEyes = true;
    if (opts.askExpiresIn !== undefined) {
      const ms = parseDuration(opts.askExpiresIn);
      if (ms === null) {
        throw new InvalidInputError(
          `--ask-expires-in '${opts.askExpiresIn}' is not a duration; ${DURATION_HINT}`,
        );
      }
      perms.expiresInMs = ms;
    }
  }
  assertSupported(opts.engine, perms, `agent ${name}`);
  return perms;
}

function parseEnv(pairs: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const i = pair.indexOf('=');
    const key = pair.slice(0, i);
    if (i <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) {
      throw new InvalidInputError(`--env '${pair}' must be KEY=VALUE`);
    }
    env[key] = pair.slice(i + 1);
  }
  return env;
}

function describeAgent(a: AgentRecord): string {
  const parts = [a.name, `engine=${a.engine}`];
  if (a.model) parts.push(`model=${a.model}`);
  if (a.argv.length > 0) parts.push(`argv=${JSON.stringify(a.argv)}`);
  if (a.timeoutMs !== null) parts.push(`timeout=${formatDuration(a.timeoutMs)}`);
  if (Object.keys(a.env).length > 0) parts.push(`env=${Object.keys(a.env).join(',')}`);
  if (a.permissions !== null) parts.push(`permissions=${describePermissions(a.permissions)}`);
  if (!a.enabled) parts.push('(disabled)');
  return parts.join('  ');
}
