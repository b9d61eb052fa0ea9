/** The orchestrator: engine effects → queue jobs, job results → engine commands. */
export {
  AgentResolver,
  DEMO_AGENT_NAME,
  DEMO_AGENT_SCRIPT,
  demoAgentDefinition,
} from './agent-resolver.ts';
export { Orchestrator } from './orchestrator.ts';
export {
  createStepProcessor,
  type StepProcessor,
  type StepProcessorOptions,
} from './step-processor.ts';
export type {
  CommandInput,
  DistributiveOmit,
  OrchestratorOptions,
  RunNotice,
  RunUpdate,
  StartRunInput,
  StepProgress,
  UpdateListener,
} from './types.ts';
export { type JobWorkerOptions, startJobWorker } from './worker.ts';
export type { WorkflowInfo } from './workflow-registry.ts';
