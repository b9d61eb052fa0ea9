/**
 * The codemachine format as a module: `.codemachine/` (template.json, directive, spec, agent
 * config, registry.db and agent logs). One template.json per workspace, hand edits of it steer
 * the run, and every agent run gets a registry row and its own log with the prompt.
 */
import type { RunState } from '../../model.ts';
import type { LayoutModule, ProjectionDeps } from '../module.ts';
import type { HandEdit } from './hand-edits.ts';
import { codemachinePaths } from './paths.ts';

/** The codemachine layout module. */
export const codemachineModule: LayoutModule<'codemachine'> = {
  name: 'codemachine',
  async projection() {
    const { CodemachineLayout } = await import('./index.ts');
    const { skipTargets } = await import('./hand-edits.ts');
    /** True when a hand edit turns into a command (revert, reset, skip of the current/a later step). */
    const actionable = (edit: HandEdit, state: RunState): boolean => {
      if (edit.kind === 'revert' || edit.kind === 'reset') return true;
      if (edit.kind !== 'skip') return false;
      const targets = skipTargets(state, edit.indexes);
      return targets.current !== undefined || targets.ahead.length > 0;
    };
    return (deps: ProjectionDeps) => {
      const notify = deps.onHandEdit;
      return new CodemachineLayout({
        agentInfo: deps.agentInfo,
        // Keep an actionable edit on disk until its command is committed, so a commit racing the
        // supervisor (a step finishing) does not overwrite it.
        ...(notify && {
          onHandEdit: (edit: HandEdit, state: RunState) => {
            const keep = actionable(edit, state);
            if (keep) notify(state.id);
            return keep;
          },
        }),
      });
    };
  },
  // `.codemachine/` holds one template.json: one unfinished codemachine run per workspace.
  start: { onePerWorkspace: true },
  steps: {
    agentFiles(workspace) {
      const cm = codemachinePaths(workspace);
      return { specFile: cm.spec, directiveFile: cm.directive, specWrittenByLayout: true };
    },
    logsPrompt: true,
    agentRegistry: true,
  },
  handEdits: {
    watchedFile: (workspace) => codemachinePaths(workspace).template,
    async check(state) {
      const { checkTemplateEdit } = await import('./hand-edit-plan.ts');
      return checkTemplateEdit(state);
    },
    async pendingLines(state) {
      const { pendingTemplateEditLines } = await import('./hand-edit-plan.ts');
      return pendingTemplateEditLines(state);
    },
  },
};
