/**
 * Where better-sqlite3's native addon is: every SQLite file we open (bridge.db, a run's
 * registry.db) passes `nativeBindingOption()` to `new Database()`.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

let addon: { nativeBinding?: string } | undefined;

/**
 * better-sqlite3's own addon lookup (the `bindings` package) walks the stack and probes a dozen
 * paths on every process start; naming the built addon directly saves CLI commands ~7 ms. When
 * it is not where an install puts it, `bindings` looks it up from the package's folder as the
 * library does (not from the caller's: in dist/ the library's code is bundled).
 */
export function nativeBindingOption(): { nativeBinding?: string } {
  if (addon === undefined) {
    let pkg: string;
    try {
      pkg = createRequire(import.meta.url).resolve('better-sqlite3/package.json');
    } catch {
      addon = {};
      return addon;
    }
    const candidate = join(dirname(pkg), 'build', 'Release', 'better_sqlite3.node');
    if (existsSync(candidate)) {
      addon = { nativeBinding: candidate };
    } else {
      const bindings = createRequire(pkg)('bindings') as (opts: object) => unknown;
      const loaded = bindings({ bindings: 'better_sqlite3.node', module_root: dirname(pkg) });
      // better-sqlite3 takes the loaded addon as well as a path (its types say a path only).
      addon = { nativeBinding: loaded as string };
    }
  }
  return addon;
}
