import { describe, expect, it } from 'vitest';
import { decideAccess, hasRole, REQUIRED_ROLE, refusalText } from '../../src/chatops/authorize.ts';
import { VERBS } from '../../src/chatops/grammar.ts';

describe('authorize', () => {
  it('orders roles viewer < operator < approver < admin', () => {
    expect(hasRole('admin', 'approver')).toBe(true);
    expect(hasRole('approver', 'operator')).toBe(true);
    expect(hasRole('operator', 'approver')).toBe(false);
    expect(hasRole('viewer', 'viewer')).toBe(true);
    expect(hasRole(null, 'viewer')).toBe(false);
  });

  it('gives the issue’s roles to the verbs', () => {
    for (const v of ['run', 'cancel', 'resume', 'skip', 'retry', 'revert'] as const) {
      expect(REQUIRED_ROLE[v]).toBe('operator');
    }
    expect(REQUIRED_ROLE.phase).toBe('viewer');
    expect(REQUIRED_ROLE.approve).toBe('approver');
    expect(REQUIRED_ROLE.reject).toBe('approver');
    for (const v of ['allow', 'deny', 'bind', 'agents', 'repair'] as const)
      expect(REQUIRED_ROLE[v]).toBe('admin');
  });

  it('serves only whoami, console, link, help and pair in an unbound chat, whatever the role', () => {
    const open = VERBS.filter((v) => decideAccess(v, false, 'admin').allowed);
    // `console` and `link` check the person's role themselves (a private chat is unbound).
    expect(open.sort()).toEqual(['console', 'help', 'link', 'pair', 'whoami']);
    expect(decideAccess('status', false, 'admin')).toEqual({ allowed: false, why: 'unbound' });
  });

  it('denies by default in a bound chat and names the missing role', () => {
    expect(decideAccess('status', true, null)).toEqual({
      allowed: false,
      why: 'role',
      required: 'viewer',
    });
    expect(decideAccess('approve', true, 'operator')).toMatchObject({
      allowed: false,
      required: 'approver',
    });
    expect(decideAccess('approve', true, 'admin')).toEqual({ allowed: true });
  });

  it('refuses without detail of the target', () => {
    expect(refusalText('answer')).toBe('You are not allowed to answer checkpoints here.');
    expect(refusalText('cancel')).toBe('You are not allowed to use cancel here.');
  });
});
