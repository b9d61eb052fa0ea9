/**
 * Benchmark: the chat tells the truth after any crash (issue 39). `phasebridge serve` against the
 * fake Telegram, demo runs started from chat and their checkpoints pressed (some twice), serve
 * SIGKILLed `--kills` times at seeded random moments `--up` ms after its banner (each restart
 * redelivers the updates the dead process had not confirmed), then a settle phase. Prints JSON:
 * lost, doubled, stuck, torn lines, live buttons on decided checkpoints, decisions not shown,
 * duplicate sends (and per kill), leftover temp files, boot time p50/max (spawn → banner).
 * Goals: 0 for every count but duplicates, duplicates ≤ 0.1 per kill (docs/outbox.md: a send is
 * repeated only by a kill between the platform's answer and its confirmation).
 * The harness is test/support/chaos.ts (its small version runs in the suite).
 *
 * On Slack (Socket Mode) and Discord (gateway) a command sent to a dying serve is not redelivered:
 * the person types it again (`unansweredRuns`), and `lost` counts only the /runs the bridge
 * answered. Slack takes `--chats` channels; the fake Discord guild has one text channel.
 *
 * Run: npx tsx bench/chaos.ts [--platform telegram|slack|discord] [--kills 300] [--seed 39]
 *      [--chats 4] [--runs 2] [--groups] [--up 200-3000] [--settle-ms 180000]
 */
import { type ChaosPlatformName, runChaos } from '../test/support/chaos.ts';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const [lo, hi] = (arg('up') ?? '200-3000').split('-').map(Number) as [number, number];
const platform = (arg('platform') ?? 'telegram') as ChaosPlatformName;
if (!['telegram', 'slack', 'discord'].includes(platform)) {
  console.error(`--platform: telegram, slack or discord, not ${platform}`);
  process.exit(2);
}
const started = Date.now();
const report = await runChaos({
  platform,
  kills: Number(arg('kills') ?? 300),
  seed: Number(arg('seed') ?? 39),
  chats: Number(arg('chats') ?? (platform === 'discord' ? 1 : 4)),
  runsPerChat: Number(arg('runs') ?? 2),
  groups: process.argv.includes('--groups'),
  upMs: [lo, hi],
  settleMs: Number(arg('settle-ms') ?? 180_000),
  log: (line) => process.stderr.write(`${line}\n`),
});
const goals = {
  zero_counts:
    report.lost + report.doubled + report.stuck + report.tornLines === 0 &&
    report.liveButtonsOnDecided + report.decisionsNotShown + report.leftoverTempFiles === 0,
  duplicates_per_kill_le_0_1: report.duplicatesPerKill <= 0.1,
};
console.log(
  JSON.stringify({ ...report, wallMs: Date.now() - started, goals, machine: 'shared' }, null, 2),
);
