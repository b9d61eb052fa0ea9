import type { AgentTelemetry } from '../types.ts';
import { count, objectField, parseJsonObject } from './usage.ts';

/**
 * Usage of one turn from a line of `codex exec --json`, or null when the line is not a
 * `{"type":"turn.completed","usage":{…}}` event. Codex's `input_tokens` already includes
 * `cached_input_tokens`; it reports no cost, so costUsd is 0. Callers sum over turns.
 */
export function parseCodexTurnLine(line: string): AgentTelemetry | null {
  if (!line.includes('turn.completed')) return null;
  const event = parseJsonObject(line);
  if (event === null || event.type !== 'turn.completed') return null;
  const usage = objectField(event, 'usage');
  if (usage === null) return null;
  return {
    tokensIn: count(usage.input_tokens),
    tokensOut: count(usage.output_tokens),
    cachedTokens: count(usage.cached_input_tokens),
    costUsd: 0,
  };
}
