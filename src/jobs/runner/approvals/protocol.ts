/**
 * Claude Code's permission-prompt-tool contract, pure. In `-p` mode with
 * `--permission-prompt-tool mcp__phasebridge__approve`, Claude calls that MCP tool with
 * `{tool_name, input, tool_use_id}` for each tool use its permission mode would ask about, and
 * reads the tool's text result as JSON: `{"behavior":"allow","updatedInput":{…}}` (the input to
 * run, here unchanged) or `{"behavior":"deny","message":"…"}` (the message goes to the model).
 */

/** One permission request as Claude sends it. */
export interface ToolRequest {
  toolName: string;
  input: Record<string, unknown>;
  toolUseId?: string;
}

/** What people decided (or the expiry decided for them). */
export type ToolDecision = { allow: true } | { allow: false; message: string };

const MAX_SUMMARY = 300;

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function lines(v: unknown): number {
  return typeof v === 'string' && v !== '' ? v.split('\n').length : 0;
}

function clip(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > MAX_SUMMARY ? `${one.slice(0, MAX_SUMMARY - 1)}…` : one;
}

/**
 * What a person is shown: the command, or the file and a diff summary, else the input as JSON.
 * "Bash: npm test", "Write src/a.ts (+12 lines)", "Edit src/a.ts (-3 +5 lines)".
 */
export function summarize(req: ToolRequest): string {
  const { toolName: tool, input } = req;
  const command = str(input.command);
  if (command !== null) return clip(`${tool}: ${command}`);
  const file = str(input.file_path) ?? str(input.notebook_path) ?? str(input.path);
  if (file !== null) {
    if (str(input.content) !== null)
      return clip(`${tool} ${file} (+${lines(input.content)} lines)`);
    if (input.old_string !== undefined || input.new_string !== undefined) {
      return clip(
        `${tool} ${file} (-${lines(input.old_string)} +${lines(input.new_string)} lines)`,
      );
    }
    return clip(`${tool} ${file}`);
  }
  const url = str(input.url);
  if (url !== null) return clip(`${tool} ${url}`);
  return clip(`${tool} ${JSON.stringify(input)}`);
}

/**
 * The rule an "Allow for this run" answer creates: `Bash:<first word>` for shell commands (that
 * command prefix), else the tool name (that tool).
 */
export function ruleFor(req: ToolRequest): string {
  const command = str(req.input.command);
  if (command === null) return req.toolName;
  const first = command.trim().split(/\s+/)[0] ?? '';
  return `${req.toolName}:${first}`;
}

/** True when a run-wide rule covers this request. */
export function matchesRule(rule: string, req: ToolRequest): boolean {
  return ruleFor(req) === rule || (rule === req.toolName && str(req.input.command) === null);
}

/** The text result Claude expects from the permission prompt tool. */
export function claudeAnswer(decision: ToolDecision, req: ToolRequest): string {
  return JSON.stringify(
    decision.allow
      ? { behavior: 'allow', updatedInput: req.input }
      : { behavior: 'deny', message: decision.message },
  );
}
