import { describe, expect, it } from 'vitest';
import { migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import type { Database } from '../../src/db/schema.ts';

/** Every column of every table; the mapped type makes tsc demand exactly the fields of schema.ts. */
type Columns = { [T in keyof Database]: { [C in keyof Database[T]]: true } };

const COLUMNS: Columns = {
  channels: { id: true, platform: true, display_name: true, config_json: true, created_at: true },
  agents: {
    id: true,
    name: true,
    engine: true,
    argv_json: true,
    model: true,
    env_json: true,
    timeout_ms: true,
    prompt_via: true,
    permissions_json: true,
    enabled: true,
    created_at: true,
    updated_at: true,
  },
  full_access_workspaces: { workspace: true, allowed_by: true, created_at: true },
  tool_approvals: {
    id: true,
    run_id: true,
    step_id: true,
    attempt: true,
    tool: true,
    input_json: true,
    summary: true,
    status: true,
    scope: true,
    rule: true,
    reason: true,
    decided_by: true,
    created_at: true,
    expires_at: true,
    decided_at: true,
  },
  bindings: {
    id: true,
    chat_ref: true,
    thread: true,
    workspace: true,
    default_workflow: true,
    default_agent: true,
    notify_json: true,
    created_at: true,
    updated_at: true,
  },
  allowlist: {
    id: true,
    binding_id: true,
    scope: true,
    platform: true,
    user_id: true,
    role: true,
    created_at: true,
  },
  runs: {
    id: true,
    workflow_id: true,
    workspace: true,
    layout: true,
    status: true,
    started_by: true,
    origin_chat: true,
    created_at: true,
    updated_at: true,
    finished_at: true,
    archived_at: true,
    spec: true,
  },
  checkpoint_messages: {
    id: true,
    run_id: true,
    checkpoint_id: true,
    chat_ref: true,
    message_ref: true,
    button_token: true,
    state: true,
    created_at: true,
    updated_at: true,
    decision_shown: true,
  },
  jobs: {
    id: true,
    run_id: true,
    step_id: true,
    attempt: true,
    state: true,
    payload_json: true,
    available_at: true,
    lease_owner: true,
    lease_expires_at: true,
    created_at: true,
    started_at: true,
    finished_at: true,
    exit_code: true,
    tokens_in: true,
    tokens_out: true,
    cost_usd: true,
    error: true,
    result_json: true,
    lease_count: true,
    cancel_requested_at: true,
    lost: true,
    outcome_seq: true,
    signal_seq: true,
    progress_json: true,
  },
  audit: {
    id: true,
    at: true,
    actor: true,
    action: true,
    target: true,
    chat_ref: true,
    outcome: true,
    detail: true,
  },
  pairing_codes: { code_hash: true, expires_at: true, used_at: true, created_at: true },
  run_changes: { id: true, run_id: true, seq: true, pid: true, at: true },
  run_feed: { run_id: true, seq: true, updated_at: true },
  status_messages: {
    run_id: true,
    chat_ref: true,
    message_ref: true,
    created_at: true,
    updated_at: true,
  },
  reason_prompts: {
    prompt_ref: true,
    platform: true,
    user_id: true,
    run_id: true,
    checkpoint_id: true,
    answer: true,
    asked_at: true,
    expires_at: true,
  },
  console_login_tokens: { token_hash: true, expires_at: true, created_at: true, person_json: true },
  console_sessions: {
    cookie_hash: true,
    session_id: true,
    created_at: true,
    last_seen_at: true,
    person_json: true,
    expires_at: true,
  },
  channel_state: { platform: true, key: true, value: true, expires_at: true, updated_at: true },
  followed_workspaces: { workspace: true, ledger_offset: true, created_at: true, updated_at: true },
  outbox: {
    id: true,
    platform: true,
    lane: true,
    kind: true,
    target: true,
    payload_json: true,
    urgency: true,
    state: true,
    attempts: true,
    not_before: true,
    result_ref: true,
    error_code: true,
    error: true,
    created_at: true,
    updated_at: true,
    owner_json: true,
    dedupe_key: true,
  },
  unreachable_chats: { chat_ref: true, reason: true, detail: true, since: true, updated_at: true },
  session_offers: {
    id: true,
    workspace: true,
    kind: true,
    session: true,
    session_state: true,
    chat_ref: true,
    message_ref: true,
    button_token: true,
    status: true,
    decision: true,
    decided_by: true,
    decided_at: true,
    created_at: true,
    updated_at: true,
  },
  flow_run_cache: {
    workspace: true,
    dir_stamp: true,
    open_json: true,
    entries_json: true,
    updated_at: true,
  },
  people: { actor_id: true, name: true, updated_at: true },
};

describe('schema.ts', () => {
  it('describes exactly the tables and columns the migrations create', async () => {
    const db = openBridgeDb({ file: ':memory:' });
    try {
      await migrateToLatest(db);
      const tables = db.sqlite
        .prepare(
          "select name from sqlite_master where type = 'table' and name not like 'kysely_%' and name not like 'sqlite_%'",
        )
        .all() as { name: string }[];
      const actual = Object.fromEntries(
        tables.map(({ name }) => [
          name,
          (db.sqlite.pragma(`table_xinfo(${name})`) as { name: string }[])
            .map((c) => c.name)
            .sort(),
        ]),
      );
      const expected = Object.fromEntries(
        Object.entries(COLUMNS).map(([table, cols]) => [table, Object.keys(cols).sort()]),
      );
      expect(actual).toEqual(expected);
    } finally {
      await db.close();
    }
  });
});
