/**
 * The bridge's side of self-contained jobs: before a step, trigger or task job is queued it resolves
 * the agent by name (bridge.db or the built-in demo) and the workspace reference (the shared
 * path, or in git mode the repository and base commit). What cannot be resolved becomes the
 * job's `problem`, so the step fails with that message exactly as an agent failure would.
 */
import type { RunState } from '../../engine/model.ts';
import { InvalidInputError } from '../../errors.ts';
import { gitWorkspaceRef } from '../git/bridge-git.ts';
import { COMMIT_RE, taskBranch, taskBranchProblem } from '../git/run-git.ts';
import { errorMessage } from '../queue/outcome.ts';
import { type AgentResolver, DEMO_AGENT_NAME, DEMO_AGENT_SCRIPT } from './agent-resolver.ts';
import type { EnqueueEffect, PreparedJob } from './effects.ts';
import { jobAgentOf, unresolvedAgent } from './job-agent.ts';
import type { JobAgent, WorkspaceRef } from './job-payload.ts';
import { registerRemoteRun } from './remote-registry.ts';
import { payloadInputs } from './run-inputs.ts';

/**
 * The git reference of a job: the run branch at its head; a task works on its own task branch
 * from there; a later step also needs the commits its run's tasks pushed (to merge them).
 */
async function gitJobRef(state: RunState, effect: EnqueueEffect): Promise<WorkspaceRef> {
  const ref = await gitWorkspaceRef(state.workspace, state.id);
  if (ref.mode !== 'git') return ref;
  if (effect.type === 'enqueueTask') {
    const problem = taskBranchProblem(effect.taskId);
    if (problem !== null) throw new InvalidInputError(problem);
    return { ...ref, branch: taskBranch(state.id, effect.taskId) };
  }
  const needs = state.steps.flatMap((s) =>
    (s.tasks ?? []).flatMap((t) =>
      t.status === 'completed' && t.result?.commit !== undefined && COMMIT_RE.test(t.result.commit)
        ? [t.result.commit]
        : [],
    ),
  );
  return needs.length > 0 ? { ...ref, needs: [...new Set(needs)].slice(0, 200) } : ref;
}

/** How workers reach the run's workspace: the same path (`shared`) or a git clone (`git`). */
export type WorkspaceMode = 'shared' | 'git';

/** Resolves what a job needs before it is queued. */
export class JobPreparer {
  readonly #agents: AgentResolver;
  readonly #mode: WorkspaceMode;
  readonly #fullAllowed: (workspace: string) => Promise<boolean>;

  constructor(
    agents: AgentResolver,
    mode: WorkspaceMode,
    fullAllowed: (workspace: string) => Promise<boolean>,
  ) {
    this.#agents = agents;
    this.#mode = mode;
    this.#fullAllowed = fullAllowed;
  }

  /** The agent and workspace reference of the job `effect` asks for. */
  async prepare(state: RunState, effect: EnqueueEffect): Promise<PreparedJob> {
    const problems: string[] = [];
    let agent: JobAgent;
    let fullAllowed: boolean | undefined;
    try {
      const def = await this.#agents.resolve(effect.agent);
      const demo = def.name === DEMO_AGENT_NAME && def.argv[1] === DEMO_AGENT_SCRIPT;
      agent = jobAgentOf(def, demo);
      // Workers have no bridge.db: whether an admin allowed `full` here travels in the job.
      const step = state.workflow.steps.find((s) => s.id === effect.stepId)?.permissions;
      if (step?.posture === 'full' || def.permissions?.posture === 'full') {
        fullAllowed = await this.#fullAllowed(state.workspace);
      }
    } catch (err) {
      agent = unresolvedAgent(effect.agent);
      problems.push(errorMessage(err));
    }
    let workspace: WorkspaceRef = { mode: 'shared', path: state.workspace };
    if (this.#mode === 'git') {
      try {
        workspace = await gitJobRef(state, effect);
      } catch (err) {
        problems.push(errorMessage(err));
      }
    }
    const prepared: PreparedJob = { agent, workspace };
    if (fullAllowed === true) prepared.fullAllowed = true;
    if (state.inputs !== undefined && effect.type !== 'enqueueTrigger') {
      try {
        // A worker without the workspace gets the requester's files in the job itself.
        prepared.inputs = payloadInputs(state.workspace, state.inputs, workspace.mode === 'git');
      } catch (err) {
        problems.push(errorMessage(err));
      }
    }
    if (problems.length > 0) prepared.problem = problems.join('; ');
    else if (workspace.mode === 'git') {
      // The worker cannot reach the bridge's registry.db: the bridge registers the agent run.
      try {
        const id = registerRemoteRun(state, effect, agent, effect.prompt);
        if (id !== undefined) prepared.monitoringId = id;
      } catch {
        // Best effort: an unreadable registry.db is salvaged by the layout; the step still runs.
      }
    }
    return prepared;
  }

  /** The stored env values of agent `name` (for the bridge's in-process worker). */
  async agentEnv(name: string): Promise<Record<string, string>> {
    try {
      return (await this.#agents.resolve(name)).env;
    } catch {
      return {}; // the job carries the names; a vanished agent passes none
    }
  }
}
