/**
 * Channel membership in the fake Slack, as state tests change the way people do in Slack: the
 * bot is removed from a channel (`not_in_channel`), the channel is archived (`is_archived`),
 * deleted or made private without the bot (`channel_not_found`), a person is not a member
 * (`user_not_in_channel` for an ephemeral to them). Channels never configured are open to all.
 */
import { ApiError } from './slack-wire.ts';

/** What the fake knows of one channel. */
interface ChannelState {
  botMember: boolean;
  archived: boolean;
  /** Deleted, or private without the bot: the bot cannot see it. */
  hidden: boolean;
  /** Members besides the bot; undefined = everyone. */
  members: Set<string> | undefined;
}

/** Membership and archive state of the fake's channels. */
export class FakeSlackChannels {
  readonly #channels = new Map<string, ChannelState>();

  #state(channel: string): ChannelState {
    let s = this.#channels.get(channel);
    if (!s) {
      s = { botMember: true, archived: false, hidden: false, members: undefined };
      this.#channels.set(channel, s);
    }
    return s;
  }

  /** Someone removed the bot from the channel (`/remove @phasebridge`). */
  removeBot(channel: string): void {
    this.#state(channel).botMember = false;
  }

  /** The bot was invited back. */
  inviteBot(channel: string): void {
    this.#state(channel).botMember = true;
  }

  /** The channel was archived (or unarchived). */
  archive(channel: string, archived = true): void {
    this.#state(channel).archived = archived;
  }

  /** The channel was deleted, or made private without the bot. */
  hide(channel: string): void {
    this.#state(channel).hidden = true;
  }

  /** The channel's members (besides the bot) are exactly `users`. */
  setMembers(channel: string, users: readonly string[]): void {
    this.#state(channel).members = new Set(users);
  }

  /** Throws Slack's answer when the bot may not post in `channel`. */
  checkPost(channel: string): void {
    const s = this.#channels.get(channel);
    if (!s) return;
    if (s.hidden) throw new ApiError('channel_not_found');
    if (s.archived) throw new ApiError('is_archived');
    if (!s.botMember) throw new ApiError('not_in_channel');
  }

  /** Throws Slack's answer when the bot may not post an ephemeral to `user` in `channel`. */
  checkEphemeral(channel: string, user: string): void {
    this.checkPost(channel);
    const members = this.#channels.get(channel)?.members;
    if (members && !members.has(user)) throw new ApiError('user_not_in_channel');
  }
}
