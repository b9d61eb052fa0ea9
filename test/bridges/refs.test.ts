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

  it('parses users as platform:id', () => {
    expect(parseUserRef('telegram:1')).toEqual({ platform: 'telegram', id: '1' });
    expect(() => parseUserRef('bob')).toThrow(/<platform>:<user id>/);
  });
});
