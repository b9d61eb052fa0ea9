import { describe, expect, it } from 'vitest';
import { buildAgentEnv, DEFAULT_SECRET_ENV_NAMES } from '../../../src/jobs/runner/env.ts';

const ids = { runId: 'r', stepId: 's', directiveFile: '/d.json', specFile: '/spec.md' };

describe('buildAgentEnv', () => {
  it('sets the four PHASEBRIDGE_* variables over anything inherited', () => {
    const env = buildAgentEnv({ ...ids, baseEnv: { PHASEBRIDGE_RUN_ID: 'old' }, agentEnv: {} });
    expect(env).toEqual({
      PHASEBRIDGE_RUN_ID: 'r',
      PHASEBRIDGE_STEP_ID: 's',
      PHASEBRIDGE_DIRECTIVE_FILE: '/d.json',
      PHASEBRIDGE_SPEC_FILE: '/spec.md',
    });
  });

  it('removes the default secrets, the configured ones and the bridge settings', () => {
    const baseEnv: NodeJS.ProcessEnv = {
      HOME: '/home/u',
      MY_KEY: 'k',
      PHASEBRIDGE_HOME: '/pb',
      UNSET: undefined,
    };
    for (const name of DEFAULT_SECRET_ENV_NAMES) baseEnv[name] = 'x';
    const env = buildAgentEnv({
      ...ids,
      baseEnv,
      agentEnv: { MY_KEY: 'again' },
      secretEnvNames: ['MY_KEY'],
    });
    expect(Object.keys(env).sort()).toEqual([
      'HOME',
      'PHASEBRIDGE_DIRECTIVE_FILE',
      'PHASEBRIDGE_RUN_ID',
      'PHASEBRIDGE_SPEC_FILE',
      'PHASEBRIDGE_STEP_ID',
    ]);
  });

  it('the agent env overrides the base env', () => {
    const env = buildAgentEnv({
      ...ids,
      baseEnv: { MODE: 'a' },
      agentEnv: { MODE: 'b', EXTRA: '1' },
    });
    expect(env).toMatchObject({ MODE: 'b', EXTRA: '1' });
  });
});
