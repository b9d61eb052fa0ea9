/**
 * The native format as a module: `.phasebridge/runs/<id>/` (ledger, run.json, spec, directive,
 * logs). The store writes it for every run, so it has no projection of its own and no hook: it
 * is what every default of a LayoutModule (./module.ts) describes.
 */
import type { LayoutModule } from './module.ts';

/** The native layout module. */
export const nativeModule: LayoutModule<'native'> = { name: 'native' };
