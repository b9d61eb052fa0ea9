/** `phasebridge logins` and `phasebridge logins revoke <id>`: the web console's sessions. */
import type { Command } from 'commander';
import { NotFoundError } from '../../errors.ts';
import type { CliContext } from '../context.ts';

/** Session ids are 18 hex digits (9 random bytes); older ones 12 url-safe characters. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,64}$/;

const when = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * `phasebridge logins`: the console's open sessions (who, since when, last use, when it ends),
 * and `phasebridge logins revoke <id>`, which ends one at once: the next request of that
 * browser is refused. Both work on bridge.db, also while the bridge runs.
 */
export function registerLoginsCommand(program: Command, ctx: CliContext): void {
  const logins = program
    .command('logins')
    .description('list the open web console sessions (who signed in, when, until when)')
    .action(async () => {
      const sessions = await (await ctx.repos()).consoleAuth.listSessions();
      if (sessions.length === 0) {
        console.log('No console sessions are open.');
        return;
      }
      console.log(`Console sessions (${sessions.length}):`);
      for (const s of sessions) {
        const who = s.person
          ? `${s.person.platform}:${s.person.id} (${s.person.display}) via ${s.person.chatRef ?? 'a private chat'}`
          : 'web:admin (the local admin link)';
        const ends = s.expiresAt == null ? 'when idle' : when(s.expiresAt);
        console.log(
          `• ${s.sessionId} — ${who}; since ${when(s.createdAt)}, last used ${when(s.lastSeenAt)}, ends ${ends}`,
        );
      }
    });
  logins
    .command('revoke <id>')
    .description('end a console session at once (its id from `phasebridge logins`)')
    .action(async (id: string) => {
      const repos = await ctx.repos();
      const revoked = SESSION_ID.test(id) && (await repos.consoleAuth.revokeSession(id));
      await repos.audit.record({
        actor: ctx.actor,
        action: 'logins:revoke',
        target: id.slice(0, 64),
        chatRef: null,
        outcome: revoked ? 'allowed' : 'failed',
        detail: revoked ? 'console session revoked' : 'no such console session',
      });
      if (!revoked) throw new NotFoundError(`no console session ${id}: see phasebridge logins`);
      console.log(`Console session ${id} is revoked: that browser is signed out now.`);
    });
}
