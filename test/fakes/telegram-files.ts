/**
 * Files of the fake Bot API: what users attach (photos, documents) is kept by file_id; getFile
 * answers `{file_id, file_unique_id, file_size, file_path}` and the file is served at
 * `/file/bot<token>/<file_path>`, as Telegram does. Telegram's getFile refuses files over 20 MB
 * ("Bad Request: file is too big").
 */
import type { ServerResponse } from 'node:http';
import { ApiError, type Json } from './telegram-wire.ts';

/** The Bot API download limit (getFile). */
export const GET_FILE_MAX_BYTES = 20 * 1024 * 1024;

/** A stored file. */
interface FakeFile {
  readonly id: string;
  readonly path: string;
  readonly data: Buffer;
}

/** The files users attached, by file_id and by path. */
export class FakeFileStore {
  readonly #byId = new Map<string, FakeFile>();
  #next = 1;
  /** Paths downloaded, in order (tests check what the bridge fetched). */
  readonly downloads: string[] = [];

  /** Stores bytes; returns the file_id. */
  add(data: Buffer, folder: 'photos' | 'documents', ext: string): string {
    const n = this.#next++;
    const id = `AgAC${n}file`;
    this.#byId.set(id, { id, path: `${folder}/file_${n}.${ext}`, data });
    return id;
  }

  /** The PhotoSize list of a photo (Telegram sends several sizes; the last is the largest). */
  photoSizes(data: Buffer): Json[] {
    const id = this.add(data, 'photos', 'jpg');
    return [
      { file_id: `${id}-thumb`, file_unique_id: `${id}t`, width: 90, height: 90, file_size: 10 },
      { file_id: id, file_unique_id: `${id}u`, width: 800, height: 600, file_size: data.length },
    ];
  }

  /** getFile. */
  getFile(p: Json): Json {
    const f = this.#byId.get(String(p.file_id));
    if (!f) throw new ApiError(400, 'Bad Request: invalid file_id');
    if (f.data.length > GET_FILE_MAX_BYTES) throw new ApiError(400, 'Bad Request: file is too big');
    return {
      file_id: f.id,
      file_unique_id: `${f.id}u`,
      file_size: f.data.length,
      file_path: f.path,
    };
  }

  /** Serves `/file/bot<token>/<path>`; false when the path is not a file URL. */
  serve(pathname: string, token: string, res: ServerResponse): boolean {
    const m = /^\/file\/bot([^/]+)\/(.+)$/.exec(pathname);
    if (!m) return false;
    const f = [...this.#byId.values()].find((x) => x.path === m[2]);
    if (m[1] !== token || !f) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: false, error_code: 404, description: 'Not Found' }));
      return true;
    }
    this.downloads.push(f.path);
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': f.data.length,
    });
    res.end(f.data);
    return true;
  }
}
