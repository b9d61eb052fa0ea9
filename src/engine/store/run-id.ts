/**
 * Run ids (`2026-11-29T143000Z-add-login`, the flow format). Only ids matching the pattern are
 * accepted anywhere a path is built from one, so an id can never traverse out of the runs folder.
 */
import { InvalidInputError } from '../../errors.ts';
import { RUN_ID_PATTERN } from '../model.ts';

const MAX_SLUG = 48;

/** Turns free text (a spec title, a workflow id) into the id's slug: `[a-z0-9-]`, never empty. */
export function runSlug(source: string): string {
  const slug = source
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // accents split off by NFKD: é → e
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG)
    .replace(/-+$/, '');
  return slug === '' ? 'run' : slug;
}

/** A new run id from a time and a slug source, e.g. `2026-11-29T143000Z-add-login`. */
export function newRunId(slugSource: string, now: Date): string {
  const iso = now.toISOString(); // 2026-11-29T14:30:00.000Z
  const stamp = `${iso.slice(0, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return `${stamp}-${runSlug(slugSource)}`;
}

/** True when `id` is a well-formed run id. */
export function isValidRunId(id: string): boolean {
  return RUN_ID_PATTERN.test(id);
}

/** Throws InvalidInputError unless `id` is a well-formed run id. */
export function assertRunId(id: string): void {
  if (!isValidRunId(id)) {
    throw new InvalidInputError(
      `invalid run id ${JSON.stringify(id)}: expected e.g. 2026-11-29T143000Z-add-login`,
    );
  }
}
