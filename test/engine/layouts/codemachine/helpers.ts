/** Shared set-up of the codemachine layout tests: a temp workspace with a RunStore and the layout. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CodemachineLayout,
  type CodemachineLayoutOptions,
} from '../../../../src/engine/layouts/codemachine/index.ts';
import { registerAgentRun } from '../../../../src/engine/layouts/codemachine/registry-db.ts';
import { stepJobId } from '../../../../src/engine/model.ts';
import { RunStore } from '../../../../src/engine/store/run-store.ts';
import { Driver, RUN_ID } from './driver.ts';

/** A workspace, a store writing the codemachine layout, and a driver on it. */
export interface Harness {
  ws: string;
  layout: CodemachineLayout;
  store: RunStore;
  d: Driver;
  /** Registers the step's current attempt like the job runner does, then commits its session. */
  session(stepId: string): Promise<number>;
  /** Closes everything and removes the workspace. */
  dispose(): Promise<void>;
}

/** Creates a {@link Harness} in a fresh temp folder. */
export function makeHarness(opts: CodemachineLayoutOptions = {}): Harness {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-cm-'));
  const layout = new CodemachineLayout(opts);
  const store = new RunStore({ workspace: ws, layouts: [layout] });
  const d = new Driver(ws, store);
  return {
    ws,
    layout,
    store,
    d,
    async session(stepId) {
      const step = d.run.steps.find((s) => s.id === stepId)!;
      const def = d.run.workflow.steps[step.index]!;
      const { monitoringId } = registerAgentRun(ws, {
        jobId: stepJobId(RUN_ID, stepId, step.attempt),
        runId: RUN_ID,
        stepId,
        kind: 'step',
        attempt: step.attempt,
        name: step.agent,
        start: step.startedAt ?? d.now(),
        prompt: def.prompt,
      });
      await d.send({
        type: 'sessionInitialized',
        stepId,
        sessionId: `sess-${stepId}-${step.attempt}`,
        monitoringId,
      });
      return monitoringId;
    },
    async dispose() {
      await store.close();
      layout.close();
      fs.rmSync(ws, { recursive: true, force: true });
    },
  };
}
