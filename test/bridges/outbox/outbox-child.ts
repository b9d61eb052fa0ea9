/**
 * A bridge process reduced to its outbox, for the crash test: opens bridge.db, queues the sends
 * named on the command line through the real Telegram adapter, and prints `confirmed <text>` as
 * each one is answered. The test SIGKILLs it part-way.
 * Usage: outbox-child.ts <bridge.db> <apiRoot> <token> <chatRef>=<text>...
 */

import { limitsOf, Outbox, OutboxStore } from '../../../src/bridges/outbox/index.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';

const [file, apiRoot, token, ...sends] = process.argv.slice(2);
const db = openBridgeDb({ file: file! });
await migrateToLatest(db);
const inner = new TelegramChannel({ token: token!, apiRoot: apiRoot!, commands: [] });
const outbox = new Outbox({ store: OutboxStore.open(file!), inner, limits: limitsOf('telegram') });
outbox.start();
for (const spec of sends) {
  const [chat, text] = spec.split('=') as [string, string];
  void outbox.enqueue('send', chat, { text: [plain(text)] }).then(() => {
    process.stdout.write(`confirmed ${text}\n`);
  });
}
process.stdout.write('queued\n');
