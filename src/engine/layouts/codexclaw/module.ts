/**
 * The codexclaw format as a module: `.codexclaw/sessions/<id>.json` and `.codexclaw/ledger.jsonl`
 * for PABCD runs. Its rules: the workflow must be a phase cycle, and the run starts in phase IDLE
 * (the gates and moves then follow from `state.pabcd`, see src/engine/pabcd/).
 */

import { initialPabcd } from '../../pabcd/phases.ts';
import { phaseWorkflowProblem } from '../../pabcd/workflow-check.ts';
import type { LayoutModule } from '../module.ts';
import { followedRowText } from './follow-words.ts';

/** The codexclaw layout module. */
export const codexclawModule: LayoutModule<'codexclaw'> = {
  name: 'codexclaw',
  async projection() {
    const { codexclawLayout } = await import('./index.ts');
    return () => codexclawLayout;
  },
  rules: {
    startProblem: phaseWorkflowProblem,
    initialFields: (e) => ({ pabcd: initialPabcd(e.at) }),
  },
  // Sessions codexclaw itself drives: their ledger rows are announced (read-only).
  follow: {
    folder: '.codexclaw/',
    what: 'codexclaw sessions',
    label: 'codexclaw',
    announces: 'their phase changes',
    async present(workspace) {
      const { hasCodexclaw } = await import('./follow.ts');
      return hasCodexclaw(workspace);
    },
    async end(workspace) {
      const { ledgerEnd } = await import('./follow.ts');
      return ledgerEnd(workspace);
    },
    async tail(workspace, offset) {
      const { readLedgerTail } = await import('./follow.ts');
      return readLedgerTail(workspace, offset);
    },
    rowText: followedRowText,
  },
};
