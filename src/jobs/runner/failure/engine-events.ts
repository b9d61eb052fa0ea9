/**
 * What an engine's own stdout events say about a failure and about what the agent was doing.
 * One line in, facts out: Claude's `stream-json` (`result` with `is_error`, the `error` code on
 * an assistant message, `permission_denials`) and `codex exec --json` (`error`, `turn.failed`,
 * error items, started commands). Pure; the observer keeps the state.
 */
import { objectField, parseJsonObject } from '../telemetry/usage.ts';

/** One fact read from an event line. */
export type EngineFact =
  | { kind: 'error'; text: string; code?: string }
  | { kind: 'code'; code: string }
  | { kind: 'denied'; tools: string[] }
  | { kind: 'activity'; text: string };

function text(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

/** Shortest useful form of a tool input: a command, a file path, or nothing. */
export function inputSummary(input: Record<string, unknown> | null): string | null {
  if (input === null) return null;
  return text(input.command) ?? text(input.file_path) ?? text(input.path) ?? text(input.url);
}

function denials(event: Record<string, unknown>): string[] {
  const list = event.permission_denials;
  if (!Array.isArray(list)) return [];
  const tools: string[] = [];
  for (const d of list) {
    if (typeof d !== 'object' || d === null) continue;
    const rec = d as Record<string, unknown>;
    const name = text(rec.tool_name);
    if (name === null) continue;
    const summary = inputSummary(objectField(rec, 'tool_input'));
    tools.push(summary === null ? name : `${name}(${summary.slice(0, 80)})`);
  }
  return tools;
}

function claudeFacts(event: Record<string, unknown>): EngineFact[] {
  const facts: EngineFact[] = [];
  if (event.type === 'result') {
    const tools = denials(event);
    if (tools.length > 0) facts.push({ kind: 'denied', tools });
    const failed = event.is_error === true || (text(event.subtype)?.startsWith('error') ?? false);
    if (failed) {
      const msg = text(event.result) ?? text(event.error) ?? text(event.subtype) ?? 'error';
      const code = text(event.subtype);
      facts.push(
        code !== null && code !== 'success'
          ? { kind: 'error', text: msg, code }
          : { kind: 'error', text: msg },
      );
    }
    return facts;
  }
  if (event.type === 'assistant') {
    const code = text(event.error);
    if (code !== null) facts.push({ kind: 'code', code });
    const content = objectField(event, 'message')?.content;
    if (Array.isArray(content)) {
      for (const c of content) {
        if (typeof c !== 'object' || c === null) continue;
        const block = c as Record<string, unknown>;
        if (block.type !== 'tool_use') continue;
        const summary = inputSummary(objectField(block, 'input'));
        const name = text(block.name) ?? 'a tool';
        facts.push({ kind: 'activity', text: `using ${name}${summary ? `: ${summary}` : ''}` });
      }
    }
  }
  return facts;
}

function codexFacts(event: Record<string, unknown>): EngineFact[] {
  if (event.type === 'error') {
    const msg = text(event.message);
    if (msg === null) return [];
    // "Reconnecting…" is Codex retrying, not giving up: it is what the agent is doing.
    return [
      /^Reconnecting\b/.test(msg) ? { kind: 'activity', text: msg } : { kind: 'error', text: msg },
    ];
  }
  if (event.type === 'turn.failed') {
    const msg = text(objectField(event, 'error')?.message) ?? 'turn failed';
    return [{ kind: 'error', text: msg }];
  }
  if (event.type === 'item.started' || event.type === 'item.completed') {
    const item = objectField(event, 'item');
    if (item === null) return [];
    if (item.type === 'error' && text(item.message) !== null) {
      return [{ kind: 'activity', text: text(item.message)! }];
    }
    if (event.type === 'item.started' && item.type === 'command_execution') {
      const cmd = text(item.command);
      if (cmd !== null) return [{ kind: 'activity', text: `running ${cmd}` }];
    }
  }
  return [];
}

/** The facts one stdout line states; [] for plain text or events that say nothing of use. */
export function parseEngineLine(line: string): EngineFact[] {
  if (!line.includes('"type"')) return [];
  const event = parseJsonObject(line);
  if (event === null || typeof event.type !== 'string') return [];
  return [...claudeFacts(event), ...codexFacts(event)];
}
