import { userInfo } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig, secretsOf } from '../config.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../db/connection.ts';
import { createRepositories, type Repositories } from '../db/repositories/index.ts';
import { createLogger, type Log } from '../log.ts';

/** Lazily built dependencies of a CLI command: config, logger and bridge.db. */
export class CliContext {
  #config?: Config;
  #log?: Log;
  #db?: BridgeDb;

  /** The validated config (throws ConfigError listing every problem). */
  get config(): Config {
    this.#config ??= loadConfig();
    return this.#config;
  }

  /** The root logger, with every configured secret masked; logs go to stderr in the CLI. */
  get log(): Log {
    this.#log ??= createLogger({
      level: this.config.logLevel,
      secrets: secretsOf(this.config),
      pretty: process.stderr.isTTY === true,
      destination: process.stderr as never,
    });
    return this.#log;
  }

  /** Path of bridge.db under PHASEBRIDGE_HOME. */
  get dbFile(): string {
    return join(this.config.home, 'bridge.db');
  }

  /** bridge.db, migrated to the latest schema on first use. */
  async db(): Promise<BridgeDb> {
    if (!this.#db) {
      const db = openBridgeDb({ file: this.dbFile });
      try {
        await migrateToLatest(db);
      } catch (err) {
        await db.close();
        throw err;
      }
      this.#db = db;
    }
    return this.#db;
  }

  /** Every repository over the migrated bridge.db. */
  async repos(): Promise<Repositories> {
    return createRepositories(await this.db());
  }

  /** The actor id of whoever runs the CLI, for the audit table (`cli:<os user>`). */
  get actor(): string {
    return `cli:${userInfo().username}`;
  }

  /** Releases what was opened. */
  async close(): Promise<void> {
    await this.#db?.close();
    this.#db = undefined;
    this.#log?.flush();
  }
}
