/**
 * Explicit repair of a run (a human's decision, `phasebridge repair`): what is wrong, what a
 * repair keeps and drops, and the backups it writes before anything changes. The ledger's longest
 * valid prefix is kept; every projection is rebuilt from it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { NATIVE_FILES } from '../layouts/native.ts';
import type { LayoutProjection } from '../layouts/port.ts';
import { fsyncDir, lstatNoSymlink, writeFileAtomic } from '../ledger/atomic-write.ts';
import { type RunAnalysis, replayEntries } from './run-analysis.ts';
import type { DroppedLine, RunPaths } from './types.ts';

/** What a repair would do, worked out from an analysis. */
export interface RepairPlan {
  problems: string[];
  refused: string | null;
  kept: number;
  lines: number;
  dropped: DroppedLine[];
  /** Files copied before anything changes: `to` is the backup's path. */
  copies: { from: string; to: string }[];
  /** Backups of layout files moved aside (filled in when the plan is carried out). */
  moved: string[];
}

/** The plan for the run `a` describes; `stamp` names the backups. Reads only. */
export function planRepair(
  a: RunAnalysis,
  paths: RunPaths,
  layouts: readonly LayoutProjection[],
  stamp: string,
): RepairPlan {
  const dropped = droppedLines(paths.ledger, a.goodBytes, a.fileBytes, a.entries.length + 1);
  const problems: string[] = [];
  if (a.corrupt) problems.push(a.corrupt.reason);
  problems.push(...a.warnings);
  for (const layout of applicable(a, layouts)) {
    for (const s of layout.salvage?.(paths.workspace, null) ?? []) problems.push(s.problem);
  }
  let refused: string | null = null;
  if (a.corrupt && !a.corrupt.repairable) {
    refused =
      a.entries.length === 0
        ? `no valid ledger line to keep (${a.corrupt.reason}); nothing was changed`
        : `${a.corrupt.reason}; cannot repair it`;
  }
  const copies: RepairPlan['copies'] = [];
  if (problems.length > 0 && refused === null) {
    if (dropped.length > 0) copies.push(backupOf(paths.ledger, stamp));
    const runJson = path.join(paths.runDir, NATIVE_FILES.runJson);
    if (isPlainFile(runJson)) copies.push(backupOf(runJson, stamp));
  }
  const lines = a.entries.length + dropped.length;
  return { problems, refused, kept: a.entries.length, lines, dropped, copies, moved: [] };
}

/**
 * Carries out `plan` (under the run's lock): backups first, then layout files that cannot be
 * read are moved aside; returns the analysis to load: the good prefix, every projection rebuilt.
 */
export function carryOut(
  plan: RepairPlan,
  a: RunAnalysis,
  paths: RunPaths,
  layouts: readonly LayoutProjection[],
  stamp: string,
): RunAnalysis {
  for (const { from, to } of plan.copies) {
    fs.copyFileSync(from, to, fs.constants.COPYFILE_EXCL);
    fsyncDir(path.dirname(to));
  }
  ownLedger(paths.ledger, a.goodBytes, plan);
  moveAsideOdd(path.join(paths.runDir, NATIVE_FILES.runJson), stamp, plan);
  for (const layout of applicable(a, layouts)) {
    for (const s of layout.salvage?.(paths.workspace, stamp) ?? []) {
      if (s.backup !== undefined) plan.moved.push(s.backup);
    }
  }
  const state = replayEntries(a.entries).state;
  const events = a.entries.flatMap((e) => e.events);
  return {
    ...a,
    state,
    corrupt: null,
    warnings: [],
    projection: { kind: 'stale', previous: null, events, rebuild: true },
  };
}

/**
 * A hard-linked ledger is given a file of its own (its good prefix, written to a temp file and
 * renamed over it): appending or truncating would otherwise write into the other link's file.
 */
function ownLedger(ledger: string, goodBytes: number, plan: RepairPlan): void {
  const st = lstatNoSymlink(ledger);
  if (st === null || !st.isFile() || st.nlink <= 1) return;
  const buf = Buffer.alloc(goodBytes);
  const fd = fs.openSync(ledger, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    let off = 0;
    while (off < goodBytes) {
      const n = fs.readSync(fd, buf, off, goodBytes - off, off);
      if (n === 0) break;
      off += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  writeFileAtomic(ledger, buf);
  plan.moved.push(`${ledger} (it had ${st.nlink} hard links: now a file of its own)`);
}

/**
 * A state file that is a symlink, a FIFO (anything but a regular file) or a hard link is renamed
 * aside (the link itself, never its target), so the rebuild writes a file of its own.
 */
function moveAsideOdd(file: string, stamp: string, plan: RepairPlan): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    return;
  }
  if (st.isFile() && st.nlink <= 1) return;
  const to = `${file}.corrupt-${stamp}`;
  fs.renameSync(file, to);
  fsyncDir(path.dirname(file));
  plan.moved.push(to);
}

/** The layouts written for the run (its state tells which). */
function applicable(a: RunAnalysis, layouts: readonly LayoutProjection[]): LayoutProjection[] {
  const s = a.state;
  if (s === null) return [];
  return layouts.filter((l) => (l.appliesTo ? l.appliesTo(s) : l.name === s.layout));
}

/** True for a regular file with one link (what a backup may copy without surprise). */
function isPlainFile(file: string): boolean {
  try {
    const st = fs.lstatSync(file);
    return st.isFile() && st.nlink === 1;
  } catch {
    return false;
  }
}

function backupOf(file: string, stamp: string): { from: string; to: string } {
  return { from: file, to: `${file}.corrupt-${stamp}` };
}

/** The lines from byte `from` to `to` of the ledger, numbered from `firstLine`, read leniently. */
function droppedLines(file: string, from: number, to: number, firstLine: number): DroppedLine[] {
  if (to <= from) return [];
  const buf = Buffer.alloc(to - from);
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    let off = 0;
    while (off < buf.length) {
      const n = fs.readSync(fd, buf, off, buf.length - off, from + off);
      if (n === 0) break;
      off += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  const texts = buf.toString('utf8').split('\n');
  if (texts.at(-1) === '') texts.pop();
  return texts.map((text, i) => ({ line: firstLine + i, ...whatItHeld(text) }));
}

/** The command, key and seq of a ledger line, as far as they can be read. */
function whatItHeld(text: string): Omit<DroppedLine, 'line'> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // A garbled line may still show its key and command: worth naming what is lost.
    const command = /"command":"([^"\\]{1,64})"/.exec(text)?.[1];
    const key = /"key":"([^"\\]{1,200})"/.exec(text)?.[1];
    return { ...(command !== undefined && { command }), ...(key !== undefined && { key }) };
  }
  if (typeof raw !== 'object' || raw === null) return {};
  const r = raw as Record<string, unknown>;
  return {
    ...(typeof r.command === 'string' && { command: r.command }),
    ...(typeof r.key === 'string' && { key: r.key }),
    ...(typeof r.seq === 'number' && { seq: r.seq }),
  };
}
