/**
 * One neutral message model, three markups: every kind of message chatops sends (status,
 * checkpoint open and closed, outcome, help, runs list, unbound and paired answers) rendered by
 * each adapter's own outbound code, with no markup of another platform leaking into it.
 */
import { describe, expect, it } from 'vitest';
import { renderMessage as renderDiscord } from '../../src/bridges/discord/outbound.ts';
import type { OutgoingMessage } from '../../src/bridges/messages.ts';
import { mention, plainTextOf, rich } from '../../src/bridges/render-text.ts';
import { renderMessage as renderSlack } from '../../src/bridges/slack/outbound.ts';
import { renderMessage as renderTelegram } from '../../src/bridges/telegram/outbound.ts';
import {
  renderClosedCheckpoint,
  renderOpenCheckpoint,
} from '../../src/chatops/checkpoint-message.ts';
import { helpText } from '../../src/chatops/grammar.ts';
import { runsReply } from '../../src/chatops/handlers/runs.ts';
import { text } from '../../src/chatops/handlers/types.ts';
import { unboundText } from '../../src/chatops/router.ts';
import { outcomeMessage, renderStatus } from '../../src/chatops/status-message.ts';
import { newButtonToken } from '../../src/db/repositories/checkpoint-messages.ts';
import { DEMO_WORKFLOW } from '../../src/engine/workflow/builtin.ts';
import { ALICE, BASE_TIME, BOB, Harness, RUN_ID } from '../engine/harness.ts';

/**
 * Text a user or an agent wrote, with characters each platform must escape; markup-looking input
 * (shown literally, as it must be) is covered by each adapter's own outbound tests.
 */
const UNTRUSTED = 'keep a < b & c > d, 2 * 3';

/** Every kind of message, built by the code that builds it for real. */
function messages(): [kind: string, message: OutgoingMessage][] {
  const h = new Harness();
  h.start(DEMO_WORKFLOW, { spec: UNTRUSTED });
  h.finish({ action: 'continue', reason: UNTRUSTED });
  const open = h.run.checkpoint!;
  const status = renderStatus(h.run, BASE_TIME);
  const openMessage = renderOpenCheckpoint(
    { runId: RUN_ID, checkpoint: open, outputTail: `line 1\n${UNTRUSTED}`, agentReason: UNTRUSTED },
    newButtonToken(),
  );
  h.ok({ type: 'answerCheckpoint', answer: 'reject', reason: UNTRUSTED, actor: BOB });
  const closed = h.run.checkpoints.find((c) => c.id === open.id)!;
  return [
    ['status', status],
    ['checkpoint open', openMessage],
    ['checkpoint closed', renderClosedCheckpoint({ runId: RUN_ID, checkpoint: closed })],
    ['outcome', outcomeMessage(h.run)],
    ['help', text(helpText())],
    ['runs list', text(runsReply([{ id: RUN_ID, workflowId: 'demo', status: 'failed' }]))],
    ['unbound', text(unboundText('telegram'))],
    ['paired', text(`Paired; you (${ALICE.name}) are its admin. Send \`help\` for the commands.`)],
  ];
}

/** Every string of a rendered value (Slack blocks, Discord embeds), in order. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

/** Each platform: its renderer, the markup it must use for code, and what must never appear. */
const PLATFORMS: [platform: string, render: (m: OutgoingMessage) => string, leaks: RegExp[]][] = [
  [
    'telegram',
    (m) =>
      renderTelegram(m)
        .map((p) => p.html)
        .join('\n'),
    // No Markdown of any flavour: backticks, **bold**, *bold*, [text](url) stay literal text.
    [/`/, /\*\*[^*]+\*\*/, /(^|[^*])\*[^*\s][^*]*\*(?!\*)/, /\]\(/],
  ],
  [
    'slack',
    (m) =>
      renderSlack(m)
        .flatMap((p) => strings(p.blocks))
        .join('\n'),
    // No HTML tags, no Discord/CommonMark **bold** or [text](url) links.
    [/<\/?(b|code|pre|i|a)[ >]/, /\*\*[^*]+\*\*/, /\]\(/],
  ],
  [
    'discord',
    (m) =>
      renderDiscord(m)
        .flatMap((p) => strings(p.embed))
        .join('\n'),
    // No HTML tags or entities; no Slack-style *bold* (an unescaped lone asterisk pair).
    [/<\/?(b|code|pre|i|a)[ >]/, /&(lt|gt|amp);/, /(^|[^*\\])\*[^*\s][^*]*[^*\\]\*(?!\*)/],
  ],
];

describe('platform markup from one message model', () => {
  const all = messages();

  it.each(PLATFORMS)(
    '%s: every message kind renders without foreign markup',
    (_, render, leaks) => {
      for (const [kind, message] of all) {
        expect(plainTextOf(message.text).trim(), kind).not.toBe('');
        const out = render(message);
        for (const leak of leaks) expect(out, `${kind} leaks ${leak}`).not.toMatch(leak);
      }
    },
  );

  it.each([
    ['telegram', '<code>help</code>'],
    ['slack', '`help`'],
    ['discord', '`help`'],
  ] as const)('%s: code typed between backticks becomes its code markup', (platform, code) => {
    const render = PLATFORMS.find(([p]) => p === platform)![1];
    const paired = all.find(([kind]) => kind === 'paired')![1];
    expect(render(paired)).toContain(code);
    expect(plainTextOf(paired.text)).not.toContain('`');
  });

  it.each([
    ['slack', ['<@U0BOB>', 'Dave', '@carol'], ['<@42>']],
    ['discord', ['<@42>', '@bob', '@carol'], ['<@U0BOB>']],
    ['telegram', ['@bob', 'Dave', '@carol'], ['<@']],
  ] as const)(
    '%s: a person is that platform’s mention in its own chat, the name elsewhere',
    (platform, shown, absent) => {
      const render = PLATFORMS.find(([p]) => p === platform)![1];
      const decided: OutgoingMessage = {
        text: rich(
          'Approved by ',
          mention('@bob', 'slack', 'U0BOB'),
          ', ',
          mention('Dave', 'discord', '42'),
          ' and ',
          mention('@carol', 'telegram', '7'),
        ),
      };
      const out = render(decided);
      for (const s of shown) expect(out).toContain(s);
      for (const s of absent) expect(out).not.toContain(s);
      expect(plainTextOf(decided.text)).toBe('Approved by @bob, Dave and @carol');
    },
  );

  it.each([
    ['slack', '<@U0BOB>', ['Dave', '@carol'], ['<@42>']],
    ['discord', '<@42>', ['@bob', '@carol'], ['<@U0BOB>']],
    ['telegram', undefined, ['@bob', 'Dave', '@carol'], ['<@']],
  ] as const)(
    '%s: the Votes and Notes lines of a checkpoint name people as the decision line does',
    (platform, own, names, absent) => {
      const render = PLATFORMS.find(([p]) => p === platform)![1];
      const h = new Harness();
      h.start(DEMO_WORKFLOW, { spec: 'add login' });
      h.finish({ action: 'continue' });
      const open = h.run.checkpoint!;
      const bob = { id: 'slack:U0BOB', name: '@bob' };
      const dave = { id: 'discord:42', name: 'Dave' };
      const carol = { id: 'telegram:7', name: '@carol' };
      const at = '2026-11-29T14:30:00.000Z';
      const checkpoint = {
        ...open,
        policy: { ...open.policy, approvals: 3 },
        votes: [
          { actor: bob, answer: 'approve' as const, at },
          { actor: dave, answer: 'approve' as const, at },
        ],
      };
      const message = renderOpenCheckpoint(
        { runId: RUN_ID, checkpoint, notes: [carol, bob, dave] },
        newButtonToken(),
      );
      // The plain value (console, CLI, tests) names everyone.
      const field = (label: string) => message.fields?.find((f) => f.label === label);
      expect(field('Votes')?.value).toBe('approved by @bob and Dave (2 of 3 approvals)');
      expect(field('Notes')?.value).toBe(
        '3 notes from @carol, @bob and Dave will go with the decision',
      );
      const out = render(message);
      // The platform's own person is its mention on both lines; the others are names.
      if (own !== undefined) expect(out.split(own)).toHaveLength(3);
      for (const s of names) expect(out).toContain(s);
      for (const s of absent) expect(out).not.toContain(s);
    },
  );
});
