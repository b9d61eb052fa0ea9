/**
 * The real Claude Code and Codex CLIs, run for real without network and without a login (HOME is
 * a fresh temp folder): a step shows the agent's own reason, `doctor` reports both engines as not
 * logged in, and every argv the posture table builds is accepted by the real parser.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import { createRepositories } from '../../src/db/repositories/index.ts';
import { buildArgv } from '../../src/jobs/runner/agent-argv.ts';
import { type PermissionPosture, POSTURE_FLAGS } from '../../src/jobs/runner/permissions.ts';
import { runAgent } from '../../src/jobs/runner/run-agent.ts';
import { formatDuration } from '../../src/jobs/runner/supervise.ts';
import type { AgentDefinition } from '../../src/jobs/runner/types.ts';
import { runCliAsync } from '../cli/support.ts';
import { invocation, makeTempRun, type TempRun } from '../jobs/runner/helpers.ts';
import { AGENT_CLI_BIN, agentClisInstalled, NO_AGENT_CLIS_BANNER } from '../support/agent-clis.ts';
import { inCi } from '../support/redis.ts';
import { slow } from '../support/slowdown.ts';

let home = '';
let run: TempRun;
/** The environment of a worker with no login: PATH has the cached CLIs, HOME is empty. */
const env = (): Record<string, string> => ({
  PATH: `${AGENT_CLI_BIN}${path.delimiter}${process.env.PATH ?? ''}`,
  HOME: home,
});

const installed = agentClisInstalled();

if (installed) {
  beforeAll(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-nologin-'));
    run = makeTempRun();
  });
  afterAll(() => {
    run.cleanup();
    fs.rmSync(home, { recursive: true, force: true });
  });

  describe('real CLIs, offline and not logged in', () => {
    it('a claude step fails with "Not logged in · Please run /login" and the fix', async () => {
      const agent: AgentDefinition = { name: 'claude', engine: 'claude', argv: [], env: {} };
      const out = await runAgent(agent, invocation(run, { baseEnv: env(), timeoutMs: 60_000 }));
      expect(out.ok).toBe(false);
      expect(out.failure).toContain('Not logged in · Please run /login (authentication_failed)');
      expect(out.failure).toContain('fix: not logged in: run `claude /login`');
    });

    it('a codex step that times out says it was waiting for the network', async () => {
      const agent: AgentDefinition = {
        name: 'codex',
        engine: 'codex',
        argv: [],
        env: {},
        permissions: { posture: 'read-only' },
      };
      // Codex says it waits for the network within a second on a quiet machine; a loaded one
      // may take several before its first line, so the step's own timeout scales too.
      const timeoutMs = slow(8000);
      const out = await runAgent(agent, invocation(run, { baseEnv: env(), timeoutMs }));
      expect(out.timedOut).toBe(true);
      expect(out.failure).toMatch(
        new RegExp(
          `^timed out after ${formatDuration(timeoutMs)}; last: .*(waiting for network|Reconnecting|failed to lookup address).* — fix: no network`,
        ),
      );
    });

    it('doctor reports both engines as not logged in, with the fix', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-doctor-cli-'));
      const pbHome = path.join(dir, 'home');
      try {
        // The agents go straight into bridge.db: only doctor needs to be the real CLI.
        const db = openBridgeDb({ file: path.join(pbHome, 'bridge.db') });
        await migrateToLatest(db);
        const repos = createRepositories(db);
        await repos.agents.add({ name: 'planner', engine: 'claude' });
        await repos.agents.add({ name: 'coder', engine: 'codex' });
        await db.close();
        const res = await runCliAsync(['doctor'], pbHome, dir, env());
        if (!res.out.includes('engine codex'))
          throw new Error(`doctor said: ${res.out}\n${res.err}`);
        expect(res.code).toBe(1);
        expect(res.out).toMatch(/ok {6}engine claude: claude 2\.1\.\d+ \(Claude Code\)/);
        expect(res.out).toMatch(/failed {2}engine claude login: not logged in/);
        expect(res.out).toContain('fix: not logged in: run `claude /login`');
        expect(res.out).toMatch(/ok {6}engine codex: codex codex-cli 0\.\d+/);
        expect(res.out).toMatch(/failed {2}engine codex login: not logged in/);
        expect(res.out).toContain('fix: not logged in: run `codex login`');
        expect(res.out).toMatch(/ok {6}engine claude flags: 2 argv\(s\) accepted/);
        expect(res.out).toMatch(/ok {6}engine codex flags: 2 argv\(s\) accepted/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('the real parsers accept every argv the posture table builds', () => {
    const ctx = {
      runId: 'r',
      stepId: 's',
      attempt: 1,
      workspace: '/tmp',
      prompt: 'p',
      specFile: '/tmp/spec.md',
      directiveFile: '/tmp/directive.json',
      logFile: '/tmp/logs/s-1.log',
    };
    for (const posture of Object.keys(POSTURE_FLAGS.claude) as PermissionPosture[]) {
      it(`claude ${posture}`, () => {
        const mcpConfig = path.join(home, 'mcp.json');
        fs.writeFileSync(mcpConfig, '{"mcpServers":{}}');
        const agent: AgentDefinition = {
          name: 'c',
          engine: 'claude',
          argv: [],
          env: {},
          permissions: { posture, allow: ['Bash(npm test)', 'Read'], deny: ['WebFetch'] },
        };
        const cmd = buildArgv(agent, { ...ctx, mcpConfig });
        // Claude's parser ignores unknown options beside --help, so it runs for real: with no
        // login it stops at "Not logged in" after parsing, before any network.
        const res = spawnSync(path.join(AGENT_CLI_BIN, 'claude'), cmd.args, {
          input: 'p',
          env: env(),
          cwd: home,
          encoding: 'utf8',
          timeout: slow(60_000),
        });
        expect(`${res.stdout}${res.stderr}`).not.toMatch(/unknown option|error: option/);
        if (posture === 'full' && process.getuid?.() === 0) {
          // As root Claude refuses bypassPermissions itself, after parsing it.
          expect(res.stderr).toContain('cannot be used with root/sudo privileges');
        } else {
          expect(res.stdout).toContain('Not logged in · Please run /login');
        }
      });
    }
    for (const posture of ['read-only', 'edit', 'full'] as const) {
      it(`codex ${posture}`, () => {
        const agent: AgentDefinition = {
          name: 'x',
          engine: 'codex',
          argv: [],
          env: {},
          permissions: { posture },
        };
        const cmd = buildArgv(agent, ctx);
        // Codex's parser (clap) rejects unknown flags and values even beside --help.
        const args = [...cmd.args.filter((a) => a !== '-'), '--help'];
        const out = execFileSync(path.join(AGENT_CLI_BIN, 'codex'), args, {
          env: env(),
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        expect(out).toContain('--sandbox');
      });
    }
  });
} else {
  describe('real agent CLIs', () => {
    if (inCi()) {
      it('are installed in CI (run node scripts/install-agent-clis.mjs)', () => {
        expect(agentClisInstalled()).toBe(true);
      });
    } else {
      it.skip('need node scripts/install-agent-clis.mjs', () => {});
    }
  });
  process.stderr.write(NO_AGENT_CLIS_BANNER);
}
