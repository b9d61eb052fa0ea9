/**
 * The approval MCP server of `permissions: ask`: started per step by Claude Code (stdio, from
 * the `--mcp-config` phasebridge writes), it serves one tool, `approve`, Claude's
 * permission-prompt-tool. Each call is recorded in bridge.db's `tool_approvals` (the server runs
 * in the agent's process tree, on the bridge's machine), then pushed to the bridge
 * (`waitForDecision`, its control socket), which shows it in the run's chats at once and answers
 * when it is decided: no polling while a bridge listens. Without one, bridge.db is looked at every
 * `pollMs`. The call returns once the request is decided, or denies it at its expiry: unanswered
 * means denied.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { z } from 'zod';
import type { ToolApprovalsRepo } from '../../../db/repositories/tool-approvals.ts';
import {
  claudeAnswer,
  matchesRule,
  summarize,
  type ToolDecision,
  type ToolRequest,
} from './protocol.ts';

/** Which step's agent this server answers for, and how long a request may wait. */
export interface ApprovalServerOptions {
  repo: ToolApprovalsRepo;
  runId: string;
  stepId: string;
  attempt: number;
  /** How long a request waits for people before it is denied. */
  expiresInMs: number;
  /** How often bridge.db is looked at when no bridge takes the push (default 200 ms). */
  pollMs?: number;
  /**
   * Hands request `id` to the bridge and resolves when the bridge says it is decided (at most
   * `timeoutMs`); 'unavailable' when no bridge took it. Absent: polling only.
   */
  waitForDecision?: (
    id: string,
    timeoutMs: number,
  ) => Promise<'decided' | 'unknown' | 'unavailable'>;
  now?: () => number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Records the request and waits for its decision (or denies it at expiry). */
export async function decideRequest(
  opts: ApprovalServerOptions,
  req: ToolRequest,
): Promise<ToolDecision> {
  const now = opts.now ?? Date.now;
  const rules = await opts.repo.runRules(opts.runId);
  if (rules.some((rule) => matchesRule(rule, req))) return { allow: true };
  const asked = await opts.repo.ask({
    runId: opts.runId,
    stepId: opts.stepId,
    attempt: opts.attempt,
    tool: req.toolName,
    input: req.input,
    summary: summarize(req),
    expiresAt: now() + opts.expiresInMs,
  });
  for (;;) {
    const row = await opts.repo.get(asked.id);
    if (row?.status === 'allowed') return { allow: true };
    if (row?.status === 'denied') return { allow: false, message: row.reason ?? 'denied' };
    if (row === null) return { allow: false, message: 'the request was lost; denied' };
    const left = row.expiresAt - now();
    if (left <= 0) {
      await opts.repo.expire(asked.id);
      continue;
    }
    const pushed = opts.waitForDecision ? await opts.waitForDecision(asked.id, left) : undefined;
    if (pushed !== 'decided') {
      await sleep(Math.min(opts.pollMs ?? 200, Math.max(1, row.expiresAt - now())));
    }
  }
}

/** Builds the MCP server with its one tool; connect it to a transport (stdio in production). */
export function createApprovalServer(opts: ApprovalServerOptions): McpServer {
  const server = new McpServer({ name: 'phasebridge', version: '1' });
  server.registerTool(
    'approve',
    {
      description:
        'Asks the people of this phasebridge run whether a tool may be used (Allow once, Allow for this run, Deny with a reason).',
      inputSchema: {
        tool_name: z.string(),
        input: z.record(z.string(), z.unknown()),
        tool_use_id: z.string().optional(),
      },
    },
    async (args) => {
      const req: ToolRequest = { toolName: args.tool_name, input: args.input };
      if (args.tool_use_id !== undefined) req.toolUseId = args.tool_use_id;
      const decision = await decideRequest(opts, req);
      return { content: [{ type: 'text', text: claudeAnswer(decision, req) }] };
    },
  );
  return server;
}

/** Starts the server on `transport` (e.g. a StdioServerTransport). */
export async function serveApprovals(
  opts: ApprovalServerOptions,
  transport: Transport,
): Promise<McpServer> {
  const server = createApprovalServer(opts);
  await server.connect(transport);
  return server;
}
