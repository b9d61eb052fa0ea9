import path from 'node:path';
import { objectField, parseJsonObject } from './usage.ts';

/** Longest activity line shown (it sits in one line of a status message). */
export const MAX_ACTIVITY_CHARS = 80;

function clip(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= MAX_ACTIVITY_CHARS ? one : `${one.slice(0, MAX_ACTIVITY_CHARS - 1)}…`;
}

/** A path as the chat should read it: relative to the workspace when inside it. */
function shown(file: unknown, workspace: string): string | undefined {
  if (typeof file !== 'string' || file === '') return undefined;
  const rel = path.relative(workspace, path.resolve(workspace, file));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/** `bash -lc 'npm test'` (how Codex wraps its commands) → `npm test`. */
function unwrapShell(command: string): string {
  const m = /^(?:\/\S*\/)?(?:ba|z)?sh\s+-l?c\s+(['"])([\s\S]*)\1$/.exec(command.trim());
  return m ? m[2]! : command;
}

/** What one Claude Code tool call does, in words. */
function claudeTool(name: string, input: Record<string, unknown>, workspace: string): string {
  const file = shown(input.file_path ?? input.notebook_path ?? input.path, workspace);
  switch (name) {
    case 'Edit':
    case 'MultiEdit':
    case 'NotebookEdit':
      return file ? `editing ${file}` : 'editing files';
    case 'Write':
      return file ? `writing ${file}` : 'writing a file';
    case 'Read':
      return file ? `reading ${file}` : 'reading files';
    case 'Bash':
      return typeof input.command === 'string' ? `running ${input.command}` : 'running a command';
    case 'Grep':
    case 'Glob':
      return typeof input.pattern === 'string' ? `searching ${input.pattern}` : 'searching';
    case 'WebFetch':
      return typeof input.url === 'string' ? `fetching ${input.url}` : 'fetching a page';
    case 'WebSearch':
      return typeof input.query === 'string' ? `searching the web: ${input.query}` : 'searching';
    case 'Task':
      return 'running a subagent';
    case 'TodoWrite':
      return 'updating its plan';
    default:
      return `using ${name}`;
  }
}

function fromClaude(event: Record<string, unknown>, workspace: string): string | undefined {
  const content = objectField(event, 'message')?.content;
  if (!Array.isArray(content)) return undefined;
  let latest: string | undefined;
  for (const c of content) {
    if (c?.type !== 'tool_use' || typeof c.name !== 'string') continue;
    const input = typeof c.input === 'object' && c.input !== null ? c.input : {};
    latest = claudeTool(c.name, input as Record<string, unknown>, workspace);
  }
  return latest;
}

function fromCodex(item: Record<string, unknown>, workspace: string): string | undefined {
  switch (item.type) {
    case 'command_execution':
      return typeof item.command === 'string'
        ? `running ${unwrapShell(item.command)}`
        : 'running a command';
    case 'file_change': {
      const changes = Array.isArray(item.changes) ? item.changes : [];
      const files = changes.map((c) => shown(c?.path, workspace)).filter((f) => f !== undefined);
      if (files.length === 0) return 'editing files';
      return files.length === 1
        ? `editing ${files[0]}`
        : `editing ${files[0]} and ${files.length - 1} more`;
    }
    case 'mcp_tool_call':
      return typeof item.tool === 'string' ? `using ${item.tool}` : 'using a tool';
    case 'web_search':
      return typeof item.query === 'string' ? `searching the web: ${item.query}` : 'searching';
    case 'reasoning':
      return 'thinking';
    default:
      return undefined;
  }
}

/**
 * What the agent is doing, from one line of its output: a Claude Code `stream-json` assistant
 * message's last `tool_use` ("editing src/login.ts", "running npm test"), or a `codex exec
 * --json` item starting ("running npm test", "editing src/a.ts"); undefined for other lines.
 * Paths inside `workspace` are shown relative to it.
 */
export function activityOf(line: string, workspace: string): string | undefined {
  if (!line.includes('tool_use') && !line.includes('"item.')) return undefined;
  const event = parseJsonObject(line);
  if (event === null) return undefined;
  let words: string | undefined;
  if (event.type === 'assistant') words = fromClaude(event, workspace);
  else if (event.type === 'item.started' || event.type === 'item.completed') {
    const item = objectField(event, 'item');
    // A finished command says nothing new; a file change or reasoning is reported once made.
    const done = item?.type === 'file_change' || item?.type === 'reasoning';
    if (item && (event.type === 'item.started' || done)) words = fromCodex(item, workspace);
  }
  return words === undefined ? undefined : clip(words);
}
