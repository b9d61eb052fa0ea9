/**
 * The whole bridge as `phasebridge serve` assembles it (`startBridge` on a config from
 * `loadConfig`), pointed at the platforms' fakes, on files in a temp dir. It can be stopped and
 * started again on the same files (a restart). Roles are set through the bridge's repositories.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { type RunningBridge, type StartBridgeOptions, startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import type { Role } from '../../src/db/schema.ts';
import type { RunState } from '../../src/engine/model.ts';
import { type CliResult, runCliAsync } from '../cli/support.ts';
import { type Persona, type PlatformDriver, type SeenMessage, until } from './platform-driver.ts';

/** The roles of the cast in every bound chat; Carol has none. */
const CAST: Readonly<Record<Persona, Role | null>> = {
  alice: 'operator',
  bob: 'approver',
  carol: null,
  dave: 'approver',
};

/** Options of World.create. */
export interface WorldOptions {
  /** Extra bridge settings (env names), e.g. a webhook URL. */
  env?: Record<string, string>;
  /** A fixed port instead of a free one (a webhook URL must name it before start). */
  port?: number;
  /** Bridge options beyond the config (check intervals). */
  bridge?: StartBridgeOptions;
}

/** Files, fakes and the running bridge of one test. */
export class World {
  /** The temp dir holding everything. */
  readonly dir: string;
  /** PHASEBRIDGE_HOME (bridge.db). */
  readonly home: string;
  /** The workspace every chat is bound to. */
  readonly workspace: string;
  /** The platforms the bridge serves. */
  readonly drivers: readonly PlatformDriver[];
  readonly #options: WorldOptions;
  #bridge: RunningBridge | undefined;

  private constructor(drivers: readonly PlatformDriver[], options: WorldOptions) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-contract-'));
    this.home = path.join(this.dir, 'home');
    this.workspace = path.join(this.dir, 'ws');
    this.drivers = drivers;
    this.#options = options;
  }

  /** Starts a bridge serving every driver's platform, binds their chats and gives the cast roles. */
  static async create(drivers: readonly PlatformDriver[], options: WorldOptions = {}) {
    // The orchestrator's agents inherit process.env: a quick demo agent keeps stories fast.
    process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';
    const world = new World(drivers, options);
    try {
      await world.start();
      for (const d of drivers) await world.#cast(d);
    } catch (err) {
      await world.cleanup();
      throw err;
    }
    return world;
  }

  /** The running bridge. */
  get bridge(): RunningBridge {
    if (!this.#bridge) throw new Error('no bridge running');
    return this.#bridge;
  }

  /** Starts a bridge on the world's files (the previous one must be stopped). */
  async start(): Promise<RunningBridge> {
    const env: Record<string, string> = {
      PHASEBRIDGE_HOME: this.home,
      PHASEBRIDGE_WORKSPACE: this.workspace,
      PHASEBRIDGE_PORT: String(this.#options.port ?? 0),
      LOG_LEVEL: process.env.CONTRACT_LOG_LEVEL ?? 'silent',
      ...Object.assign({}, ...this.drivers.map((d) => d.env())),
      ...this.#options.env,
    };
    const config = loadConfig({ env, cwd: this.dir });
    this.#bridge = await startBridge(config, pino({ level: config.logLevel }), {
      editIntervalMs: 5,
      ...this.#options.bridge,
    });
    for (const d of this.drivers) await d.attach(this.#bridge);
    return this.#bridge;
  }

  /** Stops the bridge the way `serve` does on SIGTERM. */
  async stop(): Promise<void> {
    const bridge = this.#bridge;
    this.#bridge = undefined;
    await bridge?.stop();
  }

  /** Stops the bridge and starts a new one on the same files. */
  async restart(): Promise<RunningBridge> {
    await this.stop();
    return this.start();
  }

  /** Stops everything and removes the files. */
  async cleanup(): Promise<void> {
    await this.stop();
    for (const d of this.drivers) await d.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** Binds the driver's chat to the workspace (the console is bound already) and sets the roles. */
  async #cast(d: PlatformDriver): Promise<void> {
    const { repos } = this.bridge;
    const bound = await repos.bindings.find(d.chatRef, null);
    if (!bound) await repos.bindings.bind({ chatRef: d.chatRef, workspace: this.bridge.workspace });
    // The console's only person is its admin already; roles per persona would overwrite it.
    if (d.singleUser) return;
    for (const [who, role] of Object.entries(CAST) as [Persona, Role | null][]) {
      await this.setRole(d, who, role);
    }
  }

  /** Gives a persona a role in the driver's bound chat, or takes it away (null). */
  async setRole(d: PlatformDriver, who: Persona, role: Role | null): Promise<void> {
    const { repos } = this.bridge;
    const binding = await repos.bindings.find(d.chatRef, null);
    if (!binding) throw new Error(`${d.chatRef} is not bound`);
    const scope = { bindingId: binding.id };
    if (role === null) await repos.allowlist.deny(scope, d.platform, d.userId(who));
    else await repos.allowlist.allow(scope, d.platform, d.userId(who), role);
  }

  /** Writes `<workspace>/workflows/<id>.workflow.yaml`. */
  workflow(id: string, body: string): void {
    const dir = path.join(this.workspace, 'workflows');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${id}.workflow.yaml`), `id: ${id}\n${body}`);
  }

  /** Bot messages in the driver's chat whose text matches. */
  messages(d: PlatformDriver, match: RegExp): SeenMessage[] {
    return d.latestMessages().filter((m) => match.test(m.text));
  }

  /** Waits for a bot message matching `match`; the newest one. */
  async message(d: PlatformDriver, match: RegExp): Promise<SeenMessage> {
    await until(
      () => this.messages(d, match).length > 0,
      `a ${d.platform} message matching ${match}`,
    );
    return this.messages(d, match).at(-1)!;
  }

  /** Waits until the message with this id satisfies `done`; returns how it reads then. */
  async settles(
    d: PlatformDriver,
    message: SeenMessage,
    done: (m: SeenMessage) => boolean,
    what: string,
  ): Promise<SeenMessage> {
    let now: SeenMessage | undefined;
    await until(() => {
      now = this.current(d, message);
      return now !== undefined && done(now);
    }, `${d.platform}: ${what}`);
    return now!;
  }

  /** How a message reads now (undefined once deleted). */
  current(d: PlatformDriver, message: SeenMessage): SeenMessage | undefined {
    return d.latestMessages().find((m) => m.id === message.id);
  }

  /** Waits until the run reaches a state satisfying `done`. */
  async runState(runId: string, done: (s: RunState) => boolean, what: string): Promise<RunState> {
    let state: RunState | undefined;
    await until(async () => {
      state = await this.bridge.orchestrator.getRun(runId);
      return done(state);
    }, what);
    return state!;
  }

  /**
   * A second person approves from outside the chat, as `phasebridge approve` does (actor
   * `cli:<name>`): for platforms with one person only.
   */
  async approveOutside(runId: string, checkpointId: string, name: string): Promise<void> {
    const result = await this.bridge.orchestrator.command(runId, `cli:${name}:${checkpointId}`, {
      type: 'answerCheckpoint',
      checkpointId,
      answer: 'approve',
      actor: { id: `cli:${name}`, name },
    });
    if (!result.ok) throw new Error(`approve as ${name} refused: ${result.rejection.message}`);
  }
}

/**
 * Runs the real `phasebridge` CLI on the world's home, asynchronously (the bridge in this
 * process must keep serving its control socket meanwhile).
 */
export function runCli(
  world: World,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  return runCliAsync(args, world.home, world.dir, {
    PHASEBRIDGE_WORKSPACE: world.workspace,
    ...env,
  });
}

/** The run id a checkpoint or status message names. */
export function runIdOf(message: SeenMessage): string {
  const m = /(?:— run|^Run) (\S+)/m.exec(message.text);
  if (!m) throw new Error(`no run id in ${JSON.stringify(message.text)}`);
  return m[1]!;
}
