/**
 * Reasons asked in a thread: an answer finds its question once (two events racing for it get it
 * once), and a question an hour old is forgotten.
 */
import { describe, expect, it } from 'vitest';
import { THREAD_PROMPT_TTL_MS, ThreadPrompts } from '../../../src/bridges/slack/thread-prompts.ts';
import { MemoryChannelState } from '../../../src/bridges/state.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const prompt = { promptRef: 'slack:T1:C1:1.0/2.0', chatRef: 'slack:T1:C1' };

describe('ThreadPrompts', () => {
  it('gives a question to the first of two racing answers only', async () => {
    const prompts = new ThreadPrompts(new MemoryChannelState(), silent);
    await prompts.put('C1:1.0:U1', prompt);
    const [a, b] = await Promise.all([prompts.take('C1:1.0:U1'), prompts.take('C1:1.0:U1')]);
    expect([a, b].filter(Boolean)).toEqual([prompt]);
    expect(await prompts.take('C1:1.0:U1')).toBeUndefined();
    // Asked again: answerable again.
    await prompts.put('C1:1.0:U1', prompt);
    expect(await prompts.take('C1:1.0:U1')).toEqual(prompt);
  });

  it('keeps a question that needs words open after an empty answer; an optional one is answered', async () => {
    const prompts = new ThreadPrompts(new MemoryChannelState(), silent);
    await prompts.put('C1:1.0:U1', prompt);
    // Returned (so the person hears that it was empty), and still there for the real answer.
    expect(await prompts.take('C1:1.0:U1', true)).toEqual(prompt);
    expect(await prompts.take('C1:1.0:U1')).toEqual(prompt);
    // An approval's comment may be empty: `@phasebridge` alone answers it.
    const comment = { ...prompt, optional: true };
    await prompts.put('C1:1.0:U1', comment);
    expect(await prompts.take('C1:1.0:U1', true)).toEqual(comment);
    expect(await prompts.take('C1:1.0:U1')).toBeUndefined();
  });

  it('forgets a question unanswered for an hour', async () => {
    let now = 1_000_000;
    const store = new MemoryChannelState(() => now);
    const prompts = new ThreadPrompts(store, silent);
    await prompts.put('C1:1.0:U1', prompt);
    await prompts.put('C1:1.0:U2', prompt);
    now += THREAD_PROMPT_TTL_MS - 1;
    expect(await prompts.take('C1:1.0:U2')).toEqual(prompt);
    now += 1;
    expect(await prompts.take('C1:1.0:U1')).toBeUndefined();
  });
});
