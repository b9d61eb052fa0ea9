/**
 * What people send in the fake Telegram, as the message of the update the bot gets: a text (a
 * leading /command gets its bot_command entity, as Telegram adds it), a photo or a document with
 * a caption, an edit, and the callback query of a button press.
 */
import type { FakeFileStore } from './telegram-files.ts';
import type { FakeMessageStore } from './telegram-store.ts';
import {
  type FakeChat,
  type FakeUser,
  type Json,
  topicRootMessage,
  toWireMessage,
} from './telegram-wire.ts';

/** A text a user posts (in a topic, or as a reply to a message). */
export interface UserText {
  chat: FakeChat;
  from: FakeUser;
  text: string;
  topic?: number;
  replyTo?: number;
}

/** The message of a user's text; a leading /command gets its bot_command entity. */
export function userTextMessage(store: FakeMessageStore, o: UserText): Json {
  store.addChat(o.chat);
  const stored = store.store({ chat: o.chat, from: o.from, text: o.text, edits: 0 }, o.topic);
  if (o.replyTo !== undefined) stored.replyToId = o.replyTo;
  const wire = toWireMessage(stored);
  const command = /^\/\S+/.exec(o.text);
  if (command) wire.entities = [{ type: 'bot_command', offset: 0, length: command[0].length }];
  const replied = o.replyTo === undefined ? undefined : store.message(o.chat.id, o.replyTo);
  if (replied) wire.reply_to_message = toWireMessage(replied);
  else if (o.topic !== undefined) wire.reply_to_message = topicRootMessage(o.chat, o.topic, o.from);
  return wire;
}

/** A photo or a document a user sends with a caption (maybe as a reply). */
export interface UserFile {
  chat: FakeChat;
  from: FakeUser;
  caption: string;
  photo?: Buffer;
  document?: { fileName: string; data: Buffer };
  replyTo?: number;
}

/** The message of a user's photo or document; a leading /command in the caption gets its entity. */
export function userFileMessage(store: FakeMessageStore, files: FakeFileStore, o: UserFile): Json {
  store.addChat(o.chat);
  const stored = store.store({ chat: o.chat, from: o.from, edits: 0 }, undefined);
  if (o.replyTo !== undefined) stored.replyToId = o.replyTo;
  const wire = toWireMessage(stored);
  wire.caption = o.caption;
  const command = /^\/\S+/.exec(o.caption);
  if (command) {
    wire.caption_entities = [{ type: 'bot_command', offset: 0, length: command[0].length }];
  }
  if (o.photo) wire.photo = files.photoSizes(o.photo);
  if (o.document) {
    const ext = /\.([A-Za-z0-9]+)$/.exec(o.document.fileName)?.[1] ?? 'bin';
    const id = files.add(o.document.data, 'documents', ext);
    wire.document = {
      file_id: id,
      file_unique_id: `${id}u`,
      file_name: o.document.fileName,
      file_size: o.document.data.length,
    };
  }
  const replied = o.replyTo === undefined ? undefined : store.message(o.chat.id, o.replyTo);
  if (replied) wire.reply_to_message = toWireMessage(replied);
  return wire;
}

/** The author's edit of a message's text. */
export interface UserEdit {
  chatId: number;
  messageId: number;
  text: string;
}

/** The edited message (with `edit_date`, the bot_command entity again, and its reply). */
export function userEditedMessage(store: FakeMessageStore, o: UserEdit): Json {
  const target = store.message(o.chatId, o.messageId);
  if (!target) throw new Error(`no message ${o.chatId}/${o.messageId}`);
  target.text = o.text;
  target.edits += 1;
  const wire = toWireMessage(target);
  wire.edit_date = 1_700_000_000 + target.edits;
  const command = /^\/\S+/.exec(o.text);
  if (command) wire.entities = [{ type: 'bot_command', offset: 0, length: command[0].length }];
  const replied =
    target.replyToId === undefined ? undefined : store.message(o.chatId, target.replyToId);
  if (replied) wire.reply_to_message = toWireMessage(replied);
  return wire;
}

/** A user's press of the inline button labelled `label` on a bot message. */
export interface UserPress {
  chatId: number;
  messageId: number;
  from: FakeUser;
  label: string;
}

/** The callback query (id `id`) of a press; throws when the message has no such button. */
export function userPressQuery(store: FakeMessageStore, o: UserPress, id: string): Json {
  const target = store.message(o.chatId, o.messageId);
  const rows = (target?.replyMarkup?.inline_keyboard ?? []) as Json[][];
  const button = rows.flat().find((b) => b.text === o.label);
  if (!target || !button) throw new Error(`no button "${o.label}" on ${o.chatId}/${o.messageId}`);
  return {
    id,
    from: o.from,
    message: toWireMessage(target),
    chat_instance: `ci${o.chatId}`,
    data: button.callback_data,
  };
}
