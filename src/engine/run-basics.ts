/**
 * The smallest parts of the run model (who acted, what agent work cost), below both the model
 * and its presets (pabcd phases, tasks), so those import them without importing the model back.
 * `model.ts` re-exports them.
 */

/** Who did something; `id` is an immutable platform id ('telegram:42', 'cli:alice', 'system'). */
export interface Actor {
  id: string;
  name?: string;
  /**
   * The other identities linked to this one as one person when it acted (bridge.db's person
   * links, issue 36): votes, quorum and four-eyes count the person, not the identity.
   */
  sameAs?: string[];
}

/** True when `actor` is `other` or, by the links `actor` carries, the same person. */
export function samePerson(actor: Actor, other: Pick<Actor, 'id'>): boolean {
  return actor.id === other.id || (actor.sameAs?.includes(other.id) ?? false);
}

/** The actor the engine itself uses (expiry timers, crash recovery). */
export const SYSTEM_ACTOR: Actor = Object.freeze({ id: 'system' });

/** Token usage and cost of agent work, summed over a step's attempts. */
export interface Telemetry {
  tokensIn: number;
  tokensOut: number;
  cachedTokens: number;
  costUsd: number;
}

/** A zero telemetry record. */
export const ZERO_TELEMETRY: Telemetry = Object.freeze({
  tokensIn: 0,
  tokensOut: 0,
  cachedTokens: 0,
  costUsd: 0,
});

/** Adds two telemetry records. */
export function addTelemetry(a: Telemetry, b: Telemetry): Telemetry {
  return {
    tokensIn: a.tokensIn + b.tokensIn,
    tokensOut: a.tokensOut + b.tokensOut,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    costUsd: a.costUsd + b.costUsd,
  };
}
