/**
 * Where the CodeMachine layout keeps its files inside a workspace, and how agent log files are
 * named (CodeMachine's own scheme, so its log viewer finds them).
 */
import path from 'node:path';

/** The layout's folder name inside a workspace. */
export const CODEMACHINE_DIR = '.codemachine';

/** Absolute paths of every file the CodeMachine layout writes. */
export interface CodemachinePaths {
  /** `<workspace>/.codemachine` */
  root: string;
  /** `template.json`: step tracking, the file users may edit by hand. */
  template: string;
  /** `memory/directive.json`: what the running agent asks the workflow to do next. */
  directive: string;
  /** `inputs/specification.md`: the run's spec text. */
  spec: string;
  /** `agents/agent-config.json`: the agents the workflow uses. */
  agentConfig: string;
  /** `logs/`: registry.db and the agent log files. */
  logsDir: string;
  /** `logs/registry.db`: one row per agent run. */
  registryDb: string;
}

/** The CodeMachine layout's paths for `workspace`. */
export function codemachinePaths(workspace: string): CodemachinePaths {
  const root = path.join(path.resolve(workspace), CODEMACHINE_DIR);
  const logsDir = path.join(root, 'logs');
  return {
    root,
    template: path.join(root, 'template.json'),
    directive: path.join(root, 'memory', 'directive.json'),
    spec: path.join(root, 'inputs', 'specification.md'),
    agentConfig: path.join(root, 'agents', 'agent-config.json'),
    logsDir,
    registryDb: path.join(logsDir, 'registry.db'),
  };
}

/** An agent name made safe for a file name: anything but `[A-Za-z0-9._-]` becomes `_`. */
function fileSafeName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return safe === '' ? 'agent' : safe;
}

/**
 * CodeMachine's log file name `agent-<monitoringId>-<name>-<time>.log`, time being the start in
 * UTC without milliseconds and with `:` replaced by `-` (e.g. `2026-01-02T03-04-05`).
 */
export function agentLogFileName(monitoringId: number, name: string, startedAt: string): string {
  const time = new Date(startedAt).toISOString().replace(/:/g, '-').replace(/\..+/, '');
  return `agent-${monitoringId}-${fileSafeName(name)}-${time}.log`;
}

/** The path stored in registry.db's `log_path`: relative to the workspace, as CodeMachine does. */
export function agentLogRelativePath(
  monitoringId: number,
  name: string,
  startedAt: string,
): string {
  return path.posix.join(CODEMACHINE_DIR, 'logs', agentLogFileName(monitoringId, name, startedAt));
}

/** Absolute path of an agent run's log file; the job runner appends the agent's output there. */
export function agentLogPath(
  workspace: string,
  monitoringId: number,
  name: string,
  startedAt: string,
): string {
  return path.join(
    codemachinePaths(workspace).logsDir,
    agentLogFileName(monitoringId, name, startedAt),
  );
}
