/**
 * The fake Discord's permission model, as state tests change the way a server admin does: the
 * bot's role loses View Channel on a channel (403 50001 Missing Access, as for a channel the bot
 * cannot see), loses Send Messages (403 50013 Missing Permissions), or a thread is archived
 * (400 50083 Thread is archived). Channels never changed allow everything.
 */
import { ApiError } from './discord-wire.ts';

/** A permission the bot can lose on one channel. */
export type FakePermission = 'VIEW_CHANNEL' | 'SEND_MESSAGES';

/** Per-channel permission overwrites for the bot, and archived threads. */
export class FakeDiscordAccess {
  readonly #denied = new Map<string, Set<FakePermission>>();
  readonly #archived = new Set<string>();

  /** An overwrite denies the bot `permission` on the channel. */
  deny(channelId: string, permission: FakePermission): void {
    const set = this.#denied.get(channelId) ?? new Set<FakePermission>();
    set.add(permission);
    this.#denied.set(channelId, set);
  }

  /** The overwrite is removed again. */
  allow(channelId: string, permission: FakePermission): void {
    this.#denied.get(channelId)?.delete(permission);
  }

  /** A thread was archived (or unarchived). */
  archiveThread(threadId: string, archived = true): void {
    if (archived) this.#archived.add(threadId);
    else this.#archived.delete(threadId);
  }

  /** True when the bot can see the channel (a thread inherits its parent's overwrites). */
  canView(channelId: string, parentId?: string): boolean {
    return ![channelId, parentId].some((id) => id && this.#denied.get(id)?.has('VIEW_CHANNEL'));
  }

  /** Throws Discord's answer when the bot may not post or edit in the channel. */
  checkSend(channelId: string, parentId?: string): void {
    if (!this.canView(channelId, parentId)) throw new ApiError(403, 50001, 'Missing Access');
    const ids = [channelId, parentId];
    if (ids.some((id) => id && this.#denied.get(id)?.has('SEND_MESSAGES'))) {
      throw new ApiError(403, 50013, 'Missing Permissions');
    }
    if (this.#archived.has(channelId)) throw new ApiError(400, 50083, 'Thread is archived');
  }
}
