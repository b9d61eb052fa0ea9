/**
 * The console story's shared browser page and state (console.browser.test.ts starts them once:
 * one chromium, one bridge), and the helpers its steps use to find what the page shows.
 */
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import type { RunState } from '../../src/engine/model.ts';
import { slow } from '../support/slowdown.ts';
import type { E2eBridge } from './bridge.ts';

/**
 * Generous upper bound for anything to appear (not a timing assertion: it only avoids hanging),
 * scaled by PHASEBRIDGE_TEST_SLOWDOWN: under load a Request changes and its re-run took over 15 s.
 */
export const APPEAR_MS = slow(15_000);

/** What the story's steps share, read when each step runs (beforeAll fills it). */
export interface ConsoleStory {
  readonly e2e: E2eBridge;
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  /** Uncaught page errors and console errors (CSP violations, failed loads), all must stay empty. */
  readonly pageProblems: string[];
  /** The run the story starts; the later tests read it. */
  readonly runId: string;
  readonly run: RunState | undefined;
}

/** A message of the console chat containing `text` (optionally one with a given button). */
export function chatMessage(page: Page, text: string | RegExp, button?: string): Locator {
  const base = page.locator('#messages article.msg', { hasText: text });
  return button ? base.filter({ has: page.getByRole('button', { name: button }) }) : base;
}

/** The first of `locator`'s elements, once it is visible (within APPEAR_MS). */
export async function visible(locator: Locator): Promise<Locator> {
  await locator.first().waitFor({ state: 'visible', timeout: APPEAR_MS });
  return locator.first();
}
