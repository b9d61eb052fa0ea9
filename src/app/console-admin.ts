/**
 * The web console's AdminSource over bridge.db: bindings and roles as the Access page lists
 * them, edits through the CLI's own access code (same checks, same audit entries), and the
 * audit log with the page's filters.
 */

import type { AccessEdit, AdminSource } from '../bridges/web/admin-source.ts';
import { allowUser, bindChat, denyUser, unbindChat } from '../chatops/access-edits.ts';
import { ROLES } from '../db/repositories/allowlist.ts';
import type { Repositories } from '../db/repositories/index.ts';
import type { AuditOutcome, Role } from '../db/schema.ts';
import { personName } from '../engine/person-name.ts';
import { InvalidInputError } from '../errors.ts';

const chatOf = (b: { chatRef: string; thread: string | null }) =>
  b.thread ? `${b.chatRef}:${b.thread}` : b.chatRef;

/** The console's admin pages over `repos`. */
export function consoleAdmin(repos: Repositories): AdminSource {
  return {
    roles: ROLES,
    async access() {
      const [bindings, roles] = await Promise.all([repos.bindings.list(), repos.allowlist.list()]);
      const byId = new Map(bindings.map((b) => [b.id, chatOf(b)]));
      return {
        bindings: bindings.map((b) => ({
          id: b.id,
          chat: chatOf(b),
          workspace: b.workspace,
          defaultWorkflow: b.defaultWorkflow,
          defaultAgent: b.defaultAgent,
        })),
        roles: roles.map((r) => ({
          chat: r.bindingId === null ? null : (byId.get(r.bindingId) ?? `binding ${r.bindingId}`),
          user: `${r.platform}:${r.userId}`,
          role: r.role,
        })),
      };
    },
    async edit(actor: string, edit: AccessEdit) {
      switch (edit.op) {
        case 'allow':
          if (!(ROLES as readonly string[]).includes(edit.role)) {
            throw new InvalidInputError(`role must be one of ${ROLES.join(', ')}`);
          }
          return allowUser(repos, actor, { ...edit, role: edit.role as Role });
        case 'deny':
          return denyUser(repos, actor, edit);
        case 'bind':
          return bindChat(repos, actor, edit);
        case 'unbind':
          return unbindChat(repos, actor, edit.chat);
      }
    },
    async isAdmin(person) {
      const binding =
        person.chatRef === null
          ? null
          : await repos.bindings.find(person.chatRef, person.threadRef ?? null);
      if (person.chatRef !== null && binding === null) return false;
      return (await repos.allowlist.roleOf(person.platform, person.id, binding?.id)) === 'admin';
    },
    async workspaceOf(person) {
      if (person.chatRef === null) return null;
      const binding = await repos.bindings.find(person.chatRef, person.threadRef ?? null);
      return binding?.workspace ?? '';
    },
    async audit(q) {
      const rows = await repos.audit.listRecent({
        limit: q.limit,
        ...(q.actor !== undefined && { actor: q.actor }),
        ...(q.action !== undefined && { action: q.action }),
        ...(q.outcome !== undefined && { outcome: q.outcome as AuditOutcome }),
        ...(q.chat !== undefined && { chatRef: q.chat }),
        ...(q.since !== undefined && { since: q.since }),
        ...(q.until !== undefined && { until: q.until }),
      });
      // Rows keep the id; the page names the person the way chat does.
      const people = await repos.people.lookup(rows.map((r) => r.actor));
      return rows.map((r) => ({
        ...r,
        actorName: personName(people.get(r.actor) ?? { id: r.actor }),
      }));
    },
  };
}
