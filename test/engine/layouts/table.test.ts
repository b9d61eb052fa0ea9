/** The layouts table (issue 37): one list of formats, from which names, schemas and projections come. */
import { describe, expect, it } from 'vitest';
import {
  isLayoutName,
  layoutModule,
  layoutNames,
  loadLayoutProjections,
  registerLayout,
} from '../../../src/engine/layouts/index.ts';
import { layoutSchema } from '../../../src/engine/layouts/schema.ts';
import { ConflictError } from '../../../src/errors.ts';

const BUILTIN = ['native', 'codemachine', 'codexclaw', 'flow', 'coordinator'];

describe('the layouts table', () => {
  it('lists the built-in formats, native first', () => {
    expect(layoutNames()).toEqual(BUILTIN);
    expect(BUILTIN.every(isLayoutName)).toBe(true);
    expect(isLayoutName('nope')).toBe(false);
    expect(layoutModule('nope')).toBeUndefined();
  });

  it('makes the projections in the order the store writes them (native run.json is the store’s)', async () => {
    const projections = await loadLayoutProjections({ agentInfo: () => undefined });
    expect(projections.map((p) => p.name)).toEqual(BUILTIN.slice(1));
    for (const p of projections) p.close?.();
  });

  it('refuses a second module with a taken name and leaves the first in place', () => {
    const first = layoutModule('flow');
    expect(() => registerLayout({ name: 'flow' })).toThrow(ConflictError);
    expect(layoutModule('flow')).toBe(first);
  });

  it('a layout name parses against the table as it is at parse time', () => {
    const refused = layoutSchema.safeParse('ticket');
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toBe(
      'Invalid option: expected one of "native"|"codemachine"|"codexclaw"|"flow"|"coordinator"',
    );
    const unregister = registerLayout({ name: 'ticket' });
    try {
      expect(layoutSchema.safeParse('ticket').success).toBe(true);
      expect(layoutNames()).toEqual([...BUILTIN, 'ticket']);
    } finally {
      unregister();
    }
    expect(layoutSchema.safeParse('ticket').success).toBe(false);
    expect(layoutSchema.safeParse(3).success).toBe(false);
  });
});
