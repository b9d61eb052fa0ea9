import { describe, expect, it } from 'vitest';
import { formatChatRef, parseChatRef, parseUserRef } from '../../src/bridges/refs.ts';

describe('chat and user refs', () => {
  it('parses each platform with and without a thread', () => {
    expect(parseChatRef('telegram:-1001234')).toEqual({
      platform: 'telegram',
      chat: 'telegram:-1001234',
    });
    expect(parseChatRef('telegram:-1001234:77')).toEqual({
      platform: 'telegram',
      chat: 'telegram:-1001234',
      thread: '77',
    });
    expect(parseChatRef('slack:T1:C2:1700000000.0001').thread).toBe('1700000000.0001');
    expect(parseChatRef('discord:111:222').chat).toBe('discord:111:222');
    expect(formatChatRef(parseChatRef('discord:111:222:333'))).toBe('discord:111:222:333');
    expect(parseChatRef('discord:@me:444')).toEqual({
      platform: 'discord',
      chat: 'discord:@me:444',
    });
    expect(() => parseChatRef('slack:@me:C1')).toThrow(/not valid/);
  });

  it('refuses malformed refs with the expected shape in the message', () => {
    expect(() => parseChatRef('irc:#chan')).toThrow(/must start with one of telegram/);
    expect(() => parseChatRef('slack:T1')).toThrow(/slack:<team id>:<channel id>/);
    expect(() => parseChatRef('telegram:1:2:3')).toThrow(/not valid/);
    expect(() => parseChatRef('telegram:../etc')).toThrow(/not valid/);
  });

  it("refuses ids that are not the platform's own shape, naming the expected form", () => {
    const refused: [ref: string, expected: RegExp][] = [
      ['telegram:abc', /expected telegram:<chat id>\[:<topic id>\]/],
      ['telegram:-100:topic', /expected telegram:<chat id>/],
      ['slack:team:C1', /expected slack:<team id>:<channel id>/],
      ['slack:T1:general', /expected slack:<team id>:<channel id>/],
      ['slack:T1:C1:yesterday', /expected slack:/],
      ['discord:guild:123', /expected discord:<guild id>:<channel id>/],
      ['discord:1:2:thread', /expected discord:/],
    ];
    for (const [ref, expected] of refused) expect(() => parseChatRef(ref)).toThrow(expected);
    const users: [user: string, expected: RegExp][] = [
      ['telegram:abc', /expected telegram:<numeric user id>/],
      ['telegram:@alice', /expected telegram:<numeric user id>/],
      ['slack:alice', /expected slack:<member id>/],
      ['discord:alice', /expected discord:<numeric user id>/],
    ];
    for (const [user, expected] of users) expect(() => parseUserRef(user)).toThrow(expected);
    expect(parseUserRef('slack:U012ABC')).toEqual({ platform: 'slack', id: 'U012ABC' });
    expect(parseUserRef('discord:80351110224678912').id).toBe('80351110224678912');
  });

  it('parses users as platform:id', () => {
    expect(parseUserRef('telegram:1')).toEqual({ platform: 'telegram', id: '1' });
    expect(() => parseUserRef('bob')).toThrow(/<platform>:<user id>/);
  });
});
