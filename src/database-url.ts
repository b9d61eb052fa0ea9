/**
 * DATABASE_URL's shape: which URLs select Postgres for bridge.db, and how one is shown without its
 * password. No imports: both the config (validation) and src/db (messages) use it.
 */

/** True when `url` names a Postgres server (postgres:// or postgresql://). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** `url` with its password replaced by `***` (the text unchanged when it does not parse). */
export function redactedDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    // Never echo an unparseable URL: it may hold a password we cannot find.
    return 'DATABASE_URL (unparseable)';
  }
}

/** Why `url` is not a usable DATABASE_URL, or undefined when it is. */
export function databaseUrlProblem(url: string): string | undefined {
  if (!isPostgresUrl(url)) return 'must start with postgres:// or postgresql://';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) return 'names no host';
  if (parsed.pathname.replace(/^\//, '') === '')
    return 'names no database (postgres://host/dbname)';
  return undefined;
}
