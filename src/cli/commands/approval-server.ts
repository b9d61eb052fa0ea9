import type { Command } from 'commander';
import { DURATION_HINT, parseDuration } from '../../engine/workflow/duration.ts';
import { InvalidInputError } from '../../errors.ts';
import type { CliContext } from '../context.ts';

/**
 * `phasebridge approval-server`: the stdio MCP server Claude Code starts for a step with
 * `permissions: ask` (phasebridge writes its --mcp-config). Not for people to run by hand: it
 * speaks MCP on stdin/stdout until Claude closes it. Requests go to bridge.db's tool_approvals
 * and are pushed to the running bridge over its control socket.
 */
export function registerApprovalServerCommand(program: Command, ctx: CliContext): void {
  program
    .command('approval-server')
    .description(
      "the stdio MCP server behind permissions: ask (started by Claude Code from phasebridge's --mcp-config; not run by hand)",
    )
    .requiredOption('--run <id>', 'the run whose step asks')
    .requiredOption('--step <id>', 'the step whose agent asks')
    .option('--attempt <n>', 'the attempt of the step', '1')
    .option(
      '--expires-in <duration>',
      `how long a request waits before it is denied (${DURATION_HINT})`,
      '10m',
    )
    .action(async (opts: { run: string; step: string; attempt: string; expiresIn: string }) => {
      const attempt = Number(opts.attempt);
      const expiresInMs = parseDuration(opts.expiresIn);
      if (!Number.isSafeInteger(attempt) || attempt < 1) {
        throw new InvalidInputError(
          `--attempt must be a whole number >= 1 (got '${opts.attempt}')`,
        );
      }
      if (expiresInMs === null) {
        throw new InvalidInputError(
          `--expires-in '${opts.expiresIn}' is not a duration; ${DURATION_HINT}`,
        );
      }
      // Loaded here: the SDK is not needed by any other command.
      const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
      const { serveApprovals } = await import('../../jobs/runner/approvals/server.ts');
      const { awaitToolDecision } = await import('../../control/client.ts');
      const { controlSocketPath } = await import('../../control/protocol.ts');
      const socketPath = controlSocketPath(await ctx.home());
      const repos = await ctx.repos();
      const transport = new StdioServerTransport();
      const server = await serveApprovals(
        {
          repo: repos.toolApprovals,
          runId: opts.run,
          stepId: opts.step,
          attempt,
          expiresInMs,
          // The bridge is told at once and answers on the decision; bridge.db is polled only
          // while no bridge listens.
          waitForDecision: (id, timeoutMs) => awaitToolDecision(socketPath, id, timeoutMs),
        },
        transport,
      );
      // Claude ends the server by closing its stdin.
      await new Promise<void>((resolve) => {
        server.server.onclose = () => resolve();
        process.stdin.once('end', () => void server.close());
      });
    });
}
