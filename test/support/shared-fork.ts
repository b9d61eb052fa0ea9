/**
 * Setup file of the slow tier, whose files share one process (and module graph) per fork
 * (`isolate: false`, docs/test-reliability.md "Tiers"). Whatever a file changes in the process
 * is put back when it ends, so no file depends on which one ran before it in the same fork:
 * `process.env` (many files set DEMO_AGENT_BEHAVIOUR at top level, some to `exit=1`), the working
 * folder and the umask. What cannot be put back (a server, a Redis client or a child process
 * left running) is a defect of the file that left it: PB_LEAK_REPORT=1 prints, after each file,
 * the handles still open, to find it. PB_CPU_REPORT=FILE records each file's CPU (cpu-report.ts).
 */
import { afterAll } from 'vitest';
import { startCpuReport } from './cpu-report.ts';
import { waitUntil } from './slowdown.ts';

const env = { ...process.env };
const cwd = process.cwd();
const umask = process.umask();
const before = resourceCounts();
const cpuReport = startCpuReport();

// biome-ignore lint/correctness/noEmptyPattern: vitest 4 passes the suite second, after a fixture object.
afterAll(async ({}, suite) => {
  for (const name of Object.keys(process.env)) if (!(name in env)) delete process.env[name];
  Object.assign(process.env, env);
  if (process.cwd() !== cwd) process.chdir(cwd);
  process.umask(umask);
  if (process.env.PB_LEAK_REPORT) await report(suite.file.filepath);
  cpuReport(suite.file.filepath);
});

/** Open handles by kind (TCPWrap, Timeout, ProcessWrap, …). */
function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo())
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** The kinds of handles that grew since the file started, with how many more. */
function grownKinds(): (readonly [string, number])[] {
  return [...resourceCounts()]
    .map(([kind, n]) => [kind, n - (before.get(kind) ?? 0)] as const)
    .filter(([, n]) => n > 0);
}

/**
 * Prints the kinds of handles that grew during the file (afterAll of the file's own hooks). A
 * server or socket closed by the file's last hook is still listed until libuv's close callback
 * runs (a loop turn or more later: a console disposed showed its server and 3 sockets at once,
 * none 200 ms later), so the report first gives closing handles up to a second to go.
 */
async function report(file: string): Promise<void> {
  let grown = grownKinds();
  await waitUntil(
    () => {
      grown = grownKinds();
      return grown.length === 0;
    },
    { timeoutMs: 1000, everyMs: 20 },
  ).catch(() => {});
  if (grown.length === 0) return;
  const what = grown.map(([kind, n]) => `${kind} +${n}`).join(', ');
  process.stderr.write(`[leak] ${file}: ${what}\n`);
}
