/**
 * Pure builder of CodeMachine's `template.json` from a run's state. The file is a projection:
 * the same state always gives the same bytes (lastUpdated is the state's own updatedAt), so the
 * document last written can be rebuilt from the ledger to detect hand edits.
 *
 * How each row of CodeMachine's State Transitions table maps onto the run's state:
 * - Onboarding + Workflow Start (one `start` command here): activeTemplate, selectedTrack and
 *   selectedConditions set, completedSteps `{}`, notCompletedSteps `[]`.
 * - Step Starts: the running step's index is in notCompletedSteps.
 * - Session Init: completedSteps[i] = {sessionId, monitoringId}.
 * - Chain Complete: completedSteps[i].completedChains = the chained prompts done so far.
 * - Step Complete: completedSteps[i].completedAt set, completedChains dropped (CodeMachine keeps
 *   them only while a step is unfinished), i removed from notCompletedSteps. A skipped step is
 *   marked complete the same way (CodeMachine's Ctrl+S); a step excluded by the selected
 *   track/conditions never runs and gets no entry.
 * - Loop Triggered / revert / reset: notCompletedSteps becomes the loop-back index (the
 *   re-queued step ran before and is unfinished), as the seed says. Beyond the seed's row, every
 *   step that will run again (loop-back step up to the looping one, except completed executeOnce
 *   steps) loses its completedSteps entry: CodeMachine skips steps by completedSteps, so a resume
 *   after a crash mid-loop would otherwise jump past the loop (issue 18 item 5, kept on purpose).
 * - Crash Occurs: a step that was running when the process died (or failed, or was cancelled by a
 *   pause mid-run) stays in notCompletedSteps, with its session data for resume.
 *
 * Fields we do not own (projectName, autonomousMode, controllerConfig, controllerView, keys of
 * newer CodeMachine versions, extra keys of a step entry) are carried over from the file on disk
 * by {@link withForeignFields}: the run's state knows nothing of them, CodeMachine does.
 */
import path from 'node:path';
import type { RunState, StepState, Workflow } from '../../model.ts';
import type { StepData, TemplateTracking } from './template-schema.ts';

/** CodeMachine's activeTemplate: the workflow's file name, else `<id>.workflow.yaml`. */
export function activeTemplateName(workflow: Workflow): string {
  return workflow.file ? path.basename(workflow.file) : `${workflow.id}.workflow.yaml`;
}

/** True when the step finished in its current visit (completed, or skipped by a human). */
function isDone(step: StepState): boolean {
  return step.status === 'completed' || (step.status === 'skipped' && !step.excluded);
}

/**
 * The registry.db row id of a step that has none in the run's state (a step skipped before it
 * ran gets a `skipped` row only in registry.db); undefined when unknown.
 */
export type RegistryIdLookup = (step: StepState) => number | undefined;

/** The step's completedSteps entry, or undefined when it has none. */
export function stepData(step: StepState, registryId?: RegistryIdLookup): StepData | undefined {
  if (step.excluded) return undefined;
  if (isDone(step)) {
    const done: StepData = {
      sessionId: step.sessionId ?? '',
      monitoringId: step.monitoringId ?? registryId?.(step) ?? 0,
    };
    // "Step Complete" only adds completedAt: the chains recorded before stay (seed's StepData).
    if (step.completedChains.length > 0) done.completedChains = [...step.completedChains];
    done.completedAt = step.finishedAt ?? '';
    return done;
  }
  if (step.sessionId === undefined || step.monitoringId === undefined) return undefined;
  const data: StepData = { sessionId: step.sessionId, monitoringId: step.monitoringId };
  if (step.completedChains.length > 0) data.completedChains = [...step.completedChains];
  return data;
}

/**
 * True when the step started and has not finished: running, failed (incl. interrupted by a
 * crash), cancelled mid-run (pending with a start time), or queued again after running before
 * (a retry, or a loop/revert re-visit: its attempt number is past 1).
 */
export function isStartedNotFinished(step: StepState): boolean {
  if (step.excluded) return false;
  switch (step.status) {
    case 'running':
    case 'failed':
      return true;
    case 'pending':
      return step.startedAt !== undefined;
    case 'queued':
      return step.attempt > 1;
    default:
      return false;
  }
}

/**
 * Builds template.json for `state` (key order as in CodeMachine's schema); `registryId` fills the
 * monitoringId of steps skipped before they ran (hand-edit detection does not need it).
 */
export function buildTemplate(state: RunState, registryId?: RegistryIdLookup): TemplateTracking {
  const completedSteps: Record<string, StepData> = {};
  for (const step of state.steps) {
    const data = stepData(step, registryId);
    if (data) completedSteps[String(step.index)] = data;
  }
  const doc: TemplateTracking = {
    activeTemplate: activeTemplateName(state.workflow),
    lastUpdated: state.updatedAt,
    completedSteps,
    notCompletedSteps: state.steps.filter(isStartedNotFinished).map((s) => s.index),
    resumeFromLastStep: state.resumeFromLastStep,
  };
  if (state.selectedTrack !== undefined) doc.selectedTrack = state.selectedTrack;
  doc.selectedConditions = [...state.selectedConditions];
  return doc;
}

/** Top-level keys {@link buildTemplate} writes from the run's state. */
const OWNED_KEYS = new Set([
  'activeTemplate',
  'lastUpdated',
  'completedSteps',
  'notCompletedSteps',
  'resumeFromLastStep',
  'selectedTrack',
  'selectedConditions',
]);

/** Keys of a completedSteps entry {@link stepData} writes. */
const OWNED_STEP_KEYS = new Set(['sessionId', 'monitoringId', 'completedChains', 'completedAt']);

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `doc` plus every key of `onDisk` (the file's raw JSON) that we do not own, verbatim and after
 * ours; a step entry also keeps its foreign keys while the step still has an entry.
 */
export function withForeignFields(doc: TemplateTracking, onDisk: unknown): TemplateTracking {
  if (!isObject(onDisk)) return doc;
  const out: Json = { ...doc };
  for (const [key, value] of Object.entries(onDisk)) {
    if (!OWNED_KEYS.has(key)) out[key] = value;
  }
  const diskSteps = onDisk.completedSteps;
  if (isObject(diskSteps) && doc.completedSteps) {
    const steps: Json = {};
    for (const [key, data] of Object.entries(doc.completedSteps)) {
      const old = diskSteps[key];
      const extra = isObject(old)
        ? Object.fromEntries(Object.entries(old).filter(([k]) => !OWNED_STEP_KEYS.has(k)))
        : {};
      steps[key] = { ...data, ...extra };
    }
    out.completedSteps = steps;
  }
  return out as unknown as TemplateTracking;
}

/** The exact bytes written to template.json: two-space JSON plus a final newline. */
export function serializeTemplate(doc: TemplateTracking): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
