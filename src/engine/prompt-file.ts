/**
 * Where an attempt's prompt is kept: beside its log, `<logdir>/prompt-<step>-<attempt>.md`, 0600
 * (issue 29). The runner writes it; `logs --prompt` and the console's prompt page read it.
 */
import path from 'node:path';

/** Path of the prompt file of an attempt whose log is `logFile`. */
export function promptFileBeside(logFile: string, stepId: string, attempt: number): string {
  // Step ids come from workflow files; keep them from escaping the log folder.
  const step = stepId.replace(/[^A-Za-z0-9._-]/g, '_');
  return path.join(path.dirname(logFile), `prompt-${step}-${attempt}.md`);
}
