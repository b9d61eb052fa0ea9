/**
 * The argvs a named agent would run with, for `doctor` to check against the installed CLI: its
 * own posture, or both default postures (read-only for plan/review steps, edit for the rest).
 */
import type { AgentRecord } from '../../db/repositories/agents.ts';
import { buildArgv as runnerArgv } from '../runner/agent-argv.ts';
import type { AgentPermissions } from '../runner/permissions.ts';
import { definitionOf } from './agent-resolver.ts';

const PROBE = {
  runId: 'doctor',
  stepId: 'doctor',
  attempt: 1,
  workspace: '/workspace',
  prompt: '',
  specFile: '/workspace/spec.md',
  directiveFile: '/workspace/directive.json',
  logFile: '/workspace/logs/doctor-1.log',
  mcpConfig: '/workspace/logs/mcp-doctor-1.json',
};

/** Every argv (binary first) the agent can run with; [] for a definition that cannot build one. */
export function probeArgvs(record: AgentRecord): string[][] {
  const def = definitionOf(record);
  const postures: AgentPermissions[] = def.permissions
    ? [def.permissions]
    : [{ posture: 'read-only' }, { posture: 'edit' }];
  const out: string[][] = [];
  for (const permissions of postures) {
    try {
      const cmd = runnerArgv({ ...def, permissions }, PROBE);
      out.push([cmd.file, ...cmd.args]);
    } catch {
      // An unusable definition fails its steps with its own message; doctor checks the rest.
    }
  }
  return out;
}
