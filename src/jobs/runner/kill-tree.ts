import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** How often group liveness is polled while waiting for it to die. */
const POLL_MS = 25;
/** How long to wait for the group to vanish after SIGKILL before giving up. */
const AFTER_KILL_WAIT_MS = 2000;

/** Sends `signal` to the whole process group `pgid`; false when no such group exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return false;
    // No process groups (Windows) or not permitted: signal the leader alone.
    try {
      process.kill(pgid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/** State and process group of one `/proc/<pid>/stat` line; null when unparseable. */
export function parseProcStat(text: string): { state: string; pgrp: number } | null {
  // comm (field 2) is in parentheses and may itself contain spaces or parentheses.
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(' ');
  const pgrp = Number(fields[2]);
  if (fields[0] === undefined || !Number.isInteger(pgrp)) return null;
  return { state: fields[0], pgrp };
}

/** Scans /proc for a non-zombie member of the group; null when /proc is unavailable. */
function procHasLiveMember(pgid: number): boolean | null {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return null;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const stat = parseProcStat(text);
    if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') return true;
  }
  return false;
}

/**
 * True while some process of group `pgid` still runs. Zombies do not count: where PID 1 does not
 * reap orphans (many containers) a killed grandchild lingers as a zombie forever.
 */
export function groupIsAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return procHasLiveMember(pgid) ?? true;
}

/** Polls until the group has no live member or `ms` elapse; true when it died. */
export async function waitForGroupExit(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (groupIsAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
  return true;
}

/**
 * SIGTERM to the whole group, SIGKILL to it `graceMs` later if anything survived; resolves once
 * the group is gone (or, after SIGKILL, a bounded wait has passed). Returns which signal ended it.
 */
export async function terminateGroup(
  pgid: number,
  graceMs: number,
): Promise<'SIGTERM' | 'SIGKILL'> {
  signalGroup(pgid, 'SIGTERM');
  if (await waitForGroupExit(pgid, graceMs)) return 'SIGTERM';
  signalGroup(pgid, 'SIGKILL');
  await waitForGroupExit(pgid, AFTER_KILL_WAIT_MS);
  return 'SIGKILL';
}
