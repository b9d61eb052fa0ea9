/**
 * The console's runs index with each run's starter named the way chat names them (issue 29):
 * the index keeps the actor id (filters and facets use it); the list and the "Started by" filter
 * show the person.
 */
import type { PeopleRepo, RunsRepo } from '../db/repositories/index.ts';
import { personName } from '../engine/person-name.ts';

/** `runs` whose search results carry `startedByName` and whose facets `startedByNames`. */
export function namedRunsIndex(
  runs: RunsRepo,
  people: PeopleRepo,
): Pick<RunsRepo, 'search' | 'facets'> {
  return {
    search: async (q) => {
      const page = await runs.search(q);
      const ids = page.items.flatMap((r) => (r.startedBy ? [r.startedBy] : []));
      const known = await people.lookup(ids);
      const items = page.items.map((r) =>
        r.startedBy === null
          ? r
          : { ...r, startedByName: personName(known.get(r.startedBy) ?? { id: r.startedBy }) },
      );
      return { ...page, items };
    },
    facets: async () => {
      const facets = await runs.facets();
      const known = await people.lookup(facets.startedBy);
      const names = facets.startedBy.map((id) => [id, personName(known.get(id) ?? { id })]);
      return { ...facets, startedByNames: Object.fromEntries(names) };
    },
  };
}
