/**
 * What one SQL dialect of bridge.db supplies: how to recognise it, how its driver's constraint
 * errors read, and the few SQL fragments that differ. Listed once in `index.ts`.
 */
import type { DialectAdapter, KyselyPlugin, RawBuilder } from 'kysely';

/** The dialects bridge.db runs on. */
export type DialectName = 'sqlite' | 'postgres';

/** A constraint failure, as the driver reported it, in our words. */
export interface ConstraintFailure {
  readonly kind: 'unique' | 'foreignKey' | 'invalid';
  /** The driver's detail (which constraint or column), for InvalidInputError messages. */
  readonly detail: string;
}

/** One dialect of bridge.db. */
export interface BridgeDialect {
  readonly name: DialectName;
  /** True when `adapter` is this dialect's kysely adapter. */
  owns(adapter: DialectAdapter): boolean;
  /** The constraint this driver error reports, or undefined when it is not one of this driver's. */
  constraintOf(err: unknown): ConstraintFailure | undefined;
  /**
   * The value at top-level `key` of a JSON text column (null when absent): SQLite gives its JSON
   * type, Postgres text, so compare it with a literal string or with `asText(column)`.
   */
  jsonText(column: RawBuilder<unknown>, key: string): RawBuilder<string | null>;
  /** 1-based position of `needle` in `haystack`, 0 when absent. */
  position(haystack: RawBuilder<unknown>, needle: RawBuilder<unknown>): RawBuilder<number>;
  /** `value` as text on Postgres (immutable, for generated columns); unchanged on SQLite. */
  asText(value: RawBuilder<unknown>): RawBuilder<string>;
  /**
   * `column` kept out of index choice, so a query reads the index of its other filter (SQLite:
   * unary `+`; Postgres's planner weighs indexes by its statistics, so the column as it is).
   */
  unindexed(column: string): RawBuilder<unknown>;
  /** The LIKE that ignores ASCII case (SQLite's `like` does, Postgres's `ilike`). */
  readonly likeIgnoringCase: 'like' | 'ilike';
  /** Plugins the dialect's Kysely carries (Postgres: the schema translation of our migrations). */
  readonly plugins: readonly KyselyPlugin[];
}
