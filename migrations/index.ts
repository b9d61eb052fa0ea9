/**
 * The registry of bridge.db migrations. Each module is imported here (not discovered on disk)
 * so the same code works under tsx, vitest and a bundle; kysely's FileMigrationProvider does not.
 * To add one: create `NNNN_what.ts` exporting `up` (and `down`), then add a line below.
 * Names must sort in the order the migrations run.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_initial.ts';
import * as m0002 from './0002_job_queue.ts';
import * as m0003 from './0003_job_signals.ts';
import * as m0004 from './0004_change_feed.ts';
import * as m0005 from './0005_durable_chat_state.ts';
import * as m0006 from './0006_followed_workspaces.ts';
import * as m0007 from './0007_reason_prompt_answer.ts';
import * as m0008 from './0008_outbox.ts';
import * as m0009 from './0009_retention.ts';
import * as m0010 from './0010_console_indexes.ts';
import * as m0012 from './0012_unreachable_chats.ts';
import * as m0014 from './0014_agent_permissions.ts';
import * as m0021 from './0021_session_offers.ts';
import * as m0024 from './0024_flow_run_cache.ts';
import * as m0039 from './0039_outbox_owners.ts';
import * as m0040 from './0040_interactive_urgency.ts';
import * as m0041 from './0041_people.ts';
import * as m0042 from './0042_console_persons.ts';
import * as m0043 from './0043_runs_keyset.ts';
import * as m0044 from './0044_person_links.ts';
import * as m0045 from './0045_leader_fence.ts';
import * as m0047 from './0047_run_messages.ts';
import * as m0048 from './0048_session_offer_choices.ts';

/** Every migration this build knows, by name. */
export const MIGRATIONS: Readonly<Record<string, Migration>> = Object.freeze({
  '0001_initial': m0001,
  '0002_job_queue': m0002,
  '0003_job_signals': m0003,
  '0004_change_feed': m0004,
  '0005_durable_chat_state': m0005,
  '0006_followed_workspaces': m0006,
  '0007_reason_prompt_answer': m0007,
  '0008_outbox': m0008,
  '0009_retention': m0009,
  '0010_console_indexes': m0010,
  '0012_unreachable_chats': m0012,
  '0014_agent_permissions': m0014,
  '0021_session_offers': m0021,
  '0024_flow_run_cache': m0024,
  '0039_outbox_owners': m0039,
  '0040_interactive_urgency': m0040,
  '0041_people': m0041,
  '0042_console_persons': m0042,
  '0043_runs_keyset': m0043,
  '0044_person_links': m0044,
  '0045_leader_fence': m0045,
  '0047_run_messages': m0047,
  '0048_session_offer_choices': m0048,
});

/** A kysely MigrationProvider over `migrations` (default: every known migration). */
export function migrationProvider(
  migrations: Readonly<Record<string, Migration>> = MIGRATIONS,
): MigrationProvider {
  return { getMigrations: async () => ({ ...migrations }) };
}
