/**
 * The real bridge for end-to-end tests: `startBridge` (what `phasebridge serve` runs) on a free
 * port, with a temporary PHASEBRIDGE_HOME and workspace, no chat platform configured, and the
 * demo agent made fast through DEMO_AGENT_BEHAVIOUR (agents inherit this process's env).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type RunningBridge, startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';

/** A started bridge and its temporary folder. */
export interface E2eBridge {
  readonly bridge: RunningBridge;
  readonly dir: string;
  /** Stops the bridge and removes its files. */
  dispose(): Promise<void>;
}

/**
 * Starts the bridge; `sleepMs` is how long each demo agent step takes, `behaviour` more demo
 * agent keys (e.g. `write=NOTES.md`).
 */
export async function startE2eBridge(sleepMs = 20, behaviour = ''): Promise<E2eBridge> {
  process.env.DEMO_AGENT_BEHAVIOUR = `sleep=${sleepMs} ${behaviour}`.trim();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-e2e-'));
  try {
    const config = loadConfig({
      env: {
        PHASEBRIDGE_HOME: path.join(dir, 'home'),
        PHASEBRIDGE_WORKSPACE: path.join(dir, 'ws'),
        PHASEBRIDGE_HOST: '127.0.0.1',
        PHASEBRIDGE_PORT: '0',
        LOG_LEVEL: 'silent',
      },
      cwd: dir,
    });
    const bridge = await startBridge(config, createLogger({ level: 'silent' }), {
      editIntervalMs: 20,
    });
    return {
      bridge,
      dir,
      async dispose() {
        await bridge.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Makes `ws` a git repository with one commit (so steps get diffs) and adds a one-step workflow
 * `slow` whose step takes 5 s and reports progress (for following a live log).
 */
export function prepareGitWorkspace(ws: string): void {
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], {
      cwd: ws,
      stdio: 'ignore',
    });
  git('init', '-q');
  fs.writeFileSync(path.join(ws, 'README.md'), '# demo workspace\n');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'start');
  fs.mkdirSync(path.join(ws, 'workflows'), { recursive: true });
  fs.writeFileSync(
    path.join(ws, 'workflows', 'slow.workflow.yaml'),
    'id: slow\nname: Slow\nsteps:\n  - id: work\n    agent: demo\n    prompt: |\n      Work slowly.\n      demo: sleep=5000 progress=3\n',
  );
}
