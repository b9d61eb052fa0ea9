/**
 * The agent's own words at the end of a step, for the run's chat: its last assistant message from
 * telemetry (Claude stream-json `result` / assistant text, Codex `agent_message`), else the
 * directive's reason, else the tail of its output. Read from the end of the step log only,
 * without following a link planted in the workspace.
 */
import fs from 'node:fs';
import { openInside } from '../engine/ledger/safe-path.ts';
import { readLogTail } from './log-tail.ts';

/** Bytes read from the end of the log to find the last assistant message. */
const SCAN_BYTES = 65_536;

function textOf(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  const parts = content
    .filter(
      (c): c is { type: string; text: string } => c?.type === 'text' && typeof c.text === 'string',
    )
    .map((c) => c.text);
  return parts.length > 0 ? parts.join('\n') : undefined;
}

/** The assistant text one JSON event line carries, if any. */
export function assistantText(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  let e: Record<string, unknown>;
  try {
    e = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (e.type === 'result' && typeof e.result === 'string') return e.result;
  if (e.type === 'assistant') return textOf((e.message as { content?: unknown })?.content);
  const item = e.item as { type?: string; text?: string } | undefined;
  if (e.type === 'item.completed' && item?.type === 'agent_message') return item.text;
  return undefined;
}

function lastAssistantText(root: string, logPath: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openInside(root, logPath, fs.constants.O_RDONLY);
    const { size } = fs.fstatSync(fd);
    const start = Math.max(0, size - SCAN_BYTES);
    const buf = Buffer.alloc(size - start);
    const got = fs.readSync(fd, buf, 0, buf.length, start);
    const lines = buf.subarray(0, got).toString('utf8').split('\n');
    for (let i = lines.length - 1; i >= 0; i--) {
      const text = assistantText(lines[i]!.trim());
      if (text?.trim()) return text.trim();
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The step's final answer, or undefined when it left nothing to show. */
export async function finalAnswer(
  root: string,
  logPath: string,
  directiveReason: string | undefined,
): Promise<string | undefined> {
  return (
    lastAssistantText(root, logPath) ??
    (directiveReason?.trim() ? directiveReason.trim() : undefined) ??
    (await readLogTail(root, logPath, { maxLines: 10, maxChars: 1500 }))
  );
}
