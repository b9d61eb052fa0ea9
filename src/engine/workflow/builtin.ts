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

/**
 * YAML of the flow-start-issue preset: the phases of flow's start-issue workflow (seed 003:
 * `preflight` first, then flow's autonomous-workflow order explore → plan → code → verify, and
 * the `pr` phase `/flow:pr` appends), with checkpoints where flow asks the user: approving the
 * plan, and before the PR is opened. Written to `.flow/runs/<id>/` (layout flow).
 */
export const FLOW_START_ISSUE_YAML = `id: flow-start-issue
name: flow start-issue
description: flow's start-issue phases (preflight, explore, plan, code, verify, pr) with the plan and PR checkpoints, written to .flow/runs/.
layout: flow
steps:
  - id: preflight
    agent: demo
    prompt: Preflight - check the repository is clean, the issue exists and the branch can be created.
  - id: explore
    agent: demo
    prompt: Explore - read the issue and the code it touches; note what must change.
  - id: plan
    agent: demo
    prompt: Plan - write the implementation plan for the issue.
    checkpoint:
      when: after
  - id: code
    agent: demo
    prompt: Code - implement the approved plan with tests.
  - id: verify
    agent: demo
    prompt: Verify - run the tests and checks; ask to loop back to code if they fail.
    loop:
      backTo: code
      max: 3
  - id: pr
    agent: demo
    prompt: PR - open the pull request for the issue.
    checkpoint:
      when: before
`;

/** The built-in flow-start-issue preset (layout flow). */
export const FLOW_START_ISSUE_WORKFLOW: Workflow = parseWorkflow(FLOW_START_ISSUE_YAML, {
  file: 'flow-start-issue.workflow.yaml',
});

/**
 * YAML of the coordinator preset: the agile coordinator's session (seed 004) as steps. discover
 * writes the ready tasks to `.coordinator/tasks.json`; plan orders them (track `supervised`:
 * "confirm plan" checkpoint; track `autonomous`: auto-continue); execute runs the tasks in
 * parallel workers; merge merges their PRs (loops back to execute while tasks remain); verify
 * reports tests and build; summarize writes the summary; then `.coordinator/` is archived.
 */
export const COORDINATOR_YAML = `id: coordinator
name: agile coordinator
description: Discover, plan (confirm), execute tasks in parallel workers, merge, verify, summarize; state in .coordinator/state.json.
layout: coordinator
tracks: [supervised, autonomous]
steps:
  - id: discover
    agent: demo
    prompt: Discover - read the backlog for ready tasks and write them (id, title, priority, depends_on) to .coordinator/tasks.json.
  - id: plan
    agent: demo
    prompt: Plan - sort the tasks by priority, check their dependencies and present the execution plan.
    tracks: [supervised]
    checkpoint:
      when: after
  - id: plan-auto
    agent: demo
    prompt: Plan - sort the tasks by priority and check their dependencies.
    tracks: [autonomous]
  - id: execute
    agent: demo
    prompt: Implement this task on its own branch and open a PR; report branch, PR and commit in the directive result.
    tasks:
      file: .coordinator/tasks.json
      maxWorkers: 2
      policy: continue
  - id: merge
    agent: demo
    prompt: Merge the PRs of the completed tasks in order; ask to loop back to execute when tasks remain.
    loop:
      backTo: execute
      max: 5
  - id: verify
    agent: demo
    prompt: Verify - pull main, run the build and the tests; report testsTotal, testsPassed and buildStatus in the directive verification.
  - id: summarize
    agent: demo
    prompt: Summarize - write the summary report for the humans.
`;

/** The built-in coordinator preset (layout coordinator). */
export const COORDINATOR_WORKFLOW: Workflow = parseWorkflow(COORDINATOR_YAML, {
  file: 'coordinator.workflow.yaml',
});

/** Built-in workflows by id. */
export const BUILTIN_WORKFLOWS: Readonly<Record<string, Workflow>> = Object.freeze({
  demo: DEMO_WORKFLOW,
  pabcd: PABCD_WORKFLOW,
  'flow-start-issue': FLOW_START_ISSUE_WORKFLOW,
  coordinator: COORDINATOR_WORKFLOW,
});
