/**
 * The approval MCP server of `permissions: ask`, as Claude Code talks to it: the real
 * `phasebridge approval-server` process over stdio, driven by the official MCP client with a
 * recorded permission-prompt call; decisions and expiry go through a real bridge.db.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import {
  createRepositories,
  EXPIRED_REASON,
  type Repositories,
} from '../../../src/db/repositories/index.ts';
import { fixture } from './helpers.ts';

const BIN = path.resolve(import.meta.dirname, '../../../bin/phasebridge.js');
const exchange = JSON.parse(fs.readFileSync(fixture('permission-prompt-exchange.json'), 'utf8'));

let dir: string;
let db: BridgeDb;
let repos: Repositories;
let client: Client | null = null;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-approvals-'));
  db = openBridgeDb({ file: path.join(dir, 'home', 'bridge.db') });
  await migrateToLatest(db);
  repos = createRepositories(db);
});
afterEach(async () => {
  await client?.close();
  client = null;
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Starts the server as Claude would (from its --mcp-config) and connects the MCP client. */
async function connect(expiresIn = '10m'): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'approval-server', '--run', 'run-1', '--step', 'build', '--expires-in', expiresIn],
    env: {
      PATH: process.env.PATH ?? '',
      PHASEBRIDGE_HOME: path.join(dir, 'home'),
      LOG_LEVEL: 'silent',
    },
    stderr: 'pipe',
  });
  client = new Client({ name: 'claude-code-recorded', version: '2.1.328' });
  await client.connect(transport);
  return client;
}

/** Waits for the request to reach bridge.db (polled; the server writes it when called). */
async function pendingRequest() {
  for (;;) {
    const [row] = await repos.toolApprovals.pending();
    if (row) return row;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function text(result: unknown): string {
  return (result as { content: { type: string; text: string }[] }).content[0]!.text;
}

describe('approval-server (MCP, stdio)', () => {
  it('lists its one tool, approve', async () => {
    const c = await connect();
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(['approve']);
  });

  it('Allow once returns allow with the input unchanged', async () => {
    const c = await connect();
    const call = c.callTool(exchange.call);
    const row = await pendingRequest();
    expect(row).toMatchObject({
      runId: 'run-1',
      stepId: 'build',
      tool: 'Bash',
      summary: 'Bash: npm test -- --run',
      status: 'pending',
    });
    expect(
      await repos.toolApprovals.decide(row.id, { allow: true, scope: 'once' }, 'telegram:1'),
    ).toBe(true);
    expect(text(await call)).toBe(exchange.allow);
    // Decided once: a second answer changes nothing.
    expect(
      await repos.toolApprovals.decide(row.id, { allow: false, reason: 'late' }, 'telegram:2'),
    ).toBe(false);
  });

  it("Deny returns the person's reason to the agent", async () => {
    const c = await connect();
    const call = c.callTool(exchange.call);
    const row = await pendingRequest();
    await repos.toolApprovals.decide(
      row.id,
      { allow: false, reason: 'not before the review' },
      'slack:U1',
    );
    expect(text(await call)).toBe(exchange.deny);
  });

  it('an unanswered request is denied at its expiry, and says so', async () => {
    const c = await connect('1s');
    const answer = JSON.parse(text(await c.callTool(exchange.call)));
    expect(answer).toEqual({ behavior: 'deny', message: EXPIRED_REASON });
    const [row] = await db.kysely.selectFrom('tool_approvals').selectAll().execute();
    expect(row).toMatchObject({ status: 'denied', decided_by: 'system', reason: EXPIRED_REASON });
  });

  it('Allow for this run covers later commands with the same prefix without asking again', async () => {
    const c = await connect();
    const first = c.callTool(exchange.call);
    const row = await pendingRequest();
    await repos.toolApprovals.decide(
      row.id,
      { allow: true, scope: 'run', rule: 'Bash:npm' },
      'telegram:1',
    );
    expect(JSON.parse(text(await first)).behavior).toBe('allow');
    const again = await c.callTool({
      name: 'approve',
      arguments: { tool_name: 'Bash', input: { command: 'npm run lint' } },
    });
    expect(JSON.parse(text(again))).toEqual({
      behavior: 'allow',
      updatedInput: { command: 'npm run lint' },
    });
    expect(await repos.toolApprovals.pending()).toEqual([]);
  });
});
