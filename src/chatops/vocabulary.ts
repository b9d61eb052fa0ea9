/**
 * One vocabulary for chat and CLI: every chat verb, the role it needs in chat, and the
 * `phasebridge` command that does the same from a shell (same name wherever one exists). The
 * CLI-only commands are listed with why chat has no such verb. Pure data; authorize.ts reads the
 * roles from here, and a test checks both sides against the grammar and the CLI program.
 */
import type { Role } from '../db/schema.ts';
import type { Verb } from './grammar.ts';

/** One chat verb: the role it needs (null: anyone, also in an unbound chat) and its CLI command. */
export interface VocabularyEntry {
  readonly role: Role | null;
  readonly cli: string;
}

/** The parity table: chat verb → chat role, CLI command. */
export const VOCABULARY: Readonly<Record<Verb, VocabularyEntry>> = {
  run: { role: 'operator', cli: 'run' },
  status: { role: 'viewer', cli: 'status' },
  phase: { role: 'viewer', cli: 'phase' },
  prompt: { role: 'viewer', cli: 'prompt' },
  diff: { role: 'viewer', cli: 'diff' },
  runs: { role: 'viewer', cli: 'runs' },
  sessions: { role: 'viewer', cli: 'sessions' },
  approve: { role: 'approver', cli: 'approve' },
  changes: { role: 'approver', cli: 'changes' },
  reject: { role: 'approver', cli: 'reject' },
  cancel: { role: 'operator', cli: 'cancel' },
  resume: { role: 'operator', cli: 'resume' },
  skip: { role: 'operator', cli: 'skip' },
  retry: { role: 'operator', cli: 'retry' },
  reopen: { role: 'approver', cli: 'reopen' },
  revert: { role: 'operator', cli: 'revert' },
  repair: { role: 'admin', cli: 'repair' },
  agents: { role: 'admin', cli: 'agents' },
  workflows: { role: 'viewer', cli: 'workflows' },
  bind: { role: 'admin', cli: 'bind' },
  allow: { role: 'admin', cli: 'allow' },
  deny: { role: 'admin', cli: 'deny' },
  bindings: { role: 'admin', cli: 'bindings' },
  unbind: { role: 'admin', cli: 'unbind' },
  access: { role: 'admin', cli: 'access' },
  whoami: { role: null, cli: 'whoami' },
  // Anyone may ask; the handler sends a link only to a person with a role here (or globally).
  console: { role: null, cli: 'console' },
  // Anyone may ask; the handler links only a person with a role somewhere, and grants none.
  link: { role: null, cli: 'link' },
  pair: { role: null, cli: 'pair' },
  help: { role: null, cli: 'help' },
};

/** Aliases known on both sides (chat grammar and CLI). */
export const SHARED_ALIASES: Readonly<Record<string, Verb>> = { loop: 'changes' };

/** CLI commands without a chat verb, and why. */
export const CLI_ONLY: Readonly<Record<string, string>> = {
  serve: 'runs the bridge itself',
  worker: 'runs jobs in another process',
  login: 'opens the web console from a shell',
  logins: "lists and revokes console sessions on the bridge's host",
  migrate: "upgrades bridge.db's schema",
  doctor: 'checks the host, config and platform tokens',
  setup: 'connects a platform bot',
  init: "writes the first config and prints each platform's steps (setup with no platform)",
  logs: "a step's agent log is a file on the bridge's host",
  follow: 'chat follows a workspace with bind --follow',
  'approval-server': "Claude Code starts it from a step's MCP config (permissions: ask)",
  prune: "drops old rows of bridge.db on the bridge's host (serve also does it)",
  archive: "packs finished runs' folders on the bridge's host",
  people: "lists and unlinks the people of bridge.db on the bridge's host (chat links with link)",
  audit:
    "reads bridge.db's audit rows and a run's ledger on the bridge's host (the console exports them)",
};
