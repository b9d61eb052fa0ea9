/**
 * Issue 38: an unbound chat on Telegram (grammY against the fake Bot API). In a private chat
 * every message is answered: an unknown command with "did you mean" and how to pair, plain text
 * with what the bot is; at most one such hint per chat a minute. In an unbound group, plain text
 * and an unknown command for any bot stay silent; one addressed to us (`/frob@bot`) is answered.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeChat } from '../fakes/telegram.ts';
import { CAROL, DAVE, STRANGERS, until, World } from './support.ts';

let w: World;
beforeEach(async () => {
  w = await World.create();
});
afterEach(async () => {
  await w.cleanup();
});

/** Carol's and Dave's private chats with the bot (Telegram: the chat id is the user's id). */
const CAROL_DM: FakeChat = { id: CAROL.id, type: 'private' };
const DAVE_DM: FakeChat = { id: DAVE.id, type: 'private' };

/** The bot's messages in `chat`, as text. */
const said = (chat: FakeChat): string[] => w.fake.botMessages(chat.id).map((m) => m.text ?? '');

/** Sends `text` and waits for the bot's next message in that chat. */
async function ask(from: typeof CAROL, text: string, chat: FakeChat): Promise<string> {
  const before = said(chat).length;
  w.say(from, text, chat);
  await until(() => said(chat).length > before, `an answer to ${text}`);
  return said(chat)[before]!;
}

const PAIR = 'This chat is not bound. An admin can pair it: send /pair CODE';

describe('an unbound private chat', () => {
  it('answers an unknown command with did-you-mean and how to pair, once a minute', async () => {
    const answer = await ask(CAROL, '/stauts', CAROL_DM);
    expect(answer).toMatch(/^Unknown command "stauts"\. Did you mean \/status\?\n/);
    expect(answer).toContain(PAIR);
    // Within the minute a second hint is held back; /help, a real command, still answers.
    w.say(CAROL, '/frob', CAROL_DM);
    w.say(CAROL, 'hello?', CAROL_DM);
    const help = await ask(CAROL, '/help', CAROL_DM);
    expect(help).toMatch(/^Commands/);
    expect(said(CAROL_DM)).toEqual([answer, help]);
  });

  it('answers plain text with what the bot is and how to pair', async () => {
    const answer = await ask(DAVE, 'hello', DAVE_DM);
    expect(answer).toMatch(/^I am phasebridge: I run coding-agent workflows/);
    expect(answer).toContain(PAIR);
    expect(answer).toContain('/help lists the commands.');
  });
});

describe('an unbound group', () => {
  it('stays silent for plain text and unaddressed unknown commands, answers /frob@bot', async () => {
    w.say(CAROL, 'hello everyone', STRANGERS);
    w.say(CAROL, '/frob', STRANGERS);
    const answer = await ask(CAROL, '/frob@phasebridge_bot', STRANGERS);
    expect(answer).toMatch(/^Unknown command "frob"\./);
    expect(answer).toContain(PAIR);
    expect(said(STRANGERS)).toEqual([answer]);
  });
});
