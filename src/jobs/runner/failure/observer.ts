/**
 * Keeps what the agent said about itself while it ran, so a failed step shows the agent's own
 * reason instead of "exit code 1": the engine's error events, its error code, the tools it was
 * refused, the last stderr lines, and what it was last doing (for a timeout).
 */
import { type EngineFact, parseEngineLine } from './engine-events.ts';
import { fixFor } from './known-causes.ts';

/** Stderr lines kept for the fallback reason. */
const STDERR_LINES = 3;
/** Longest reason text kept from one event. */
const MAX_TEXT = 300;

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are control chars.
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

function clip(s: string): string {
  const one = s.replace(ANSI, '').replace(/\s+/g, ' ').trim();
  return one.length > MAX_TEXT ? `${one.slice(0, MAX_TEXT)}…` : one;
}

/** Collects the agent's own words from its stdout events and stderr lines. */
export class FailureObserver {
  private error: { text: string; code?: string } | null = null;
  private code: string | null = null;
  private denied: string[] = [];
  private activity: string | null = null;
  private readonly stderr: string[] = [];

  /** Feeds one stdout line. */
  stdout(line: string): void {
    for (const fact of parseEngineLine(line)) this.take(fact);
  }

  /** Feeds one stderr line; blank lines and Node/engine warnings about PATH aliases are noise. */
  stderrLine(line: string): void {
    const clean = clip(line);
    if (clean === '' || /^WARNING: proceeding, even though/.test(clean)) return;
    this.stderr.push(clean);
    if (this.stderr.length > STDERR_LINES) this.stderr.shift();
  }

  private take(fact: EngineFact): void {
    if (fact.kind === 'error') this.error = { ...fact, text: clip(fact.text) };
    else if (fact.kind === 'code') this.code = fact.code;
    else if (fact.kind === 'denied') this.denied = fact.tools;
    else this.activity = clip(fact.text);
  }

  /** The agent's own reason (without exit code), or null when it said nothing. */
  reason(): string | null {
    const parts: string[] = [];
    if (this.error !== null) {
      const code = this.code ?? this.error.code;
      parts.push(code ? `${this.error.text} (${code})` : this.error.text);
    } else if (this.code !== null) {
      parts.push(this.code);
    }
    if (this.denied.length > 0) parts.push(`denied tools: ${this.denied.join(', ')}`);
    if (parts.length === 0 && this.stderr.length > 0) parts.push(this.stderr.join(' / '));
    return parts.length > 0 ? parts.join('; ') : null;
  }

  /** What the agent was last doing, for a timeout ("waiting for network: …"). */
  lastActivity(): string | null {
    if (this.activity !== null) return describeActivity(this.activity);
    return this.stderr.at(-1) ?? null;
  }

  /**
   * The failure text for a process that ended badly: the agent's reason, how the process ended,
   * and a fix line for a known cause. `ended` is "exit code 1", "timed out after 15s", ….
   */
  failure(ended: string, timedOut: boolean): string {
    const own = timedOut ? this.lastActivity() : this.reason();
    const head = own === null ? ended : timedOut ? `${ended}; last: ${own}` : `${ended}: ${own}`;
    const fix = own === null ? null : fixFor(own);
    return fix === null ? head : `${head} — fix: ${fix}`;
  }
}

/** Codex's "Reconnecting... waiting for network (Connection failed: x)" → "waiting for network: Connection failed: x". */
function describeActivity(text: string): string {
  const m = /waiting for network \((.*)\)$/.exec(text);
  return m ? `waiting for network: ${m[1]}` : text;
}
