/**
 * The notifier through the outbox, with the real Telegram adapter against a fake Bot API that
 * enforces Telegram's limits: two runs move fast in three group chats; no call is refused, each
 * chat's status message of each run ends showing the run's final state, and each run's end is
 * announced once per chat, after that final edit.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import type { Channel, Platform } from '../../src/bridges/channel.ts';
import { limitsOf, Outbox, OutboxChannel, OutboxStore } from '../../src/bridges/outbox/index.ts';
import { TelegramChannel } from '../../src/bridges/telegram/index.ts';
import type { ChatOpsDeps } from '../../src/chatops/context.ts';
import { Notifier } from '../../src/chatops/notifier.ts';
import type { ChatOpsOrchestrator } from '../../src/chatops/ports.ts';
import { migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import { createRepositories } from '../../src/db/repositories/index.ts';
import type { Command } from '../../src/engine/commands.ts';
import { decide } from '../../src/engine/decide.ts';
import type { RunEvent } from '../../src/engine/events.ts';
import { evolve } from '../../src/engine/evolve.ts';
import type { RunState, Workflow } from '../../src/engine/model.ts';
import { FakeTelegram } from '../fakes/telegram.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const WORKFLOW: Workflow = {
  id: 'quick',
  version: '000000000000',
  file: 'quick.workflow.yaml',
  steps: ['a', 'b', 'c'].map((id) => ({ id, agent: 'demo', prompt: `Do ${id}.` })),
};

function apply(state: RunState | null, command: Command): { state: RunState; events: RunEvent[] } {
  const d = decide(state, command);
  if (!d.ok) throw new Error(d.rejection.message);
  let next = state;
  for (const e of d.events) next = evolve(next, e);
  return { state: next!, events: [...d.events] };
}

it('fast runs in group chats: no 429, every status message final, each end announced once after it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-notifier-outbox-'));
  const fake = await FakeTelegram.start({ limits: true });
  const chatIds = [-2001, -2002, -2003];
  for (const id of chatIds) fake.addChat({ id, type: 'supergroup', title: `G${id}` });
  const chats = chatIds.map((id) => `telegram:${id}`);
  const file = path.join(dir, 'bridge.db');
  const db = openBridgeDb({ file });
  await migrateToLatest(db);
  const store = OutboxStore.open(file);
  const inner = new TelegramChannel({ token: fake.token, apiRoot: fake.apiRoot, commands: [] });
  const outbox = new Outbox({ store, inner, limits: limitsOf('telegram') });
  outbox.start();
  cleanups.push(async () => {
    await outbox.stop();
    store.close();
    await db.close();
    await fake.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const notifierDeps: ChatOpsDeps = {
    // The notifier never asks the orchestrator anything.
    orchestrator: {} as ChatOpsOrchestrator,
    repos: createRepositories(db),
    channels: new Map<Platform, Channel>([['telegram', new OutboxChannel(inner, outbox)]]),
    log: pino({ level: 'silent' }),
    clock: () => new Date(),
    defaultWorkspace: dir,
  };
  const notifier = new Notifier(notifierDeps, 50);

  const updates: Promise<void>[] = [];
  for (const r of [1, 2]) {
    const at = () => new Date().toISOString();
    const actor = { id: 'system' };
    let { state, events } = apply(null, {
      type: 'start',
      at: at(),
      actor: { id: 'cli:test' },
      runId: `2026-11-30T160000Z-quick-${r}`,
      workflow: WORKFLOW,
      workspace: dir,
      layout: 'native',
      spec: 'Quick.',
    });
    updates.push(notifier.update(state, events, chats));
    for (const step of WORKFLOW.steps) {
      ({ state, events } = apply(state, {
        type: 'stepStarted',
        at: at(),
        actor,
        stepId: step.id,
        attempt: 1,
      }));
      updates.push(notifier.update(state, events, chats));
      await new Promise((res) => setTimeout(res, 60));
      ({ state, events } = apply(state, {
        type: 'stepFinished',
        at: at(),
        actor,
        stepId: step.id,
        attempt: 1,
        exitCode: 0,
        directive: { action: 'continue' },
        telemetry: { tokensIn: 1, tokensOut: 1, cachedTokens: 0, costUsd: 0 },
      }));
      updates.push(notifier.update(state, events, chats));
    }
    expect(state.status).toBe('completed');
  }
  await Promise.all(updates);
  await outbox.drained();

  expect(fake.calls.filter((c) => c.errorCode === 429)).toEqual([]);
  for (const id of chatIds) {
    const texts = fake.botMessages(id).map((m) => m.text ?? '');
    for (const r of [1, 2]) {
      const runId = `2026-11-30T160000Z-quick-${r}`;
      const status = texts.filter((t) => t.startsWith(`Run ${runId} · quick`));
      expect(status, `status of run ${r} in ${id}`).toHaveLength(1);
      expect(status[0]).toMatch(/\nCompleted\n/);
      const ends = fake.botMessages(id).filter((m) => m.text?.startsWith(`🏁 Run ${runId}`));
      expect(ends, `end of run ${r} in ${id}`).toHaveLength(1);
      // The final edit came before the announcement (message ids grow; the edit is the last call on it).
      const statusMessage = fake.botMessages(id).find((m) => m.text === status[0])!;
      const lastEdit = fake.calls
        .map((c, i) => ({ c, i }))
        .filter(
          ({ c }) =>
            c.ok &&
            c.method === 'editMessageText' &&
            Number(c.params.chat_id) === id &&
            Number(c.params.message_id) === statusMessage.message_id,
        )
        .at(-1);
      const announce = fake.calls.findIndex(
        (c) =>
          c.ok &&
          c.method === 'sendMessage' &&
          Number(c.params.chat_id) === id &&
          String(c.params.text).includes(`🏁 <b>Run ${runId}</b>`),
      );
      expect(lastEdit!.i).toBeLessThan(announce);
    }
  }
});
