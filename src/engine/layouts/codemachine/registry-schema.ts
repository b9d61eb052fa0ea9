/**
 * Schema of `.codemachine/logs/registry.db`. The `agents` and `telemetry` tables are
 * CodeMachine's own (same names and columns, so its monitor and log viewer read our rows), with
 * 'skipped' allowed as a status as CodeMachine's runtime-state document lists it. Our additions
 * live in separate tables so CodeMachine's `SELECT a.*` is unchanged, plus the `agent_runs` view:
 * one flat row per agent run for plain SQL readers.
 */
import type Database from 'better-sqlite3';

/** Statuses an agent run can have. */
export const AGENT_RUN_STATUSES = ['running', 'completed', 'failed', 'paused', 'skipped'] as const;

/** One agent run's status in registry.db. */
export type AgentRunStatus = (typeof AGENT_RUN_STATUSES)[number];

const STATUS_CHECK = AGENT_RUN_STATUSES.map((s) => `'${s}'`).join(', ');

const AGENTS_TABLE = (name: string) => `
CREATE TABLE ${name} (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  engine TEXT,
  status TEXT NOT NULL CHECK(status IN (${STATUS_CHECK})),
  parent_id INTEGER REFERENCES agents(id) ON DELETE CASCADE,
  pid INTEGER,
  start_time TEXT NOT NULL,
  end_time TEXT,
  duration INTEGER,
  prompt TEXT NOT NULL,
  log_path TEXT NOT NULL,
  error TEXT,
  engine_provider TEXT,
  model_name TEXT,
  session_id TEXT,
  accumulated_duration INTEGER DEFAULT 0,
  last_duration_update TEXT,
  pause_count INTEGER DEFAULT 0,
  created_at TEXT DEFAULT CURRENT_TIMESTAMP,
  updated_at TEXT DEFAULT CURRENT_TIMESTAMP
)`;

const REST = `
CREATE INDEX IF NOT EXISTS idx_parent_id ON agents(parent_id);
CREATE INDEX IF NOT EXISTS idx_status ON agents(status);

CREATE TABLE IF NOT EXISTS telemetry (
  agent_id INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
  tokens_in INTEGER DEFAULT 0,
  tokens_out INTEGER DEFAULT 0,
  cached_tokens INTEGER DEFAULT 0,
  cost REAL,
  cache_creation_tokens INTEGER,
  cache_read_tokens INTEGER
);

-- phasebridge: which job (runId:stepId:attempt, runId:stepId:trigger:attempt, or
-- runId:stepId:skip@seq for a step skipped before it ran) each agent row records.
CREATE TABLE IF NOT EXISTS phasebridge_jobs (
  job_id TEXT PRIMARY KEY,
  agent_id INTEGER NOT NULL UNIQUE REFERENCES agents(id) ON DELETE CASCADE,
  run_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK(kind IN ('step', 'trigger', 'skip')),
  attempt INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_pb_jobs_step ON phasebridge_jobs(run_id, step_id, kind, attempt);

-- phasebridge: the last ledger seq of each run applied to this database (exactly-once replay).
CREATE TABLE IF NOT EXISTS phasebridge_runs (
  run_id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL
);

CREATE VIEW IF NOT EXISTS agent_runs AS
SELECT a.id, a.name, a.engine, a.status,
       a.start_time AS start, a.end_time AS "end", a.duration AS duration_ms,
       a.prompt, a.log_path, a.error,
       COALESCE(t.tokens_in, 0) AS tokens_in, COALESCE(t.tokens_out, 0) AS tokens_out,
       COALESCE(t.cached_tokens, 0) AS cached_tokens, COALESCE(t.cost, 0) AS cost,
       a.parent_id, a.session_id, j.run_id, j.step_id, j.kind, j.attempt
FROM agents a
LEFT JOIN telemetry t ON t.agent_id = a.id
LEFT JOIN phasebridge_jobs j ON j.agent_id = a.id;
`;

/** Columns we write; an older CodeMachine table without one of them is rebuilt. */
const NEEDED_COLUMNS = [
  'name',
  'engine',
  'status',
  'parent_id',
  'start_time',
  'end_time',
  'duration',
  'prompt',
  'log_path',
  'error',
  'model_name',
  'session_id',
  'updated_at',
];

/**
 * Creates the schema, or upgrades a table CodeMachine created first: its CHECK refuses
 * 'skipped' (and old versions lack columns), and SQLite cannot alter a CHECK in place, so the
 * table is rebuilt with its rows kept.
 */
export function initRegistrySchema(db: Database.Database): void {
  const row = db
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'agents'")
    .get() as { sql: string } | undefined;
  if (row === undefined) {
    db.exec(`${AGENTS_TABLE('agents')};${REST}`);
    return;
  }
  const columns = (db.prepare('PRAGMA table_info(agents)').all() as { name: string }[]).map(
    (c) => c.name,
  );
  const outdated =
    !row.sql.includes("'skipped'") || NEEDED_COLUMNS.some((c) => !columns.includes(c));
  if (outdated) rebuildAgentsTable(db, columns);
  db.exec(REST);
}

function rebuildAgentsTable(db: Database.Database, oldColumns: readonly string[]): void {
  // Dropping the old table must not cascade into telemetry: foreign keys off for the swap.
  db.pragma('foreign_keys = OFF');
  try {
    db.transaction(() => {
      // A view naming the old table would make the rename fail; REST recreates it.
      db.exec('DROP VIEW IF EXISTS agent_runs');
      db.exec(AGENTS_TABLE('agents_new'));
      const newColumns = (db.prepare('PRAGMA table_info(agents_new)').all() as { name: string }[])
        .map((c) => c.name)
        .filter((c) => oldColumns.includes(c))
        .map((c) => `"${c}"`)
        .join(', ');
      db.exec(`INSERT INTO agents_new (${newColumns}) SELECT ${newColumns} FROM agents`);
      db.exec('DROP TABLE agents');
      db.exec('ALTER TABLE agents_new RENAME TO agents');
    })();
  } finally {
    db.pragma('foreign_keys = ON');
  }
}
