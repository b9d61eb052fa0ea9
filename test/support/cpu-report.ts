/**
 * PB_CPU_REPORT=FILE: after each test file, one JSON line in FILE with the CPU seconds the file
 * cost (its fork's own time plus that of every child the fork reaped: serve, workers, agents,
 * redis-server), so the suite's CPU, which bounds its wall time on 2 cores, can be put on files.
 * Linux only (/proc); does nothing when the variable is unset.
 */
import { appendFileSync, readFileSync } from 'node:fs';

/** CPU seconds of this process and its reaped children, user and system, from /proc/self/stat. */
function cpuNow(): { user: number; system: number } | undefined {
  try {
    // Fields after the ")" of the command name: utime, stime, cutime, cstime are 14-17 (1-based).
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = (i: number) => Number(fields[i - 3]) / 100;
    return { user: ticks(14) + ticks(16), system: ticks(15) + ticks(17) };
  } catch {
    return undefined;
  }
}

/** Starts a file's measure; the returned function writes its line (file, wall, user, system). */
export function startCpuReport(): (file: string) => void {
  const target = process.env.PB_CPU_REPORT;
  const start = target ? cpuNow() : undefined;
  const began = Date.now();
  return (file) => {
    const end = target && start ? cpuNow() : undefined;
    if (!target || !start || !end) return;
    const line = {
      file: file.replace(`${process.cwd()}/`, ''),
      wall: (Date.now() - began) / 1000,
      user: Number((end.user - start.user).toFixed(2)),
      system: Number((end.system - start.system).toFixed(2)),
    };
    appendFileSync(target, `${JSON.stringify(line)}\n`);
  };
}
