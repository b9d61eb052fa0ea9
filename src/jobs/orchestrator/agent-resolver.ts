/**
 * Turns an agent name from a workflow step (or a `trigger` directive) into what the runner
 * starts: a named agent from bridge.db, or the built-in `demo` agent (the scripted stand-in in
 * examples/demo-agent.mjs, run with this Node binary). A named agent called `demo` overrides the
 * built-in, since explicit configuration wins.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentRecord, AgentsRepo } from '../../db/repositories/agents.ts';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import type { AgentDefinition } from '../runner/types.ts';

/** Name of the built-in agent. */
export const DEMO_AGENT_NAME = 'demo';

/**
 * The nearest folder at or above `start` holding a package.json: this package's root whether the
 * code runs from src/ (tsx) or from a bundle in dist/, whose depth differs. `start` if none.
 */
export function packageRootFrom(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return start;
  }
}

/** Absolute path of examples/demo-agent.mjs in this checkout. */
export const DEMO_AGENT_SCRIPT = join(
  packageRootFrom(dirname(fileURLToPath(import.meta.url))),
  'examples',
  'demo-agent.mjs',
);

/** The built-in demo agent: `[node, examples/demo-agent.mjs]`, prompt on stdin. */
export function demoAgentDefinition(): AgentDefinition {
  return {
    name: DEMO_AGENT_NAME,
    engine: 'command',
    argv: [process.execPath, DEMO_AGENT_SCRIPT],
    env: {},
  };
}

/** A stored agent as the runner wants it. */
export function definitionOf(record: AgentRecord): AgentDefinition {
  const def: AgentDefinition = {
    name: record.name,
    engine: record.engine,
    argv: record.argv,
    env: record.env,
  };
  if (record.model !== null) def.model = record.model;
  if (record.timeoutMs !== null) def.timeoutMs = record.timeoutMs;
  if (record.promptVia !== null) def.promptVia = record.promptVia;
  if (record.permissions !== null) def.permissions = structuredClone(record.permissions);
  return def;
}

/** What the codemachine layout shows about an agent (engine, model). */
export interface AgentInfo {
  engine?: string;
  model?: string;
}

/** How long a looked-up agent is reused: `phasebridge agents …` changes show within this. */
export const AGENT_CACHE_MS = 2000;

/** Resolves agent names against bridge.db's `agents` table and the built-in demo agent. */
export class AgentResolver {
  readonly #agents: AgentsRepo;
  readonly #now: () => number;
  /** Last known engine/model per name, for the codemachine layout's synchronous lookup. */
  readonly #info = new Map<string, AgentInfo>();
  /** Recent lookups (a query per job would sit on the approval → spawn path). */
  readonly #recent = new Map<string, { at: number; found: Promise<AgentDefinition> }>();

  constructor(agents: AgentsRepo, now: () => number = Date.now) {
    this.#agents = agents;
    this.#now = now;
  }

  /**
   * The definition of agent `name` (a copy; at most {@link AGENT_CACHE_MS} old). NotFoundError
   * for an unknown name, InvalidInputError for a disabled agent (both become the step's failure).
   */
  async resolve(name: string): Promise<AgentDefinition> {
    const now = this.#now();
    let entry = this.#recent.get(name);
    if (entry === undefined || now - entry.at > AGENT_CACHE_MS) {
      entry = { at: now, found: this.#lookup(name) };
      this.#recent.set(name, entry);
    }
    const def = await entry.found;
    const copy = { ...def, argv: [...def.argv], env: { ...def.env } };
    if (def.permissions) copy.permissions = structuredClone(def.permissions);
    return copy;
  }

  async #lookup(name: string): Promise<AgentDefinition> {
    const record = await this.#agents.get(name);
    if (record === null) {
      if (name === DEMO_AGENT_NAME) return demoAgentDefinition();
      throw new NotFoundError(`unknown agent "${name}" (add it with: phasebridge agents add)`);
    }
    this.#remember(record);
    if (!record.enabled) throw new InvalidInputError(`agent "${name}" is disabled`);
    return definitionOf(record);
  }

  /** Names a workflow may use: every enabled named agent, plus `demo`. Refreshes the info cache. */
  async knownNames(): Promise<string[]> {
    const records = await this.#agents.list();
    this.#recent.clear();
    this.#info.clear();
    for (const r of records) this.#remember(r);
    const names = records.filter((r) => r.enabled).map((r) => r.name);
    return names.includes(DEMO_AGENT_NAME) ? names : [...names, DEMO_AGENT_NAME];
  }

  /** Engine and model of a named agent as last read (synchronous, for layouts). */
  info(name: string): AgentInfo | undefined {
    const known = this.#info.get(name);
    if (known) return known;
    return name === DEMO_AGENT_NAME ? { engine: 'command' } : undefined;
  }

  #remember(r: AgentRecord): void {
    this.#info.set(
      r.name,
      r.model === null ? { engine: r.engine } : { engine: r.engine, model: r.model },
    );
  }
}
