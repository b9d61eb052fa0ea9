/**
 * Built-in workflows, available without a file. Each is defined by its YAML text and parsed like
 * any file, so it goes through the same validation and gets a content-hash version.
 */
import { parseWorkflow } from './load.ts';
import type { Workflow } from './types.ts';

/** YAML of the demo workflow; examples/workflows/demo.workflow.yaml holds the same steps. */
export const DEMO_WORKFLOW_YAML = `id: demo
name: Demo
description: Plan, build and review, with a human checkpoint after planning and after review.
steps:
  - id: plan
    agent: demo
    prompt: Plan the change described in the specification and list the steps to build it.
    checkpoint:
      when: after
      approvals: 1
  - id: build
    agent: demo
    prompt: Build the change following the approved plan.
  - id: review
    agent: demo
    prompt: Review the build against the plan; ask to loop back to build if it needs more work.
    loop:
      backTo: build
      max: 2
    checkpoint:
      when: after
`;

/** The built-in demo: plan (checkpoint after), build, review (loops to build, max 2; checkpoint after). */
export const DEMO_WORKFLOW: Workflow = parseWorkflow(DEMO_WORKFLOW_YAML, {
  file: 'demo.workflow.yaml',
});

/** Built-in workflows by id. */
export const BUILTIN_WORKFLOWS: Readonly<Record<string, Workflow>> = Object.freeze({
  demo: DEMO_WORKFLOW,
});
