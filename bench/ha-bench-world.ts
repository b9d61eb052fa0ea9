/**
 * What the two HA benches (failover.ts, takeover.ts) start before their bridges: a temp folder
 * with a workspace, a private postgres and redis-server, the fake Telegram with the team chat, and
 * a migrated bridge.db on Postgres where the team chat is bound to the workspace and Alice may
 * approve.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrateToLatest } from '../src/db/connection.ts';
import { openPostgresDb } from '../src/db/dialects/postgres/connection.ts';
import { createRepositories } from '../src/db/repositories/index.ts';
import { type FakeChat, FakeTelegram, type FakeUser } from '../test/fakes/telegram.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { startRedis } from '../test/support/redis.ts';

/** The started parts; the bench stops them. */
export interface HaBenchWorld {
  dir: string;
  ws: string;
  pg: Awaited<ReturnType<typeof startPostgres>>;
  redis: Awaited<ReturnType<typeof startRedis>>;
  fake: FakeTelegram;
  /** The bridge.db every bridge shares. */
  url: string;
}

/** Starts the world for a bench whose temp folder name begins with `prefix`. */
export async function startHaBenchWorld(
  prefix: string,
  team: FakeChat,
  approver: FakeUser,
): Promise<HaBenchWorld> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  const [pg, redis] = await Promise.all([startPostgres(), startRedis()]);
  const fake = await FakeTelegram.start();
  fake.addChat(team);
  const url = await pg.createDatabase();
  const setup = await openPostgresDb({ url, maxConnections: 1 });
  await migrateToLatest(setup);
  const repos = createRepositories(setup);
  const binding = await repos.bindings.bind({ chatRef: `telegram:${team.id}`, workspace: ws });
  await repos.allowlist.allow(
    { bindingId: binding.id },
    'telegram',
    String(approver.id),
    'approver',
  );
  await setup.close();
  return { dir, ws, pg, redis, fake, url };
}
