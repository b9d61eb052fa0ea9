import type { Command } from 'commander';
import { consoleLoginUrl, issueLoginToken, LOGIN_TOKEN_TTL_MS } from '../../bridges/web/session.ts';
import type { CliContext } from '../context.ts';

/** How long `login` waits for the bridge's /healthz before saying none is running. */
const HEALTH_TIMEOUT_MS = 1500;

/**
 * `phasebridge login`: a fresh one-time console link. The token goes into bridge.db (its digest
 * only), where the running bridge checks tokens, so this works from any shell on the same
 * PHASEBRIDGE_HOME while `serve` runs, and ahead of it.
 */
export function registerLoginCommand(program: Command, ctx: CliContext): void {
  program
    .command('login')
    .alias('console')
    .description(
      'print a fresh one-time login link for the web console (the bridge may be running)',
    )
    .addHelpText(
      'after',
      `
The link opens the console once and is valid for ${LOGIN_TOKEN_TTL_MS / 3600_000} hours; the browser then stays
logged in, also across restarts of the bridge. It is built on PHASEBRIDGE_PUBLIC_URL when set,
else on PHASEBRIDGE_HOST and PHASEBRIDGE_PORT, and works with the bridge serving the same
PHASEBRIDGE_HOME (started before or after this command).`,
    )
    .action(async () => {
      const { host, port, publicUrl } = await ctx.config();
      await ctx.home();
      const repos = await ctx.repos();
      const token = await issueLoginToken(repos.consoleAuth);
      await repos.audit.record({
        actor: ctx.actor,
        action: 'login',
        target: 'web:console',
        chatRef: null,
        outcome: 'allowed',
        detail: 'one-time console login link issued',
      });
      const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
      const { publicLink } = await import('../../app/public-url.ts');
      // Printed, not logged: the link is a credential for this terminal's user only.
      console.log(publicLink(consoleLoginUrl(base, token), base, publicUrl));
      if (port === 0) {
        console.log('PHASEBRIDGE_PORT is 0: use the port `phasebridge serve` printed instead.');
      } else if (await answers(`${base}/healthz`)) {
        console.log(`The bridge at ${base} accepts it now (one use).`);
      } else {
        console.log(
          `No bridge answers at ${base} yet: the link works once \`phasebridge serve\` runs.`,
        );
      }
    });
}

/** True when a GET of `url` answers 200 in time. */
async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}
