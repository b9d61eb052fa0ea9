/**
 * Table types of bridge.db for chat messages: checkpoint and status messages, the outbox, reason
 * prompts, channel state, unreachable chats and the bot's other messages about a run.
 */
import type { Generated } from 'kysely';
import type { Defaulted } from './schema-columns.ts';

/** State of one posted checkpoint message. */
export type CheckpointMessageState = 'open' | 'decided' | 'expired';

/** `checkpoint_messages`: every chat message showing a checkpoint, with its button token. */
export interface CheckpointMessagesTable {
  id: Generated<number>;
  run_id: string;
  checkpoint_id: string;
  chat_ref: string;
  message_ref: string | null;
  button_token: string;
  state: Defaulted<CheckpointMessageState>;
  created_at: number;
  updated_at: number;
  /** (0039) 1 once the copy's message shows its decision (its buttons are gone). */
  decision_shown: Defaulted<number>;
}

/** `status_messages` (0005): per run and chat, the status message edited as the run moves. */
export interface StatusMessagesTable {
  run_id: string;
  chat_ref: string;
  message_ref: string;
  created_at: number;
  updated_at: number;
}

/** State of one outbox row: queued, handed to the platform, answered, or given up on. */
export type OutboxState = 'pending' | 'attempted' | 'confirmed' | 'failed';

/** `outbox` (0008): one outgoing send or edit, written before it is attempted. */
export interface OutboxTable {
  id: Generated<number>;
  platform: string;
  lane: string;
  kind: 'send' | 'edit';
  target: string;
  payload_json: string;
  /** (0040 adds `interactive`) */
  urgency: 'interactive' | 'decision' | 'notice' | 'status';
  state: OutboxState;
  attempts: Defaulted<number>;
  not_before: Defaulted<number>;
  result_ref: string | null;
  error_code: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
  /** (0039) The row that asked for the call, told the result when it is confirmed (JSON). */
  owner_json: string | null;
  /** (0039) What a send is about: a second one with the key to the same chat is not sent. */
  dedupe_key: string | null;
}

/** `reason_prompts` (0005): a reject or change request waiting for the reason its presser types. */
export interface ReasonPromptsTable {
  prompt_ref: string;
  platform: string;
  user_id: string;
  run_id: string;
  checkpoint_id: string;
  /** 0007: the answer the reason completes, 'reject' or 'loop' (Request changes). */
  answer: Defaulted<string>;
  asked_at: number;
  expires_at: number;
}

/** `channel_state` (0005): a small key/value store per platform; NULL expires_at = kept. */
export interface ChannelStateTable {
  platform: string;
  key: string;
  value: string;
  expires_at: number | null;
  updated_at: number;
}

/** `unreachable_chats` (0012): a chat the platform refuses us in, until someone there acts. */
export interface UnreachableChatsTable {
  chat_ref: string;
  /** The adapter's short reason (`bot_kicked`, `not_in_channel`...). */
  reason: string;
  /** The refusal as the adapter described it (no tokens). */
  detail: string;
  since: number;
  updated_at: number;
}

/** `run_messages` (0047): the bot's other messages about a run, so a reply to one is answered. */
export interface RunMessagesTable {
  message_ref: string;
  run_id: string;
  /** What the message is: 'answer', 'outcome', 'ack', 'prompt' or 'status' (RunMessageKind). */
  kind: string;
  created_at: number;
}
