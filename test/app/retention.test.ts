/** A running bridge prunes bridge.db on its own: old audit rows are exported, then removed. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { slow } from '../support/slowdown.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the bridge prunes periodically', () => {
  it('exports and removes audit rows past PHASEBRIDGE_RETAIN_AUDIT while it runs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-app-prune-'));
    const home = path.join(dir, 'home');
    const config = loadConfig({
      env: { PHASEBRIDGE_HOME: home, PHASEBRIDGE_PORT: '0', PHASEBRIDGE_RETAIN_AUDIT: '1h' },
      cwd: dir,
    });
    const bridge = await startBridge(config, createLogger({ level: 'silent' }), {
      worker: false,
      prune: { firstAfterMs: 0, everyMs: 50 },
    });
    cleanups.push(async () => {
      await bridge.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const old = Date.now() - 2 * 3_600_000;
    await bridge.repos.audit.record({
      at: old,
      actor: 'cli:old',
      action: 'bind',
      outcome: 'allowed',
    });
    await bridge.repos.audit.record({ actor: 'cli:new', action: 'bind', outcome: 'allowed' });

    const exportDir = path.join(home, 'audit');
    const deadline = Date.now() + slow(20_000);
    let files: string[] = [];
    while (files.length === 0 && Date.now() < deadline) {
      files = fs.existsSync(exportDir)
        ? fs.readdirSync(exportDir).filter((f) => f.endsWith('.jsonl'))
        : [];
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(files).toHaveLength(1);
    const lines = fs.readFileSync(path.join(exportDir, files[0]!), 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).actor)).toEqual(['cli:old']);
    const left = await bridge.repos.audit.listRecent({ limit: 10 });
    expect(left.map((e) => e.actor)).toEqual(['cli:new']);
  });
});
