/**
 * Where a run's agent-facing files live, per layout: the spec file and the directive file the
 * agent gets in PHASEBRIDGE_SPEC_FILE / PHASEBRIDGE_DIRECTIVE_FILE, and the step logs. Step logs
 * are always in the native run folder (`<runDir>/logs/`); the codemachine layout's own
 * `agent-*.log` receives the same output as an extra log (see step-processor.ts).
 */
import path from 'node:path';
import { layoutModule } from '../../engine/layouts/index.ts';
import { NATIVE_FILES, nativeRunDir } from '../../engine/layouts/native.ts';
import { writeFileAtomicAsync } from '../../engine/ledger/atomic-write.ts';
import { readTextInside, STATE_FILE_MODE } from '../../engine/ledger/safe-path.ts';
import type { Layout } from '../../engine/model.ts';

/** The spec and directive files of a run. */
export interface RunFiles {
  /** `<workspace>/.phasebridge/runs/<id>` */
  runDir: string;
  /** codemachine: `.codemachine/inputs/specification.md` (written by the layout); native: `<runDir>/spec.md`. */
  specFile: string;
  /** codemachine: `.codemachine/memory/directive.json`; native: `<runDir>/directive.json`. */
  directiveFile: string;
}

/** Native file names inside the run folder. */
export const NATIVE_SPEC_FILE = 'spec.md';
/** Native directive file name inside the run folder. */
export const NATIVE_DIRECTIVE_FILE = 'directive.json';

/** The spec and directive files of run `runId` (the id must be a validated run id). */
export function runFiles(workspace: string, layout: Layout, runId: string): RunFiles {
  const runDir = nativeRunDir(workspace, runId);
  const own = layoutModule(layout)?.steps?.agentFiles?.(workspace, runId);
  if (own !== undefined) {
    return { runDir, specFile: own.specFile, directiveFile: own.directiveFile };
  }
  return {
    runDir,
    specFile: path.join(runDir, NATIVE_SPEC_FILE),
    directiveFile: path.join(runDir, NATIVE_DIRECTIVE_FILE),
  };
}

/** Which kind of agent run a log belongs to. */
export type AgentRunKind = 'step' | 'trigger';

/**
 * The log of one attempt: `<runDir>/logs/<stepId>-<attempt>.log`, or
 * `<runDir>/logs/triggers/<stepId>-<attempt>.log` for a trigger sub-agent (a folder of its own,
 * since any suffix could also be a step id).
 */
export function stepLogPath(
  workspace: string,
  runId: string,
  stepId: string,
  attempt: number,
  kind: AgentRunKind = 'step',
): string {
  const logs = path.join(nativeRunDir(workspace, runId), NATIVE_FILES.logs);
  const dir = kind === 'trigger' ? path.join(logs, 'triggers') : logs;
  return path.join(dir, `${stepId}-${attempt}.log`);
}

/**
 * Writes the native spec file unless it already holds `spec` (codemachine's is the layout's).
 * Called before a run's first step is enqueued and again at start-up, so a worker in another
 * process always finds it. A link planted on the way throws UnsafePathError naming it. Its
 * create, fsyncs and rename run on the thread pool: a busy bridge starts runs while others wait
 * for their agents, and a loaded disk's fsync must not stall them all.
 */
export async function ensureSpecFile(
  workspace: string,
  layout: Layout,
  runId: string,
  spec: string,
): Promise<void> {
  if (layoutModule(layout)?.steps?.agentFiles?.(workspace, runId).specWrittenByLayout) return;
  const { specFile } = runFiles(workspace, layout, runId);
  // Checked from the workspace down: the run folder itself may have been swapped for a link.
  if (readTextInside(workspace, specFile) === spec) return;
  await writeFileAtomicAsync(specFile, spec, {
    mode: STATE_FILE_MODE,
    root: path.resolve(workspace),
  });
}
