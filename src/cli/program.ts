import { Command } from 'commander';
import type { CliContext } from './context.ts';
import { conciseErrors } from './usage-errors.ts';

/** Adds one module's commands to the program. */
type Register = (program: Command, ctx: CliContext) => void;

/**
 * Every command module: the names (and aliases) it registers, and its register function, imported
 * only when needed. `phasebridge status` loads the status module alone; `--help`, `help`, no
 * command or an unknown one (for "did you mean") load them all. In the bundle each `import()` is
 * a lazy module init: a module's own imports run only when one of its commands is asked for.
 */
const COMMANDS: readonly { names: readonly string[]; load: () => Promise<Register> }[] = [
  {
    names: ['serve'],
    load: async () => (await import('./commands/serve.ts')).registerServeCommand,
  },
  {
    names: ['setup'],
    load: async () => (await import('./commands/setup.ts')).registerSetupCommand,
  },
  { names: ['init'], load: async () => (await import('./commands/init.ts')).registerInitCommand },
  {
    names: ['login', 'console'],
    load: async () => (await import('./commands/login.ts')).registerLoginCommand,
  },
  {
    names: ['logins'],
    load: async () => (await import('./commands/logins.ts')).registerLoginsCommand,
  },
  {
    names: ['migrate'],
    load: async () => (await import('./commands/migrate.ts')).registerMigrateCommand,
  },
  {
    names: ['doctor'],
    load: async () => (await import('./commands/doctor.ts')).registerDoctorCommand,
  },
  {
    names: ['allow', 'deny', 'bind'],
    load: async () => (await import('./commands/access.ts')).registerAccessCommands,
  },
  {
    names: ['workflows', 'whoami', 'bindings', 'unbind', 'access', 'pair'],
    load: async () => (await import('./commands/chat-verbs.ts')).registerChatVerbCommands,
  },
  {
    names: ['agents'],
    load: async () => (await import('./commands/agents.ts')).registerAgentsCommand,
  },
  { names: ['run'], load: async () => (await import('./commands/run.ts')).registerRunCommand },
  {
    names: ['status'],
    load: async () => (await import('./commands/status.ts')).registerStatusCommand,
  },
  { names: ['runs'], load: async () => (await import('./commands/status.ts')).registerRunsCommand },
  {
    names: ['approve', 'reject', 'changes', 'loop'],
    load: async () => (await import('./commands/answer.ts')).registerAnswerCommands,
  },
  {
    names: ['cancel', 'resume', 'retry', 'reopen', 'skip', 'revert'],
    load: async () => (await import('./commands/control.ts')).registerControlCommands,
  },
  {
    names: ['approval-server'],
    load: async () => (await import('./commands/approval-server.ts')).registerApprovalServerCommand,
  },
  { names: ['logs'], load: async () => (await import('./commands/logs.ts')).registerLogsCommand },
  {
    names: ['prompt'],
    load: async () => (await import('./commands/logs.ts')).registerPromptCommand,
  },
  { names: ['diff'], load: async () => (await import('./commands/diff.ts')).registerDiffCommand },
  {
    names: ['worker'],
    load: async () => (await import('./commands/worker.ts')).registerWorkerCommand,
  },
  {
    names: ['repair'],
    load: async () => (await import('./commands/repair.ts')).registerRepairCommand,
  },
  {
    names: ['phase'],
    load: async () => (await import('./commands/phase.ts')).registerPhaseCommand,
  },
  {
    names: ['follow'],
    load: async () => (await import('./commands/follow.ts')).registerFollowCommand,
  },
  {
    names: ['prune'],
    load: async () => (await import('./commands/prune.ts')).registerPruneCommand,
  },
  {
    names: ['archive'],
    load: async () => (await import('./commands/archive.ts')).registerArchiveCommand,
  },
  {
    names: ['sessions'],
    load: async () => (await import('./commands/sessions.ts')).registerSessionsCommand,
  },
  {
    names: ['audit'],
    load: async () => (await import('./commands/audit.ts')).registerAuditCommand,
  },
  {
    names: ['people', 'link'],
    load: async () => (await import('./commands/people.ts')).registerPeopleCommands,
  },
];

/** The command `argv` (node, script, args...) asks for: its first word that is not an option. */
export function commandAsked(argv: readonly string[]): string | undefined {
  // The top level has only --help and --version, neither takes a value.
  return argv.slice(2).find((a) => !a.startsWith('-'));
}

/**
 * Builds the `phasebridge` command tree; every subcommand has --help. With `only` (a command
 * name or alias), only the module registering that command is loaded; its commands read and
 * parse exactly as in the whole tree. Unknown or absent: the whole tree.
 */
export async function buildProgram(ctx: CliContext, only?: string): Promise<Command> {
  const program = new Command('phasebridge')
    .description(
      'Drive coding-agent workflows from chat: runs, checkpoints and phase notifications.',
    )
    .version('0.1.0')
    .exitOverride();
  conciseErrors(program);
  const asked = COMMANDS.find((c) => only !== undefined && c.names.includes(only));
  const registers = await Promise.all((asked ? [asked] : COMMANDS).map((c) => c.load()));
  for (const register of registers) register(program, ctx);
  // Sorted here, not with sortSubcommands: its localeCompare starts ICU collation (~10 ms).
  (program.commands as Command[]).sort((a, b) => (a.name() < b.name() ? -1 : 1));
  // Subcommands inherit exitOverride so bad arguments surface as exit 2 in main().
  const all = (c: Command): Command[] => [c, ...(c.commands as Command[]).flatMap(all)];
  for (const sub of all(program).slice(1)) conciseErrors(sub.exitOverride());
  return program;
}
