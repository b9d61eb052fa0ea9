/**
 * The console as a user meets it: the real WebChannel, ChatOps and Orchestrator (demo agent)
 * behind a real HTTP server. Type a run, watch its status and checkpoint arrive live, approve
 * with a button, reject with a reason typed into the inline prompt.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel, Platform } from '../../../src/bridges/channel.ts';
import { ChatOps } from '../../../src/chatops/index.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { createRepositories } from '../../../src/db/repositories/index.ts';
import { Orchestrator } from '../../../src/jobs/orchestrator/index.ts';
import type { JobQueue } from '../../../src/jobs/queue/port.ts';
import { createSqliteQueue } from '../../../src/jobs/queue/sqlite-driver.ts';
import {
  type Browser,
  EventStream,
  login,
  post,
  startConsole,
  type TestConsole,
} from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let dir: string;
let db: BridgeDb;
let queue: JobQueue;
let orchestrator: Orchestrator;
let chatops: ChatOps;
let c: TestConsole;
let b: Browser;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-web-story-'));
  const workspace = path.join(dir, 'ws');
  fs.mkdirSync(workspace);
  db = openBridgeDb({ file: path.join(dir, 'home', 'bridge.db') });
  await migrateToLatest(db);
  const repos = createRepositories(db);
  const binding = await repos.bindings.bind({ chatRef: 'web:console', workspace });
  await repos.allowlist.allow({ bindingId: binding.id }, 'web', 'admin', 'admin');
  const log = pino({ level: 'silent' });
  queue = createSqliteQueue({ db, pollMs: 10 });
  orchestrator = await Orchestrator.create({ db, queue, log, home: path.join(dir, 'home') });
  const channels = new Map<Platform, Channel>();
  chatops = new ChatOps({
    orchestrator,
    repos,
    channels,
    log,
    defaultWorkspace: workspace,
    editIntervalMs: 5,
  });
  await chatops.start();
  c = await startConsole({ onEvent: (e) => chatops.handle(e) });
  channels.set('web', c.channel);
  b = await login(c);
});

afterAll(async () => {
  await c?.dispose();
  await chatops?.stop();
  await orchestrator?.close();
  await queue?.close();
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

type Msg = { ref: string; html: string; author: string };
const html = (d: unknown) => (d as Msg).html;
const tokenOf = (h: string, label: string): string =>
  new RegExp(`data-token="([^"]+)">${label}</button>`).exec(h)?.[1] ?? '';

describe('a run driven from the web console', () => {
  it('run → live status → approve by button → reject with a typed reason', async () => {
    const stream = await EventStream.open(c, b, '?tab=tab-1');
    try {
      expect((await post(c, b, '/api/command', { text: 'run demo add a login page' })).status).toBe(
        200,
      );
      // The checkpoint after plan arrives with its buttons.
      const plan = await stream.until('msg', (d) => html(d).includes('>Approve</button>'));
      const planRef = (plan.data as Msg).ref;
      await post(c, b, '/api/press', {
        ref: planRef,
        token: tokenOf(html(plan.data), 'Approve'),
        tab: 'tab-1',
      });
      const toast = (await stream.next('toast')).data as { text: string };
      expect(toast.text.toLowerCase()).toContain('approved');
      // The decided checkpoint message is edited in place, without buttons.
      const decided = await stream.until(
        'msg',
        (d) => (d as Msg).ref === planRef && !html(d).includes('<button'),
      );
      expect(html(decided.data)).toContain('admin');

      // The review checkpoint: reject, answering the inline prompt.
      const review = await stream.until(
        'msg',
        (d) => (d as Msg).ref !== planRef && html(d).includes('>Reject</button>'),
      );
      const reviewRef = (review.data as Msg).ref;
      await post(c, b, '/api/press', {
        ref: reviewRef,
        token: tokenOf(html(review.data), 'Reject'),
        tab: 'tab-1',
      });
      const prompt = (await stream.next('prompt')).data as { ref: string; text: string };
      expect(prompt.text).toContain('reason');
      const answered = await post(c, b, '/api/reply', { ref: prompt.ref, text: 'no tests yet' });
      expect(answered.status).toBe(200);
      const rejected = await stream.until(
        'msg',
        (d) => (d as Msg).ref === reviewRef && html(d).includes('no tests yet'),
      );
      expect(html(rejected.data)).not.toContain('<button');
      // The run's status message was edited in place as steps moved (same ref, several versions).
      const bridgeRefs = stream.seen
        .filter((m) => m.event === 'msg' && (m.data as Msg).author === 'bridge')
        .map((m) => (m.data as Msg).ref)
        .filter((r) => r !== planRef && r !== reviewRef);
      const edits = bridgeRefs.filter((r, i) => bridgeRefs.indexOf(r) !== i);
      expect(edits.length).toBeGreaterThan(0);
    } finally {
      stream.close();
    }
  });
});
