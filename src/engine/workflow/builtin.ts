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

/** YAML of the pabcd preset: codexclaw's Interview → Plan → Audit → Build → Check → Done. */
export const PABCD_WORKFLOW_YAML = `id: pabcd
name: PABCD
description: codexclaw's phases I, P, A, B, C, D with their gates, written to .codexclaw/.
layout: codexclaw
steps:
  - id: interview
    agent: demo
    prompt: >-
      Interview: list the requirements and open questions of the specification. Attest with
      {"attest": {"did": "...", "scanRounds": N, "highContradictionCount": N}} in the directive file.
  - id: plan
    agent: demo
    prompt: >-
      Plan: write a diff-level plan with files and acceptance criteria. Attest with
      {"attest": {"did": "..."}} in the directive file.
  - id: audit
    agent: demo
    prompt: >-
      Audit: have an independent reviewer check the plan. Attest with {"attest": {"did": "...",
      "auditOutput": "<the reviewer's verdict>", "verdict": "pass"}}; ask to loop to re-plan.
    loop:
      backTo: plan
      max: 2
  - id: build
    agent: demo
    prompt: >-
      Build: implement the audited plan. Attest with {"attest": {"did": "..."}} in the directive file.
  - id: check
    agent: demo
    prompt: >-
      Check: run the tests and type checks. Attest with {"attest": {"did": "...", "checkOutput":
      "<tail of the output>", "exitCode": 0}}; ask to loop to go back to build.
    loop:
      backTo: build
      max: 3
  - id: done
    agent: demo
    prompt: Summarise what was built and checked, for the humans.
`;

/** The built-in pabcd preset (layout codexclaw; gates enforced by the engine). */
export const PABCD_WORKFLOW: Workflow = parseWorkflow(PABCD_WORKFLOW_YAML, {
  file: 'pabcd.workflow.yaml',
});

/** Built-in workflows by id. */
export const BUILTIN_WORKFLOWS: Readonly<Record<string, Workflow>> = Object.freeze({
  demo: DEMO_WORKFLOW,
  pabcd: PABCD_WORKFLOW,
});
