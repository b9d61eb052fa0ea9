import fs from 'node:fs';
import path from 'node:path';

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
 * Appends an agent's output to its step log and any extra logs, cutting at a byte cap. Writes
 * are synchronous: chunks are small, order across stdout/stderr is kept, and nothing is lost if
 * the worker dies right after the agent. An extra log that fails is dropped; the step log is not.
 */
export class OutputSink {
  private readonly fds: number[];
  private readonly capBytes: number;
  private written = 0;
  private cut = false;

  private constructor(fds: number[], capBytes: number) {
    this.fds = fds;
    this.capBytes = capBytes;
  }

  /** Opens the step log (throws if it cannot) and the extra logs (skipped if they cannot). */
  static open(logFile: string, extraLogFiles: readonly string[], capBytes: number): OutputSink {
    const fds = [openAppend(logFile)];
    const problems: string[] = [];
    for (const extra of extraLogFiles) {
      try {
        fds.push(openAppend(extra));
      } catch (err) {
        problems.push(`[phasebridge] cannot write extra log ${extra}: ${(err as Error).message}`);
      }
    }
    const sink = new OutputSink(fds, capBytes);
    for (const line of problems) sink.writeLine(line);
    return sink;
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
      try {
        fs.writeSync(this.fds[i]!, buf);
      } catch {
        // A full or vanished disk must not kill the run; the step log keeps index 0.
        if (i > 0) {
          fs.closeSync(this.fds[i]!);
          this.fds.splice(i--, 1);
        }
      }
    }
  }
}

function openAppend(file: string): number {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  return fs.openSync(file, 'a', 0o600);
}
