/**
 * Which test files are slow: they start child processes (agents, git, `phasebridge` CLIs,
 * redis-server, python3), need Redis or drive a browser. Everything else is the fast tier
 * (`npm run test:fast`). A whole folder whose files all do that is listed once; a slow file in an
 * otherwise fast folder is named. docs/test-reliability.md says how to place a new file.
 */

/** Folders (and naming rules) whose files are all slow. */
export const SLOW_GLOBS = [
  'test/app/**/*.test.ts',
  // Direct children only: test/cli/render/ holds pure renderers (fast).
  'test/cli/*.test.ts',
  'test/contracts/**/*.test.ts',
  // Repositories on both dialects: postgres (one server per fork, test/support/postgres.ts).
  'test/db/contract/**/*.test.ts',
  'test/db/repositories/**/*.test.ts',
  'test/e2e/**/*.test.ts',
  'test/real-cli/**/*.test.ts',
  'test/scripts/**/*.test.ts',
  'test/jobs/git/**/*.test.ts',
  'test/jobs/orchestrator/**/*.test.ts',
  'test/jobs/workers/**/*.test.ts',
  // Chat stories run whole workflows: the demo agent is a child process.
  'test/**/*-stories.test.ts',
];

/** Slow files in otherwise fast folders, and why. */
export const SLOW_FILES = [
  // mkfifo, a dead pid from a finished node, git: child processes.
  'test/engine/ledger/ledger-file.test.ts',
  'test/engine/ledger/temp-sweep.test.ts',
  'test/jobs/runner/step-record.test.ts',
  // A run through the bridge: demo agent and git child processes.
  'test/bridges/outbox/outbox.test.ts',
  'test/bridges/platform-markup.test.ts',
  'test/bridges/slack/limits.test.ts',
  'test/bridges/web/chatops-story.test.ts',
  'test/bridges/web/operator-routes.test.ts',
  'test/bridges/web/runs-pages-untrusted.test.ts',
  'test/bridges/web/runs-pages.test.ts',
  'test/chatops/checkpoint-message.test.ts',
  'test/chatops/follow-codexclaw.test.ts',
  'test/chatops/full-access-marker.test.ts',
  'test/chatops/notifier-outbox.test.ts',
  // The real approval-server process, over MCP stdio.
  'test/chatops/tool-approval-push.test.ts',
  'test/chatops/vocabulary.test.ts',
  // A checkpointer thread; a migration raced by a second process.
  'test/db/checkpointer.test.ts',
  'test/db/migrator.test.ts',
  // python3 (PyYAML) reads the layout's YAML.
  'test/engine/layouts/flow/flow.test.ts',
  // Locks and crashes across processes.
  'test/engine/ledger/run-lock.test.ts',
  'test/engine/ledger/safe-path.test.ts',
  'test/engine/store/crash.test.ts',
  'test/engine/store/run-store-lock.test.ts',
  // Queue drivers with worker processes; BullMQ needs redis-server.
  'test/jobs/queue/bullmq.test.ts',
  'test/jobs/queue/bullmq-network-cut.test.ts',
  'test/jobs/queue/bullmq-redis-gone.test.ts',
  'test/jobs/queue/bullmq-retention.test.ts',
  'test/jobs/queue/sqlite.test.ts',
  // Agents and git as child processes; a tmpfs mount; the approval server over MCP stdio.
  'test/jobs/runner/agent-failure.test.ts',
  'test/jobs/runner/approval-server.test.ts',
  'test/jobs/runner/demo-agent.test.ts',
  'test/jobs/runner/disk-full.test.ts',
  'test/jobs/runner/git-diff.test.ts',
  'test/jobs/runner/kill-tree.test.ts',
  'test/jobs/runner/run-agent.test.ts',
];

/**
 * The longest files and about how long each takes (s, quiet 2-core machine): started first when
 * vitest has no timing of its own (a fresh clone, CI), so no long file starts last and runs alone
 * at the end (test/support/sequencer.ts). Order matters only among these; update them when the
 * ten slowest in docs/test-reliability.md change.
 */
export const LONG_FILES: Readonly<Record<string, number>> = {
  'test/contracts/telegram.test.ts': 60,
  'test/e2e/console.browser.test.ts': 45,
  // Two `serve` on postgres and redis-server, a kill and a takeover, a third start.
  'test/app/serve-standby-console.test.ts': 36,
  'test/contracts/slack.test.ts': 35,
  'test/cli/chaos.test.ts': 33,
  'test/contracts/tool-approvals.test.ts': 30,
  'test/contracts/files.test.ts': 28,
  'test/jobs/workers/remote-workers.test.ts': 26,
  'test/app/console-chat-signin.test.ts': 22,
  'test/contracts/people-link.test.ts': 20,
  'test/chatops/repeat-stories.test.ts': 20,
  'test/contracts/web.test.ts': 19,
  'test/contracts/one-truth.test.ts': 19,
  'test/cli/sessions-sigkill.test.ts': 18,
  'test/cli/sessions-sigkill-late.test.ts': 18,
  'test/cli/sessions-sigkill-choices.test.ts': 15,
  'test/app/unreachable-telegram.test.ts': 17,
  'test/contracts/pabcd.test.ts': 15,
  'test/contracts/discord.test.ts': 17,
  // Measured 2026-12-06 (quiet, 3 forks): started last by the 4 s default, they ran to the end.
  'test/contracts/words.test.ts': 32,
  'test/app/serve-failover.test.ts': 26,
  'test/app/serve-network-cut.test.ts': 23,
  'test/scripts/bin.test.ts': 21,
  'test/chatops/session-offer-kill-stories.test.ts': 19,
  'test/app/serve-failover-worker.test.ts': 17,
  'test/real-cli/agents-offline.test.ts': 16,
  'test/app/leader-lease.test.ts': 15,
  'test/cli/sessions-sigkill-offer.test.ts': 14,
  'test/app/slack-refusals.test.ts': 13,
  'test/app/unreachable-slack.test.ts': 13,
  'test/app/telegram-refusals.test.ts': 13,
  'test/contracts/live.test.ts': 12,
  'test/app/serve-postgres-cut.test.ts': 12,
  'test/app/slack-socket-mode.test.ts': 12,
  'test/app/discord-gateway.test.ts': 11,
  'test/app/uneditable-checkpoints.test.ts': 11,
  'test/cli/serve-words.test.ts': 11,
};
