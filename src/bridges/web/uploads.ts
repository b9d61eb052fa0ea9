/**
 * Files posted with a console command or reply: received with the streaming multipart reader
 * under the input limits (PHASEBRIDGE_MAX_INPUT_BYTES / _FILES), held in memory only while the
 * event they came with is handled, and read back by `WebChannel.downloadFile` (the console's
 * "download"), bounded like every platform's. The checks of what a file may be (type, content,
 * name) are chatops' (src/chatops/input-files.ts), as for every platform.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { DEFAULT_INPUT_LIMITS, type InputLimits, limitsLine } from '../../chatops/input-files.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../../errors.ts';
import { BodyTooLargeError } from '../../http/respond.ts';
import { tooBig } from '../download.ts';
import type { InboundFile } from '../events.ts';
import { type MultipartForm, readMultipart, type UploadedFile } from './multipart.ts';

/** Text fields of an upload together (the command or reply text, key, csrf…). */
const MAX_FIELD_BYTES = 16 * 1024;
/** Room for part headers and fields besides the files themselves. */
const BODY_OVERHEAD = 64 * 1024;
/** Uploads received at once (a 409 past it); each holds up to maxFiles × maxBytes. */
const MAX_CONCURRENT = 2;

/** A received upload: the text fields, and the files as neutral InboundFiles held until released. */
export interface ReceivedUpload {
  readonly fields: Record<string, string>;
  readonly files: InboundFile[];
  /** Forgets the held files (call once the event they came with was handled). */
  release(): void;
}

/** The uploads held while their events are handled. */
export class UploadShelf {
  readonly limits: InputLimits;
  readonly #held = new Map<string, UploadedFile>();
  #receiving = 0;

  constructor(limits: InputLimits = DEFAULT_INPUT_LIMITS) {
    this.limits = limits;
  }

  /** Files held now (for tests and the log). */
  get size(): number {
    return this.#held.size;
  }

  /**
   * Reads a multipart body; `authorize` sees its text fields before any file byte is kept.
   * A body over every file's cap together is refused (413) with the limits in words.
   */
  async receive(
    req: IncomingMessage,
    boundary: string,
    authorize: (fields: Record<string, string>) => boolean,
  ): Promise<ReceivedUpload> {
    if (this.#receiving >= MAX_CONCURRENT) {
      throw new ConflictError(
        'Another upload is still being received: send again when it is done.',
      );
    }
    const { maxBytes, maxFiles } = this.limits;
    // One file more than allowed is still counted, so the refusal can say how many came.
    const maxBodyBytes = (maxFiles + 1) * maxBytes + BODY_OVERHEAD;
    let form: MultipartForm;
    this.#receiving += 1;
    try {
      form = await readMultipart(
        req,
        boundary,
        { maxFileBytes: maxBytes, maxFiles, maxFieldBytes: MAX_FIELD_BYTES, maxBodyBytes },
        authorize,
      );
    } catch (err) {
      if (!(err instanceof BodyTooLargeError)) throw err;
      throw new BodyTooLargeUpload(this.limits);
    } finally {
      this.#receiving -= 1;
    }
    const ids = form.files.map(() => randomUUID());
    for (const [i, f] of form.files.entries()) this.#held.set(ids[i]!, f);
    return {
      fields: form.fields,
      files: form.files.map((f, i) => ({ name: f.filename, size: f.size, handle: ids[i]! })),
      release: () => {
        for (const id of ids) this.#held.delete(id);
      },
    };
  }

  /** The bytes of a held file; INVALID_INPUT when over `maxBytes` (or not all kept). */
  read(file: InboundFile, maxBytes: number): Uint8Array {
    const held = this.#held.get(file.handle);
    if (!held) throw new NotFoundError('the uploaded file is no longer held');
    if (held.truncated || held.size > maxBytes) throw tooBig(maxBytes);
    return Buffer.concat(held.chunks);
  }
}

/** An upload larger than every allowed file together (answered 413, with the limits). */
export class BodyTooLargeUpload extends BodyTooLargeError {
  constructor(limits: InputLimits) {
    super(0);
    this.message = `Not sent: the upload is too large. ${limitsLine(limits)}`;
  }
}

/** Refuses files on a POST that takes none (a reason, a press). */
export function noFilesHere(): InvalidInputError {
  return new InvalidInputError(
    'Files go with a command or a reply to a run message, not with this.',
  );
}
