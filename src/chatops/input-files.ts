/**
 * Files people attach to a `run` (or a guidance reply), checked before anything is written: a
 * size cap, an extension allowlist, and the content must be what the extension says (sniffed
 * from the first bytes, never from the platform's MIME type, which the sender controls). Names
 * are sanitised to a plain `[A-Za-z0-9._-]` file name. Nothing here executes or unpacks a file:
 * archives are not accepted at all, since an agent would unpack what nobody checked.
 */

/** What a file turned out to be. */
export type InputKind = 'image' | 'pdf' | 'text';

/** Extensions accepted, and the kind of content each must hold. */
export const INPUT_EXTENSIONS: Readonly<Record<string, InputKind>> = {
  jpg: 'image',
  jpeg: 'image',
  png: 'image',
  gif: 'image',
  webp: 'image',
  pdf: 'pdf',
  txt: 'text',
  md: 'text',
  json: 'text',
  yaml: 'text',
  yml: 'text',
  csv: 'text',
  log: 'text',
  diff: 'text',
  patch: 'text',
};

/** Limits on attached files (config `inputs`, env PHASEBRIDGE_MAX_INPUT_BYTES / _FILES). */
export interface InputLimits {
  readonly maxBytes: number;
  readonly maxFiles: number;
}

/** The default limits: 10 MiB per file, 5 files per message. */
export const DEFAULT_INPUT_LIMITS: InputLimits = { maxBytes: 10 * 1024 * 1024, maxFiles: 5 };

const startsWith = (data: Uint8Array, bytes: readonly number[], at = 0): boolean =>
  bytes.every((b, i) => data[at + i] === b);

const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

/** The image format the bytes start with, if any. */
function imageOf(data: Uint8Array): string | undefined {
  if (startsWith(data, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(data, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(data, ascii('GIF87a')) || startsWith(data, ascii('GIF89a'))) return 'gif';
  if (startsWith(data, ascii('RIFF')) && startsWith(data, ascii('WEBP'), 8)) return 'webp';
  return undefined;
}

const IMAGE_EXTS: Readonly<Record<string, string>> = {
  jpg: 'jpeg',
  jpeg: 'jpeg',
  png: 'png',
  gif: 'gif',
  webp: 'webp',
};

/** Text: valid UTF-8 without NUL bytes (a binary renamed .txt is not text). */
function isText(data: Uint8Array): boolean {
  if (data.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}

/** Why the content does not match the extension, or undefined when it does. */
function contentProblem(ext: string, kind: InputKind, data: Uint8Array): string | undefined {
  if (kind === 'image') {
    const got = imageOf(data);
    return got === IMAGE_EXTS[ext] ? undefined : `its content is not a ${ext} image`;
  }
  if (kind === 'pdf') return startsWith(data, ascii('%PDF-')) ? undefined : 'it is not a PDF';
  return isText(data) ? undefined : 'it is not UTF-8 text';
}

/** The extension of a name, lower-case, without the dot ('' when none). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}

/**
 * A safe file name: the base name only, characters outside `[A-Za-z0-9._-]` replaced by `_`, no
 * leading dot or dash, at most 80 characters keeping the extension; `fallback` when nothing is left.
 */
export function sanitiseName(name: string, fallback: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  let safe = base.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[.-]+/, '');
  if (safe.replace(/[._]/g, '') === '') safe = fallback;
  if (safe.length > 80) {
    const ext = extensionOf(safe);
    safe = `${safe.slice(0, 79 - ext.length)}.${ext}`;
  }
  return safe;
}

/** A human size: "10 MB", "512 KB", "12 bytes". */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Math.round((n / (1024 * 1024)) * 10) / 10} MB`;
  if (n >= 1024) return `${Math.round((n / 1024) * 10) / 10} KB`;
  return `${n} bytes`;
}

/** The allowed types, for refusals and help. */
export function allowedTypes(): string {
  return Object.keys(INPUT_EXTENSIONS).join(', ');
}

/** The limits in words, appended to every refusal (chat and console alike). */
export function limitsLine(limits: InputLimits): string {
  return `Files are accepted up to ${formatBytes(limits.maxBytes)} each, ${limits.maxFiles} a message, of these types: ${allowedTypes()}.`;
}

/** Why a file announced as `name` (and maybe `size`) is refused before download, or undefined. */
export function refuseBeforeDownload(
  name: string,
  size: number | undefined,
  limits: InputLimits,
): string | undefined {
  const ext = extensionOf(name);
  if (INPUT_EXTENSIONS[ext] === undefined) {
    return `${name} is not an accepted type (accepted: ${allowedTypes()})`;
  }
  if (size !== undefined && size > limits.maxBytes) {
    return `${name} is ${formatBytes(size)}, over the limit of ${formatBytes(limits.maxBytes)} per file`;
  }
  return undefined;
}

/** A file that passed every check, with its safe name. */
export interface CheckedInput {
  readonly name: string;
  readonly kind: InputKind;
  readonly data: Uint8Array;
}

/** Checks downloaded bytes: size, extension, content; returns the refusal or the checked file. */
export function checkInput(
  name: string,
  data: Uint8Array,
  limits: InputLimits,
  fallback: string,
): CheckedInput | string {
  const early = refuseBeforeDownload(name, data.byteLength, limits);
  if (early !== undefined) return early;
  const ext = extensionOf(name);
  const kind = INPUT_EXTENSIONS[ext]!;
  const problem = contentProblem(ext, kind, data);
  if (problem !== undefined) return `${name} is refused: ${problem}`;
  return { name: sanitiseName(name, fallback), kind, data };
}

/** Gives each checked file a name not used before in the list (`a.png`, `a-2.png`). */
export function uniqueNames(files: readonly CheckedInput[]): CheckedInput[] {
  const used = new Set<string>();
  return files.map((f) => {
    let name = f.name;
    const ext = extensionOf(name);
    const stem = ext === '' ? name : name.slice(0, -(ext.length + 1));
    for (let n = 2; used.has(name.toLowerCase()); n++) name = `${stem}-${n}.${ext}`;
    used.add(name.toLowerCase());
    return { ...f, name };
  });
}
