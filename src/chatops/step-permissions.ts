/**
 * The permission posture a run's step declares, as chat shows and judges it: the workflow step's
 * `permissions:`, else its named agent's (`phasebridge agents add --permissions`). Undeclared
 * steps run with the default posture, which chat does not show. Read from bridge.db when asked,
 * so a step of an agent whose posture is `full` is marked too, not only steps that say so.
 */
import type { Repositories } from '../db/repositories/index.ts';
import type { RunState } from '../engine/model.ts';
import type { AgentPermissions } from '../engine/workflow/types.ts';

/** The declared posture of `stepId` in the run, or undefined (the default posture). */
export async function declaredPermissions(
  repos: Pick<Repositories, 'agents'>,
  state: RunState,
  stepId: string,
): Promise<AgentPermissions | undefined> {
  const step = state.workflow.steps.find((s) => s.id === stepId);
  if (step === undefined) return undefined;
  if (step.permissions !== undefined) return step.permissions;
  return (await repos.agents.get(step.agent))?.permissions ?? undefined;
}

/** Ids of the run's steps whose declared posture is `full` (the status message marks them). */
export async function fullAccessSteps(
  repos: Pick<Repositories, 'agents'>,
  state: RunState,
): Promise<Set<string>> {
  const full = new Set<string>();
  const agents = new Map<string, AgentPermissions | undefined>();
  for (const step of state.workflow.steps) {
    if (step.permissions === undefined && !agents.has(step.agent)) {
      agents.set(step.agent, (await repos.agents.get(step.agent))?.permissions ?? undefined);
    }
    const perms = step.permissions ?? agents.get(step.agent);
    if (perms?.posture === 'full') full.add(step.id);
  }
  return full;
}
