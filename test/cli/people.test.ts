/**
 * Issue 36 from the shell, through the real `phasebridge` binary: `link` as the CLI user claims a
 * code a chat account gave (the chat side issues and confirms here through the same module the
 * bridge uses), `people` lists the person with each identity's roles per chat, `people unlink`
 * splits one off; an own, forged or unconfirmable code and an unknown identity are refused.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { answerLink, issueLink } from '../../src/chatops/person-linking.ts';
import { migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import { createRepositories } from '../../src/db/repositories/index.ts';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-people-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
mkdirSync(home);
const cli = (...args: string[]) => runCli(args, home, root);
const me = `cli:${userInfo().username}`;
const BOB = { id: 'telegram:42', name: '@bob', chat: 'telegram:-1001234' };

describe('phasebridge people and link', () => {
  it(
    'links the CLI user to a chat account, lists the person with roles per chat, unlinks',
    async () => {
      const db = openBridgeDb({ file: join(home, 'bridge.db') });
      try {
        await migrateToLatest(db);
        const repos = createRepositories(db);
        const binding = await repos.bindings.bind({ chatRef: BOB.chat, workspace: root });
        await repos.allowlist.allow({ bindingId: binding.id }, 'telegram', '42', 'approver');
        await repos.people.remember(BOB);

        const own = cli('link');
        expect(own.code, own.err).toBe(0);
        const code = /Your link code: ([A-Z2-9]{10})/.exec(own.out)![1]!;
        expect(own.out).toContain('then run phasebridge link confirm');
        const self = cli('link', code);
        expect(self.code).toBe(1);
        expect(self.err).toContain('That link code is your own');
        const forged = cli('link', 'ZZZZZZZZZZ');
        expect(forged.code).toBe(1);
        expect(forged.err).toContain('That link code is not valid');

        // Bob asks for a code in his Telegram chat; the CLI user sends it; Bob confirms there.
        const issued = await issueLink(repos, BOB, Date.now());
        const bobsCode = /`([A-Z2-9]{10})`/.exec(issued.words)![1]!;
        const claimed = cli('link', bobsCode);
        expect(claimed.code, claimed.err).toBe(0);
        expect(claimed.out).toMatch(/Code accepted\. To finish, @bob confirms on telegram/);
        const confirmed = await answerLink(repos, BOB, 'confirm', Date.now());
        expect(confirmed.words).toMatch(/^Linked: .* are one person now, @bob\./);
        expect(confirmed.tell).toBeUndefined();

        const listed = cli('people', '--json');
        expect(listed.code, listed.err).toBe(0);
        const [person] = JSON.parse(listed.out).people;
        expect(person.name).toBe('@bob');
        expect(person.identities).toEqual(
          expect.arrayContaining([
            { id: BOB.id, name: '@bob', roles: [{ where: BOB.chat, role: 'approver' }] },
            expect.objectContaining({ id: me, roles: [] }),
          ]),
        );
        expect(cli('people').out).toContain(`  • ${BOB.id} @bob: approver in ${BOB.chat}`);

        const unlinked = cli('people', 'unlink', me);
        expect(unlinked.code, unlinked.err).toBe(0);
        expect(unlinked.out).toMatch(
          /is no longer @bob .*linked to nobody now\. Roles are unchanged/,
        );
        expect(await repos.personLinks.list()).toEqual([]);
        expect(await repos.allowlist.roleOf('telegram', '42', binding.id)).toBe('approver');
        const again = cli('people', 'unlink', me);
        expect(again.code).toBe(1);
        expect(again.err).toContain(`${me} is not linked to anyone`);
        expect(cli('people', 'unlink', 'nobody').code).toBe(2);
        expect(cli('link', 'confirm').err).toContain('No link to confirm');
      } finally {
        await db.close();
      }
    },
    MANY_STEPS_TIMEOUT_MS,
  );
});
