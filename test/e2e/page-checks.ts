/**
 * Checks the browser test makes on every console page: the page does not scroll sideways
 * (document scrollWidth ≤ viewport width), a screenshot in test-artifacts/, and an axe-core scan
 * (WCAG 2 A/AA rules) whose serious and critical violations are returned. axe is evaluated
 * through the DevTools protocol, which the pages' CSP (nonce-only scripts) does not govern.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

/** Where screenshots go (not committed). */
export const ARTIFACTS = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../test-artifacts',
);

const AXE_SOURCE = fs.readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

/** The page's widths: what the document needs and what the viewport offers. */
export async function widths(page: Page): Promise<{ scrollWidth: number; viewport: number }> {
  // A string: the test's TypeScript has no DOM types; it runs in the page.
  return page.evaluate(
    '({ scrollWidth: document.documentElement.scrollWidth, viewport: window.innerWidth })',
  );
}

/** Saves a full-page screenshot as test-artifacts/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** A violation as the test reports it. */
export interface AxeProblem {
  readonly id: string;
  readonly impact: string;
  readonly help: string;
  readonly nodes: string[];
}

/** Serious and critical axe violations of the page as it is now. */
export async function axeProblems(page: Page): Promise<AxeProblem[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE);
  const result = (await page.evaluate(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa'] } })",
  )) as {
    violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
    }));
}
