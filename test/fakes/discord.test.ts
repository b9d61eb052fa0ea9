/**
 * The fake Discord's own interaction protocol, spoken to with plain fetch, so tests that rely on
 * it can trust it: an initial response is taken within 3 s of the interaction (10062 Unknown
 * interaction after), follow-ups and `@original` edits for 15 minutes (401 / 50027 Invalid
 * Webhook Token after), both on the fake's clock that tests advance.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeDiscord, type FakeInteraction, INTERACTION_TOKEN_TTL_MS } from './discord.ts';

let fake: FakeDiscord;
let press: FakeInteraction;

/** A press on a bot message, as the gateway would dispatch it (no client needed here). */
function newPress(): FakeInteraction {
  const message = fake.state.addMessage(fake.state.text.id, {
    author: fake.state.bot,
    content: 'pick',
    components: [{ type: 1, components: [{ type: 2, style: 1, label: 'Go', custom_id: 'go' }] }],
  });
  const data = { custom_id: 'go', component_type: 2 };
  return fake.state.createInteraction(3, fake.state.user('bob'), fake.state.text, data, message)
    .interaction;
}

beforeEach(async () => {
  fake = await FakeDiscord.start();
  press = newPress();
});

afterEach(async () => {
  await fake.close();
});

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${fake.apiUrl}/v10${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as { code?: number }) : {} };
};
const callback = (i: FakeInteraction, body: unknown) =>
  call('POST', `/interactions/${i.id}/${i.token}/callback`, body);
const followUp = (content: string) =>
  call('POST', `/webhooks/${fake.state.applicationId}/${press.token}?wait=true`, { content });

describe('interaction deadlines on the fake clock', () => {
  it('takes the initial response within 3 s, refuses it after with 10062', async () => {
    // Inside the 3 s with room to spare: the fake's clock is real time plus what the test adds,
    // and a loaded machine spends real time between the press and the call.
    fake.advanceClock(1500);
    expect(await callback(press, { type: 6 })).toEqual({ status: 204, body: {} });
    const late = newPress();
    fake.advanceClock(3100);
    expect(await callback(late, { type: 6 })).toEqual({
      status: 404,
      body: expect.objectContaining({ code: 10062 }),
    });
    expect(late.callbacks).toEqual([]);
  });

  it('takes follow-ups and edits of @original for 15 minutes, then answers 401 / 50027', async () => {
    expect((await callback(press, { type: 4, data: { content: 'first' } })).status).toBe(204);
    fake.advanceClock(INTERACTION_TOKEN_TTL_MS - 60_000);
    expect((await followUp('still in time')).status).toBe(200);
    const edit = `/webhooks/${fake.state.applicationId}/${press.token}/messages/@original`;
    expect((await call('PATCH', edit, { content: 'edited' })).status).toBe(200);

    fake.advanceClock(61_000);
    const late = await followUp('too late');
    expect(late).toEqual({ status: 401, body: expect.objectContaining({ code: 50027 }) });
    expect((await call('PATCH', edit, { content: 'again' })).body.code).toBe(50027);
    expect((await call('DELETE', edit)).status).toBe(401);
    // Nothing changed: one follow-up, the original as edited in time.
    expect(press.followUps).toHaveLength(1);
    expect(fake.state.messages.get(press.originalMessageId!)?.content).toBe('edited');
  });
});
