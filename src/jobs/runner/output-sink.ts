import fs from 'node:fs';
import path from 'node:path';
import {
  isInside,
  openInside,
  STATE_DIR_MODE,
  STATE_FILE_MODE,
} from '../../engine/ledger/safe-path.ts';
import { makeDirs, resourceErrorOf } from '../../fs-errors.ts';

/** Output written to the logs before they are cut: 8 MiB. */
export const DEFAULT_OUTPUT_CAP_BYTES = 8 * 1024 * 1024;

/** The marker line written once when output passes the cap. */
export function truncationMarker(capBytes: number): string {
  return `[phasebridge: output truncated after ${capBytes} bytes]`;
}

/** How many of `chunkBytes` new bytes still fit when `written` of `cap` are used. */
export function bytesWithinCap(written: number, cap: number, chunkBytes: number): number {
  return Math.max(0, Math.min(chunkBytes, cap - written));
}

/**
 * The folder a file of a run is confined to: the workspace when the file is inside it (no link
 * below the workspace is followed), else the file's own folder, created when missing (a place
 * the caller chose outside any workspace; only the file itself is then checked).
 */
export function confinedRoot(workspace: string, file: string): string {
  if (isInside(workspace, file)) return path.resolve(workspace);
  const dir = path.dirname(path.resolve(file));
  makeDirs(dir, STATE_DIR_MODE); // Node's recursive mkdir hangs under /proc
  return dir;
}

/**
 * Appends an agent's output to its step log and any extra logs, cutting at a byte cap. Writes
 * are synchronous: chunks are small, order across stdout/stderr is kept, and nothing is lost if
 * the worker dies right after the agent. An extra log that fails is dropped; the step log failing
 * (a full disk) aborts `faulted`, so the caller stops the agent instead of losing its output.
 * Logs inside the workspace are opened without following links (a planted one is refused).
 */
export class OutputSink {
  private readonly fds: number[];
  private readonly capBytes: number;
  private readonly logFile: string;
  private readonly fault = new AbortController();
  private written = 0;
  private cut = false;

  private constructor(fds: number[], capBytes: number, logFile: string) {
    this.fds = fds;
    this.capBytes = capBytes;
    this.logFile = logFile;
  }

  /**
   * Opens the step log (throws if it cannot) and the extra logs (skipped if they cannot), each
   * confined to `workspace` when inside it.
   */
  static open(
    workspace: string,
    logFile: string,
    extraLogFiles: readonly string[],
    capBytes: number,
  ): OutputSink {
    const fds = [openAppend(workspace, logFile)];
    const problems: string[] = [];
    for (const extra of extraLogFiles) {
      try {
        fds.push(openAppend(workspace, extra));
      } catch (err) {
        problems.push(`[phasebridge] cannot write extra log ${extra}: ${(err as Error).message}`);
      }
    }
    const sink = new OutputSink(fds, capBytes, logFile);
    for (const line of problems) sink.writeLine(line);
    return sink;
  }

  /** Aborted once the step log cannot be written; its reason is the one-line failure. */
  get faulted(): AbortSignal {
    return this.fault.signal;
  }

  /** True once output passed the cap. */
  get truncated(): boolean {
    return this.cut;
  }

  /** Writes one line of our own (header, footer); it does not count against the cap. */
  writeLine(text: string): void {
    this.writeAll(Buffer.from(`${text}\n`));
  }

  /** Writes agent output, up to the cap; past it, writes the marker once and drops the rest. */
  write(chunk: Buffer): void {
    if (this.cut) return;
    const keep = bytesWithinCap(this.written, this.capBytes, chunk.length);
    if (keep > 0) this.writeAll(keep === chunk.length ? chunk : chunk.subarray(0, keep));
    this.written += keep;
    if (keep < chunk.length) {
      this.cut = true;
      this.writeAll(Buffer.from(`\n${truncationMarker(this.capBytes)}\n`));
    }
  }

  /** Closes every log. */
  close(): void {
    for (const fd of this.fds.splice(0)) {
      try {
        fs.closeSync(fd);
      } catch {
        // Already closed or the disk vanished: nothing more to do with this log.
      }
    }
  }

  private writeAll(buf: Buffer): void {
    for (let i = 0; i < this.fds.length; i++) {
      // After a fault the step log is left alone; the agent's output is still read and dropped.
      if (i === 0 && this.fault.signal.aborted) continue;
      try {
        writeFully(this.fds[i]!, buf);
      } catch (err) {
        if (i === 0) {
          const reason = resourceErrorOf(err, this.logFile)?.message ?? (err as Error).message;
          this.fault.abort(reason);
          continue;
        }
        // An extra log is a convenience: drop it, keep the step going.
        try {
          fs.closeSync(this.fds[i]!);
        } catch {
          // Closing a log on a failing disk may fail too; it is dropped either way.
        }
        this.fds.splice(i--, 1);
      }
    }
  }
}

/** Writes all of `buf`: near a full disk a write can be short before the next one fails. */
function writeFully(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) {
    const n = fs.writeSync(fd, buf, off, buf.length - off);
    if (n <= 0) break;
    off += n;
  }
}

function openAppend(workspace: string, file: string): number {
  const { O_WRONLY, O_APPEND, O_CREAT } = fs.constants;
  return openInside(
    confinedRoot(workspace, file),
    file,
    O_WRONLY | O_APPEND | O_CREAT,
    STATE_FILE_MODE,
  );
}
