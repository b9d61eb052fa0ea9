/** Issue 29: one way to name a person. */
import { describe, expect, it } from 'vitest';
import { peopleNames, personName } from '../../src/engine/person-name.ts';

describe('personName', () => {
  it('is the name people go by, the OS user for the CLI, the id only when nothing else is known', () => {
    expect(personName({ id: 'telegram:3003', name: '@carol' })).toBe('@carol');
    expect(personName({ id: 'telegram:3004', name: 'Dana' })).toBe('Dana');
    expect(personName({ id: 'cli:alice' })).toBe('alice');
    expect(personName({ id: 'cli:alice', name: '  ' })).toBe('alice');
    expect(personName({ id: 'slack:U0BOB' })).toBe('slack:U0BOB');
    expect(personName({ id: 'system' })).toBe('system');
  });

  it('lists several people in words', () => {
    expect(peopleNames([])).toBe('nobody');
    expect(
      peopleNames([{ id: 'cli:alice' }, { id: 'x', name: '@bob' }, { id: 'y', name: 'Cy' }]),
    ).toBe('alice, @bob and Cy');
  });
});
