import type { Role } from './schema.ts';

/**
 * Every role, weakest first: each one can do what the ones before it can. A module of its own:
 * the CLI lists them in `allow --help` without loading any database code.
 */
export const ROLES: readonly Role[] = ['viewer', 'operator', 'approver', 'admin'];
