/**
 * CodeMachine's `template.json` (TemplateTracking) as its runtime-state document specifies it,
 * and a tolerant reader for what is on disk (a user may have edited it by hand).
 */
import { z } from 'zod';

/** Per-step tracking data, keyed by step index in `completedSteps`. */
export interface StepData {
  /** Engine session id for resume ('' when the step finished without a session). */
  sessionId: string;
  /** The agent run's id in logs/registry.db (0 when none was recorded). */
  monitoringId: number;
  /** Chained prompt indices done in the step's current visit; kept once it completes. */
  completedChains?: number[];
  /** ISO time the step finished; its presence marks the step done. */
  completedAt?: string;
}

/** The controller agent of CodeMachine's autonomous mode. */
export interface ControllerConfig {
  agentId: string;
  sessionId: string;
  monitoringId: number;
}

/** The whole `template.json` document. */
export interface TemplateTracking {
  /** The workflow file name, e.g. "demo.workflow.yaml". */
  activeTemplate: string;
  /** ISO 8601 UTC time of the last change. */
  lastUpdated: string;
  completedSteps?: Record<string, StepData>;
  /** Steps started but not finished (crash recovery). */
  notCompletedSteps?: number[];
  resumeFromLastStep?: boolean;
  selectedTrack?: string;
  selectedConditions?: string[];
  projectName?: string;
  autonomousMode?: 'true' | 'false' | 'never' | 'always';
  controllerConfig?: ControllerConfig;
  controllerView?: boolean;
}

const stepDataSchema = z.looseObject({
  sessionId: z.string().optional(),
  monitoringId: z.number().optional(),
  completedChains: z.array(z.number().int()).optional(),
  completedAt: z.string().optional(),
});

// Loose objects: CodeMachine versions add keys; a reader must not refuse what it does not use.
// completedSteps may still be the old `number[]` form, which CodeMachine migrates on read.
const templateSchema = z.looseObject({
  activeTemplate: z.string().optional(),
  lastUpdated: z.string().optional(),
  completedSteps: z
    .union([z.record(z.string().regex(/^\d+$/), stepDataSchema), z.array(z.number().int())])
    .optional(),
  notCompletedSteps: z.array(z.number().int()).optional(),
  resumeFromLastStep: z.boolean().optional(),
  selectedTrack: z.string().optional(),
  selectedConditions: z.array(z.string()).optional(),
});

/** Result of reading template.json text: the document, or why it cannot be trusted. */
export type TemplateParse = { ok: true; value: TemplateTracking } | { ok: false; error: string };

/**
 * Parses template.json text. Invalid JSON or a wrong type for a tracked field is an error (the
 * caller reports it; unlike CodeMachine's reader it never falls back to an empty document).
 */
export function parseTemplateText(text: string): TemplateParse {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `template.json is not valid JSON: ${(err as Error).message}` };
  }
  const parsed = templateSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    return { ok: false, error: `template.json has an invalid shape: ${issues.join('; ')}` };
  }
  const data = parsed.data;
  const completedSteps: Record<string, StepData> = {};
  if (Array.isArray(data.completedSteps)) {
    // The old form listed finished steps only; CodeMachine stamps them complete when migrating.
    const completedAt = data.lastUpdated ?? '';
    for (const i of data.completedSteps) {
      completedSteps[String(i)] = { sessionId: '', monitoringId: 0, completedAt };
    }
  } else {
    for (const [k, v] of Object.entries(data.completedSteps ?? {})) {
      completedSteps[k] = { ...v, sessionId: v.sessionId ?? '', monitoringId: v.monitoringId ?? 0 };
    }
  }
  const value = {
    ...data,
    activeTemplate: data.activeTemplate ?? '',
    lastUpdated: data.lastUpdated ?? '',
    completedSteps,
  } as TemplateTracking;
  return { ok: true, value };
}
