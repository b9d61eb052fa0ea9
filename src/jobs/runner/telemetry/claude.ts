import type { AgentTelemetry } from '../types.ts';
import { count, objectField, parseJsonObject } from './usage.ts';

/** Sums Claude's per-model `modelUsage` map (camelCase), used when `usage` is absent. */
function fromModelUsage(modelUsage: Record<string, unknown>): Omit<AgentTelemetry, 'costUsd'> {
  const sum = { tokensIn: 0, tokensOut: 0, cachedTokens: 0 };
  for (const entry of Object.values(modelUsage)) {
    if (typeof entry !== 'object' || entry === null) continue;
    const m = entry as Record<string, unknown>;
    const cached = count(m.cacheReadInputTokens);
    sum.tokensIn += count(m.inputTokens) + count(m.cacheCreationInputTokens) + cached;
    sum.tokensOut += count(m.outputTokens);
    sum.cachedTokens += cached;
  }
  return sum;
}

/**
 * Telemetry from one line of `claude -p --output-format stream-json`, or null when the line is
 * not the `{"type":"result",…}` event. Claude's `input_tokens` excludes cache reads and cache
 * writes, so tokensIn adds both back (all prompt tokens, as Codex counts them); cachedTokens is
 * `cache_read_input_tokens`. Cost is `total_cost_usd` (older CLIs printed `cost_usd`).
 */
export function parseClaudeResultLine(line: string): AgentTelemetry | null {
  if (!line.includes('"result"')) return null;
  const event = parseJsonObject(line);
  if (event === null || event.type !== 'result') return null;
  const costUsd = count(event.total_cost_usd ?? event.cost_usd);
  const usage = objectField(event, 'usage');
  if (usage !== null && Object.keys(usage).length > 0) {
    const cached = count(usage.cache_read_input_tokens);
    return {
      tokensIn: count(usage.input_tokens) + count(usage.cache_creation_input_tokens) + cached,
      tokensOut: count(usage.output_tokens),
      cachedTokens: cached,
      costUsd,
    };
  }
  const modelUsage = objectField(event, 'modelUsage');
  if (modelUsage !== null) return { ...fromModelUsage(modelUsage), costUsd };
  return { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd };
}
