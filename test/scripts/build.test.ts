/**
 * `npm start` runs the esbuild bundle (dist/main.js), not the TypeScript sources the other tests
 * load: this checks the bundle itself serves, answers /readyz and stops cleanly on SIGTERM, and
 * that it keeps a code cache of the command.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { slow } from '../support/slowdown.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-dist-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the built bundle (npm start)', () => {
  it('builds, serves the console, is ready, and exits 0 on SIGTERM', async () => {
    const build = spawnSync(process.execPath, ['scripts/build.mjs'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(build.status, build.stderr).toBe(0);

    const child = spawn(process.execPath, [path.join(ROOT, 'dist/main.js'), 'serve'], {
      cwd: dir,
      env: { PATH: process.env.PATH, PHASEBRIDGE_PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += String(d);
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    const deadline = Date.now() + slow(20_000);
    let url: string | undefined;
    while (!url && Date.now() < deadline) {
      url = /Web console: (http:\/\/127\.0\.0\.1:\d+)\/\?token=/.exec(out)?.[1];
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(url, out).toBeDefined();
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect((await fetch(`${url}/`)).status).toBe(401);
    expect(fs.existsSync(path.join(dir, '.phasebridge', 'bridge.db'))).toBe(true);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // dist/main.js runs the CommonJS bundle it names, and kept a V8 code cache of this command.
    const launcher = fs.readFileSync(path.join(ROOT, 'dist/main.js'), 'utf8');
    const bundle = /^const BUNDLE = "(main-[^"]+\.cjs)";$/m.exec(launcher)?.[1];
    const cache = `dist/cache/${bundle}.serve.${process.versions.v8}.v8`;
    expect(fs.existsSync(path.join(ROOT, cache)), cache).toBe(true);
  });
});
