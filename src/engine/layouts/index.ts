/**
 * The table of on-disk formats: every layout module, listed once. The `Layout` type, the zod
 * enums, the CLI's `--layout` choices, the projections a store writes and every hook the core
 * calls derive from it. A format outside the source tree (a test's, a team's own) is added with
 * {@link registerLayout}. Built on first use, so modules importing the engine back are safe.
 */
import { ConflictError } from '../../errors.ts';
import { codemachineModule } from './codemachine/module.ts';
import { codexclawModule } from './codexclaw/module.ts';
import { coordinatorModule } from './coordinator/module.ts';
import { flowModule } from './flow/module.ts';
import type {
  ClosableProjection,
  FollowHooks,
  LayoutModule,
  ProjectionDeps,
  ProjectionFactory,
} from './module.ts';
import { nativeModule } from './native-module.ts';

/** The built-in modules, in the order their projections are written (native's run.json last). */
function builtinLayouts() {
  return [nativeModule, codemachineModule, codexclawModule, flowModule, coordinatorModule] as const;
}

/** Where a run's state is written on disk (the native ledger is always written too). */
export type Layout = ReturnType<typeof builtinLayouts>[number]['name'];

let table: Map<string, LayoutModule> | null = null;

function modules(): Map<string, LayoutModule> {
  table ??= new Map(builtinLayouts().map((m): [string, LayoutModule] => [m.name, m]));
  return table;
}

/** Every layout module, built-in ones first, then registered ones in their order. */
export function layoutModules(): readonly LayoutModule[] {
  return [...modules().values()];
}

/** Every layout's name (for zod enums and the CLI's choices). */
export function layoutNames(): [Layout, ...Layout[]] {
  return [...modules().keys()] as [Layout, ...Layout[]];
}

/** True when `name` is a layout of the table. */
export function isLayoutName(name: unknown): name is Layout {
  return typeof name === 'string' && modules().has(name);
}

/** The module of `name`; undefined for a name not in the table (an unknown layout on disk). */
export function layoutModule(name: string): LayoutModule | undefined {
  return modules().get(name);
}

/**
 * Adds a format module to the table (a name already there is refused): from then on workflows,
 * payloads and the store accept and write it like a built-in one. Returns the unregister call.
 */
export function registerLayout(module: LayoutModule): () => void {
  const all = modules();
  if (all.has(module.name)) throw new ConflictError(`layout ${module.name} is already registered`);
  all.set(module.name, module);
  return () => {
    if (all.get(module.name) === module) all.delete(module.name);
  };
}

/**
 * The log `phasebridge follow` and `bind … --follow` follow: the first module in the table with
 * follow hooks (bridge.db keeps one offset per followed workspace); undefined when none has.
 */
export function followedFormat(): FollowHooks | undefined {
  return layoutModules().find((m) => m.follow !== undefined)?.follow;
}

/** The projection factories of every layout that has one (all but native), in table order. */
export async function loadProjectionFactories(): Promise<ProjectionFactory[]> {
  const factories = await Promise.all(layoutModules().map((m) => m.projection?.()));
  return factories.filter((make) => make !== undefined);
}

/** The projections of every layout that has one, made for `deps`, ready for a RunStore. */
export async function loadLayoutProjections(deps: ProjectionDeps): Promise<ClosableProjection[]> {
  return (await loadProjectionFactories()).map((make) => make(deps));
}
