/**
 * The system chromium for browser tests, driven by playwright-core (`npx playwright install`
 * cannot download here, so Debian's package is used). Where chromium is missing a local run
 * skips with a loud banner, and CI (CI=true) fails: a browser test silently skipped in CI would
 * pass without testing anything.
 */
import fs from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { slow } from '../support/slowdown.ts';

/** Where chromium is looked for; PHASEBRIDGE_CHROMIUM names another binary. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** Flags that keep a headless run quiet and self-contained (no network but the bridge). */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

/** The chromium binary to drive, or undefined when none is installed. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const wanted = env.PHASEBRIDGE_CHROMIUM;
  if (wanted) return fs.existsSync(wanted) ? wanted : undefined;
  return CANDIDATES.find((p) => fs.existsSync(p));
}

/** True when running in CI, where a missing browser is a failure rather than a skip. */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.CI === '1';
}

/** The banner shown when chromium is missing: a skip locally, the failure's message in CI. */
export function missingChromiumBanner(ci = inCi()): string {
  const line = '!'.repeat(78);
  return [
    '',
    line,
    `!!  BROWSER TESTS ${ci ? 'FAILED (CI=true)' : 'SKIPPED'}: chromium is not installed (looked for`,
    `!!  ${CANDIDATES.join(', ')} and $PHASEBRIDGE_CHROMIUM).`,
    '!!  Install it with `apt-get install chromium`; in CI a missing browser is a failure.',
    line,
    '',
  ].join('\n');
}

/**
 * Launches headless chromium. Playwright gives every launch a fresh temporary profile
 * (--user-data-dir) and deletes it on close, so no state leaks between runs.
 */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, headless: true, args: ARGS, timeout: slow(20_000) });
}
