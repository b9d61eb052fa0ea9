import type { AgentTelemetry } from '../types.ts';
import { parseClaudeResultLine } from './claude.ts';
import { parseCodexTurnLine } from './codex.ts';
import { parseSessionLine } from './session.ts';
import { emptyTelemetry } from './usage.ts';

/**
 * Collects telemetry from an agent's stdout lines. Both formats are tried on every line (their
 * event types do not collide), so `command` agents that print either shape report usage too.
 * Claude's result event carries run totals, so the last one wins; Codex turns are summed.
 * The engine's session id is the first one announced (a resumed session keeps its id anyway).
 */
export class TelemetryAccumulator {
  private claude: AgentTelemetry | null = null;
  private readonly codex = emptyTelemetry();
  private session: string | null = null;

  /** Feeds one stdout line; returns the engine session id when this line announced it first. */
  feed(line: string): string | null {
    this.feedUsage(line);
    if (this.session !== null) return null;
    this.session = parseSessionLine(line);
    return this.session;
  }

  /** The engine's session id, once an event announced it. */
  sessionId(): string | null {
    return this.session;
  }

  private feedUsage(line: string): void {
    const claude = parseClaudeResultLine(line);
    if (claude !== null) {
      this.claude = claude;
      return;
    }
    const turn = parseCodexTurnLine(line);
    if (turn === null) return;
    this.codex.tokensIn += turn.tokensIn;
    this.codex.tokensOut += turn.tokensOut;
    this.codex.cachedTokens += turn.cachedTokens;
  }

  /** The totals so far. */
  total(): AgentTelemetry {
    const c = this.claude ?? emptyTelemetry();
    return {
      tokensIn: c.tokensIn + this.codex.tokensIn,
      tokensOut: c.tokensOut + this.codex.tokensOut,
      cachedTokens: c.cachedTokens + this.codex.cachedTokens,
      costUsd: c.costUsd + this.codex.costUsd,
    };
  }
}
