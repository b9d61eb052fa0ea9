import type { AgentTelemetry } from '../types.ts';

/** Telemetry of a run that reported nothing. */
export function emptyTelemetry(): AgentTelemetry {
  return { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 };
}

/** A non-negative finite number from an unknown JSON value, else 0. */
export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** Parses a line as a JSON object; null for anything else (plain text, arrays, bad JSON). */
export function parseJsonObject(line: string): Record<string, unknown> | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** Field `key` of `obj` when it is a JSON object. */
export function objectField(
  obj: Record<string, unknown>,
  key: string,
): Record<string, unknown> | null {
  const v = obj[key];
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : null;
}
