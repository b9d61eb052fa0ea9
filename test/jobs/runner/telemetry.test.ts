import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TelemetryAccumulator } from '../../../src/jobs/runner/telemetry/accumulator.ts';
import { parseClaudeResultLine } from '../../../src/jobs/runner/telemetry/claude.ts';
import { parseCodexTurnLine } from '../../../src/jobs/runner/telemetry/codex.ts';
import { parseSessionLine } from '../../../src/jobs/runner/telemetry/session.ts';
import { fixture } from './helpers.ts';

const lines = (name: string): string[] =>
  fs.readFileSync(fixture(name), 'utf8').trimEnd().split('\n');

describe('Claude stream-json', () => {
  it('reads tokens and cost from the result event only', () => {
    const [init, assistant, user, result] = lines('claude-stream-json.jsonl');
    for (const l of [init!, assistant!, user!]) expect(parseClaudeResultLine(l)).toBeNull();
    expect(parseClaudeResultLine(result!)).toEqual({
      tokensIn: 28 + 4620 + 70100,
      tokensOut: 1240,
      cachedTokens: 70100,
      costUsd: 0.0873215,
    });
  });

  it('falls back to modelUsage when usage is absent', () => {
    const [result] = lines('claude-result-model-usage-only.jsonl');
    expect(parseClaudeResultLine(result!)).toEqual({
      tokensIn: 112,
      tokensOut: 20,
      cachedTokens: 7,
      costUsd: 0.25,
    });
  });

  it('ignores plain text, broken JSON and non-objects', () => {
    for (const l of ['result: done', '{"type":"result",', '["result"]', '"result"']) {
      expect(parseClaudeResultLine(l)).toBeNull();
    }
  });
});

describe('Codex --json', () => {
  it('reads usage from turn.completed events only', () => {
    const all = lines('codex-exec-json.jsonl');
    const turns = all.map(parseCodexTurnLine).filter((t) => t !== null);
    expect(turns).toEqual([
      { tokensIn: 26549, tokensOut: 1590, cachedTokens: 22272, costUsd: 0 },
      { tokensIn: 6245, tokensOut: 407, cachedTokens: 5376, costUsd: 0 },
    ]);
  });
});

describe('TelemetryAccumulator', () => {
  it('sums Codex turns', () => {
    const acc = new TelemetryAccumulator();
    for (const l of lines('codex-exec-json.jsonl')) acc.feed(l);
    expect(acc.total()).toEqual({
      tokensIn: 32794,
      tokensOut: 1997,
      cachedTokens: 27648,
      costUsd: 0,
    });
  });

  it('keeps the last Claude result (it carries run totals)', () => {
    const acc = new TelemetryAccumulator();
    const result = lines('claude-stream-json.jsonl')[3]!;
    acc.feed(result);
    acc.feed(result);
    expect(acc.total().tokensOut).toBe(1240);
    expect(acc.total().costUsd).toBe(0.0873215);
  });

  it('reports zeros when nothing was printed', () => {
    expect(new TelemetryAccumulator().total()).toEqual({
      tokensIn: 0,
      tokensOut: 0,
      cachedTokens: 0,
      costUsd: 0,
    });
  });
});

describe('engine session id', () => {
  it("reads Claude's session_id from its init event, Codex's thread id from thread.started", () => {
    const [init] = lines('claude-stream-json.jsonl');
    expect(parseSessionLine(init!)).toBe('5f0c2a1e-8d7b-4c3e-9a61-2b7f0e4d9c11');
    const [thread, turn] = lines('codex-exec-json.jsonl');
    expect(parseSessionLine(thread!)).toBe('019a2d7a-41c4-78b1-b7cc-a45d62a89cd5');
    expect(parseSessionLine(turn!)).toBeNull();
    const legacy = '{"id":"0","msg":{"type":"session_configured","session_id":"s-1","model":"m"}}';
    expect(parseSessionLine(legacy)).toBe('s-1');
  });

  it('ignores text, empty ids and lines without a session', () => {
    for (const l of ['session started', '{"type":"system","session_id":""}', '{"session":1}']) {
      expect(parseSessionLine(l)).toBeNull();
    }
  });

  it('the accumulator announces the first session once and still counts usage', () => {
    const acc = new TelemetryAccumulator();
    const announced = lines('claude-stream-json.jsonl').map((l) => acc.feed(l));
    expect(announced).toEqual(['5f0c2a1e-8d7b-4c3e-9a61-2b7f0e4d9c11', null, null, null]);
    expect(acc.sessionId()).toBe('5f0c2a1e-8d7b-4c3e-9a61-2b7f0e4d9c11');
    expect(acc.total().tokensOut).toBe(1240);
  });
});
