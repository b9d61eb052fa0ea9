import { Command } from 'commander';
import { registerAccessCommands } from './commands/access.ts';
import { registerAgentsCommand } from './commands/agents.ts';
import { registerAnswerCommands } from './commands/answer.ts';
import { registerApprovalServerCommand } from './commands/approval-server.ts';
import { registerArchiveCommand } from './commands/archive.ts';
import { registerAuditCommand } from './commands/audit.ts';
import { registerChatVerbCommands } from './commands/chat-verbs.ts';
import { registerControlCommands } from './commands/control.ts';
import { registerDiffCommand } from './commands/diff.ts';
import { registerDoctorCommand } from './commands/doctor.ts';
import { registerFollowCommand } from './commands/follow.ts';
import { registerInitCommand } from './commands/init.ts';
import { registerLoginCommand } from './commands/login.ts';
import { registerLoginsCommand } from './commands/logins.ts';
import { registerLogsCommand, registerPromptCommand } from './commands/logs.ts';
import { registerMigrateCommand } from './commands/migrate.ts';
import { registerPeopleCommands } from './commands/people.ts';
import { registerPhaseCommand } from './commands/phase.ts';
import { registerPruneCommand } from './commands/prune.ts';
import { registerRepairCommand } from './commands/repair.ts';
import { registerRunCommand } from './commands/run.ts';
import { registerServeCommand } from './commands/serve.ts';
import { registerSessionsCommand } from './commands/sessions.ts';
import { registerSetupCommand } from './commands/setup.ts';
import { registerRunsCommand, registerStatusCommand } from './commands/status.ts';
import { registerWorkerCommand } from './commands/worker.ts';
import type { CliContext } from './context.ts';
import { conciseErrors } from './usage-errors.ts';

/** Builds the `phasebridge` command tree; every subcommand has --help. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('phasebridge')
    .description(
      'Drive coding-agent workflows from chat: runs, checkpoints and phase notifications.',
    )
    .version('0.1.0')
    .exitOverride();
  conciseErrors(program);
  registerServeCommand(program, ctx);
  registerSetupCommand(program, ctx);
  registerInitCommand(program, ctx);
  registerLoginCommand(program, ctx);
  registerLoginsCommand(program, ctx);
  registerMigrateCommand(program, ctx);
  registerDoctorCommand(program, ctx);
  registerAccessCommands(program, ctx);
  registerChatVerbCommands(program, ctx);
  registerAgentsCommand(program, ctx);
  registerRunCommand(program, ctx);
  registerStatusCommand(program, ctx);
  registerRunsCommand(program, ctx);
  registerAnswerCommands(program, ctx);
  registerControlCommands(program, ctx);
  registerApprovalServerCommand(program, ctx);
  registerLogsCommand(program, ctx);
  registerPromptCommand(program, ctx);
  registerDiffCommand(program, ctx);
  registerWorkerCommand(program, ctx);
  registerRepairCommand(program, ctx);
  registerPhaseCommand(program, ctx);
  registerFollowCommand(program, ctx);
  registerPruneCommand(program, ctx);
  registerArchiveCommand(program, ctx);
  registerSessionsCommand(program, ctx);
  registerAuditCommand(program, ctx);
  registerPeopleCommands(program, ctx);
  // Sorted here, not with sortSubcommands: its localeCompare starts ICU collation (~10 ms).
  (program.commands as Command[]).sort((a, b) => (a.name() < b.name() ? -1 : 1));
  // Subcommands inherit exitOverride so bad arguments surface as exit 2 in main().
  const all = (c: Command): Command[] => [c, ...(c.commands as Command[]).flatMap(all)];
  for (const sub of all(program).slice(1)) conciseErrors(sub.exitOverride());
  return program;
}
