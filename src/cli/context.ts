import { userInfo } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { BridgeDb } from '../db/connection.ts';
import type { Repositories } from '../db/repositories/index.ts';
import type { Log } from '../log.ts';

/**
 * Lazily built dependencies of a CLI command: config, logger and bridge.db. Their modules are
 * imported on first use, so `--help` never loads zod, yaml, Kysely, SQLite or pino.
 */
export class CliContext {
  #config?: Config;
  #log?: Log;
  #db?: BridgeDb;
  #homeReady = false;
  #configFile?: string;

  /** Reads the config from `file` instead of the default (before the config is first used). */
  useConfigFile(file: string): void {
    if (this.#config) throw new Error('useConfigFile: the config is loaded already');
    this.#configFile = file;
  }

  /** The validated config (throws ConfigError listing every problem). */
  async config(): Promise<Config> {
    if (!this.#config) {
      const { loadConfig } = await import('../config.ts');
      this.#config = loadConfig(this.#configFile === undefined ? {} : { file: this.#configFile });
    }
    return this.#config;
  }

  /** The root logger, with every configured secret masked; logs go to stderr in the CLI. */
  async logger(): Promise<Log> {
    if (!this.#log) {
      const config = await this.config();
      const [{ createLogger }, { secretsOf }] = await Promise.all([
        import('../log.ts'),
        import('../config.ts'),
      ]);
      this.#log = createLogger({
        level: config.logLevel,
        secrets: secretsOf(config),
        pretty: process.stderr.isTTY === true,
        destination: process.stderr as never,
      });
    }
    return this.#log;
  }

  /** Path of bridge.db under PHASEBRIDGE_HOME. */
  async dbFile(): Promise<string> {
    return join((await this.config()).home, 'bridge.db');
  }

  /** Path of bridge.db when the config has loaded already (error messages name it), else undefined. */
  get dbFileIfKnown(): string | undefined {
    return this.#config ? join(this.#config.home, 'bridge.db') : undefined;
  }

  /** PHASEBRIDGE_HOME, created 0700 (a looser existing one tightened, with a warning) on first use. */
  async home(): Promise<string> {
    const config = await this.config();
    if (!this.#homeReady) {
      const { prepareHome } = await import('../app/home.ts');
      // Warnings are rare: pino (~25 ms to load) is loaded only to log one.
      const warnings: [object, string][] = [];
      prepareHome(config.home, { warn: (obj, msg) => warnings.push([obj, msg]) });
      if (warnings.length > 0) {
        const log = await this.logger();
        for (const [obj, msg] of warnings) log.warn(obj, msg);
      }
      this.#homeReady = true;
    }
    return config.home;
  }

  /** bridge.db, migrated to the latest schema on first use. */
  async db(): Promise<BridgeDb> {
    if (!this.#db) {
      // Before the home is made: a refused command changes nothing.
      const { refuseDatabaseUrl } = await import('../db/postgres-support.ts');
      refuseDatabaseUrl((await this.config()).databaseUrl, 'this command');
      await this.home();
      const file = await this.dbFile();
      const { migrateToLatest, openBridgeDb } = await import('../db/connection.ts');
      const db = openBridgeDb({ file });
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
    const db = await this.db();
    const { createRepositories } = await import('../db/repositories/index.ts');
    return createRepositories(db);
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
