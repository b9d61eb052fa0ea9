/**
 * Pure parts of the inbound side: slash command definitions, their registration body, invocation
 * text in the verb's argument order, and the translation of interaction facts into events.
 */
import { describe, expect, it } from 'vitest';
import { invocationText, toRegistrationBody } from '../../../src/bridges/discord/commands.ts';
import {
  decodeInteraction,
  type InteractionFacts,
  toButtonPress,
  toCommand,
  toReply,
} from '../../../src/bridges/discord/inbound.ts';
import {
  chatopsCommands,
  validateCommands,
  validateDiscordOptions,
} from '../../../src/bridges/discord/index.ts';
// The Discord commands must mirror the chat grammar every platform shares.
import { VERBS } from '../../../src/chatops/grammar.ts';

const facts = (over: Partial<InteractionFacts> = {}): InteractionFacts => ({
  id: '900',
  guildId: '1',
  channelId: '2',
  threadParentId: null,
  user: { id: '77', username: 'alice', globalName: 'Alice A.' },
  ...over,
});

describe('slash command definitions', () => {
  it('has one valid command per chat verb', () => {
    const specs = chatopsCommands();
    expect(specs.map((s) => s.name)).toEqual(VERBS);
    expect(validateCommands(specs)).toEqual([]);
  });

  it('offers workflows as choices of /run, and lists required options first for Discord', () => {
    const body = toRegistrationBody(chatopsCommands(['demo', 'pabcd']));
    const run = body.find((c) => c.name === 'run')!;
    expect(run.options?.[0]).toMatchObject({
      name: 'workflow',
      choices: [
        { name: 'demo', value: 'demo' },
        { name: 'pabcd', value: 'pabcd' },
      ],
    });
    for (const c of body) {
      const required = (c.options ?? []).map((o) => o.required === true);
      expect(required).toEqual([...required].sort((a, b) => Number(b) - Number(a)));
    }
  });

  it('reports names and descriptions Discord would refuse', () => {
    const problems = validateCommands([
      {
        name: 'Run Now',
        description: '',
        options: [{ name: 'x', description: 'y'.repeat(101), kind: 'word', required: false }],
      },
    ]);
    expect(problems.map((p) => p.path)).toEqual([
      'discord.commands[0]',
      'discord.commands[0]',
      'discord.commands[0].options[0]',
    ]);
    expect(
      validateDiscordOptions({ token: 'nope', apiUrl: 'ftp://x', ackAfterMs: 5000 }).map(
        (p) => p.path,
      ),
    ).toEqual(['discord.token', 'discord.apiUrl', 'discord.ackAfterMs']);
  });
});

describe('invocation text', () => {
  const reject = chatopsCommands().find((c) => c.name === 'reject');

  it('orders values as the verb reads and quotes multi-word values that are not last', () => {
    expect(
      invocationText(
        'reject',
        [
          { name: 'reason', value: 'red tests' },
          { name: 'run', value: 'r1' },
        ],
        reject,
      ),
    ).toEqual({
      args: ['r1', 'red', 'tests'],
      rawText: '/reject r1 red tests',
    });
    const bind = chatopsCommands().find((c) => c.name === 'bind');
    expect(
      invocationText(
        'bind',
        [
          { name: 'workspace', value: '/srv/my app' },
          { name: 'workflow', value: 'demo' },
        ],
        bind,
      ).rawText,
    ).toBe('/bind "/srv/my app" demo');
    expect(invocationText('runs', [], undefined)).toEqual({ args: [], rawText: '/runs' });
  });
});

describe('events from interaction facts', () => {
  it('turns a command in a thread into a Command with the thread in its chat ref', () => {
    const spec = chatopsCommands();
    const event = toCommand(facts({ channelId: '3', threadParentId: '2' }), 'status', [], spec);
    expect(event).toEqual({
      kind: 'command',
      name: 'status',
      args: [],
      rawText: '/status',
      chatRef: 'discord:1:2:3',
      threadRef: '3',
      user: { platform: 'discord', id: '77', display: 'Alice A.' },
      idempotencyKey: 'discord:interaction:900',
      addressed: true,
    });
    // The same command in a DM is also direct (the unbound-chat hint answers every DM).
    const dm = toCommand(facts({ guildId: null }), 'status', [], spec);
    expect(dm).toMatchObject({ addressed: true, direct: true });
    expect(event).not.toHaveProperty('direct');
  });

  it('gives a press an opaque handle and a reply the ref of its prompt', () => {
    const press = toButtonPress(facts({ guildId: null }), 'tok', '55')!;
    expect(press).toMatchObject({
      chatRef: 'discord:@me:2',
      messageRef: 'discord:@me:2/55',
      token: 'tok',
    });
    expect(decodeInteraction(press.interaction)).toEqual({ i: '900', c: 'discord:@me:2', m: '55' });
    expect(() => decodeInteraction({ platform: 'telegram', handle: '{}' })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
    expect(toReply(facts(), '800', 'because')).toMatchObject({
      replyToMessageRef: 'discord:1:2/reason:800',
      text: 'because',
    });
    // A blank answer arrives too (an optional comment may be empty); chatops keeps a reason's
    // prompt open on it (checkpoint-press.ts).
    expect(toReply(facts(), '800', '   ')).toMatchObject({ text: '   ' });
    expect(toCommand(facts({ channelId: null }), 'status', [], [])).toBeUndefined();
  });
});
