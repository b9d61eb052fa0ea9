/**
 * Interaction handles: what an adapter needs later to answer a press, packed as JSON into the
 * neutral `Interaction` and checked against the adapter's own schema when it comes back (a handle
 * travels through chatops, so it is never trusted unchecked).
 */
import type { z } from 'zod';
import { InvalidInputError } from '../errors.ts';
import type { Platform } from './channel.ts';
import type { Interaction } from './events.ts';

/** Packs an adapter's data into an opaque, serialisable handle of `platform`. */
export function encodeHandle(platform: Platform, data: object): Interaction {
  return { platform, handle: JSON.stringify(data) };
}

/**
 * Unpacks a handle made by `encodeHandle` for `platform`, validated by `schema`; a handle of
 * another platform, not JSON, or not matching is INVALID_INPUT ("not a <what> interaction handle").
 */
export function decodeHandle<S extends z.ZodType>(
  interaction: Interaction,
  platform: Platform,
  schema: S,
  what: string,
): z.output<S> {
  if (interaction.platform === platform) {
    try {
      const parsed = schema.safeParse(JSON.parse(interaction.handle));
      if (parsed.success) return parsed.data;
    } catch {
      // not JSON (or a transform refused it): the error below
    }
  }
  throw new InvalidInputError(`not a ${what} interaction handle`);
}
