/**
 * `repair` for the CLI and chat: runs RunStore.repair on a run with the layouts the orchestrator
 * writes (codemachine included, with the agents' engines and models), and words the report.
 */
import path from 'node:path';
import type { AgentsRepo } from '../../db/repositories/agents.ts';
import { loadLayoutProjections } from '../../engine/layouts/index.ts';
import { RunStore } from '../../engine/store/run-store.ts';
import type { RepairReport } from '../../engine/store/types.ts';
import { AgentResolver } from './agent-resolver.ts';
import { describeLockConflict } from './run-stores.ts';

/** What {@link repairRun} needs. */
export interface RepairRunInput {
  workspace: string;
  runId: string;
  /** Only report what is wrong and what a repair would keep and drop. */
  dryRun: boolean;
  /** The named agents (engine and model shown in the rebuilt codemachine files). */
  agents: AgentsRepo;
  clock?: () => Date;
}

/** Repairs (or, dry, inspects) one run; ConflictError when another process drives it. */
export async function repairRun(input: RepairRunInput): Promise<RepairReport> {
  const resolver = new AgentResolver(input.agents);
  await resolver.knownNames();
  const layouts = await loadLayoutProjections({ agentInfo: (name) => resolver.info(name) });
  const store = new RunStore({
    workspace: input.workspace,
    layouts,
    ...(input.clock && { clock: input.clock }),
  });
  try {
    return await store.repair(input.runId, { dryRun: input.dryRun });
  } catch (err) {
    throw describeLockConflict(err, input.runId);
  } finally {
    await store.close();
    for (const layout of layouts) layout.close?.();
  }
}

/** At most this many dropped lines are listed one by one. */
const LISTED = 10;

/** The report in lines of text (the same in a terminal and in chat). */
export function describeRepair(r: RepairReport, dryRun: boolean): string[] {
  const id = r.runId;
  if (r.problems.length === 0) {
    return [`run ${id}: nothing to repair (${r.lines} ledger lines, seq ${r.state?.seq ?? 0})`];
  }
  const lines = [
    `run ${id}: ${r.problems.length === 1 ? 'one problem' : `${r.problems.length} problems`}`,
  ];
  for (const p of r.problems) lines.push(`  - ${p}`);
  if (r.refused !== null) {
    lines.push(`cannot repair it: ${r.refused}`);
    return lines;
  }
  const keeps = dryRun ? 'would keep' : 'kept';
  lines.push(
    `${keeps} ledger lines 1-${r.kept} of ${r.lines} (seq ${r.state?.seq ?? 0}, status ${r.state?.status ?? '?'})`,
  );
  if (r.dropped.length > 0) {
    lines.push(`${dryRun ? 'would drop' : 'dropped'} ${r.dropped.length} line(s):`);
    for (const d of r.dropped.slice(0, LISTED)) {
      const what = d.command ?? 'unreadable';
      const key = d.key === undefined ? '' : ` (key ${d.key})`;
      lines.push(`  line ${d.line}: ${what}${key}`);
    }
    if (r.dropped.length > LISTED) lines.push(`  … and ${r.dropped.length - LISTED} more`);
  }
  if (r.backups.length > 0) {
    const names = r.backups.map((b) => path.basename(b)).join(', ');
    lines.push(`${dryRun ? 'would back up' : 'backups'}: ${names}`);
  }
  if (dryRun) {
    lines.push(`dry run: nothing was changed; \`phasebridge repair ${id}\` does it`);
  } else {
    lines.push('rebuilt run.json and the layout files from the kept ledger lines');
    for (const w of r.warnings) lines.push(`warning: ${w}`);
  }
  return lines;
}
