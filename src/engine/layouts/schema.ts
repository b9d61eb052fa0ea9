/**
 * The zod schema of a layout name, derived from the layouts table (kept out of the table's file:
 * the CLI reads the table at start-up and does not load zod for it).
 */
import { z } from 'zod';
import { isLayoutName, type Layout, layoutNames } from './index.ts';

/**
 * A layout name in a workflow file or a job payload: any layout of the table at parse time (a
 * registered one too), worded as zod words an enum's refusal.
 */
export const layoutSchema = z.custom<Layout>((value) => isLayoutName(value), {
  error: () =>
    `Invalid option: expected one of ${layoutNames()
      .map((n) => JSON.stringify(n))
      .join('|')}`,
});
