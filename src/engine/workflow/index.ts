/** Workflow definitions: types, file parsing, built-ins and lookup. */
export { BUILTIN_WORKFLOWS, DEMO_WORKFLOW, DEMO_WORKFLOW_YAML } from './builtin.ts';
export { DURATION_HINT, formatDuration, parseDuration } from './duration.ts';
export { type FindOptions, findWorkflow } from './find.ts';
export { loadWorkflow, type ParseOptions, parseWorkflow } from './load.ts';
export type {
  ExpiryAction,
  Layout,
  StepCheckpoint,
  StepLoop,
  StepRetries,
  Workflow,
  WorkflowStep,
} from './types.ts';
