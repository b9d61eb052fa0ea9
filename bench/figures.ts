/**
 * The figures `npm run bench` keeps (bench/results.json) and docs/performance.md shows: each
 * read from one benchmark's JSON, with its goal. A figure whose benchmark did not run keeps its
 * last value, date and machine; one whose field is missing shows as not measured.
 */
import os from 'node:os';

/** A goal: the value must stay at or under (`max`) or at or over (`min`) `limit`. */
export interface Goal {
  kind: 'max' | 'min';
  limit: number;
}

/** One figure: where it comes from and what it must meet. */
export interface FigureSpec {
  id: string;
  bench: string;
  label: string;
  unit: '' | '×' | 'ms';
  goal: Goal | null;
  read: (json: unknown) => number | undefined;
}

/** The machine a benchmark ran on, in the words the doc shows. */
export interface Machine {
  cpus: number;
  cpu_model: string;
  mem_gib: number;
  os: string;
  node: string;
  load_avg_1m: number;
}

/** A figure's last measured value. */
export interface FigureValue {
  id: string;
  value: number | null;
  met: boolean | null;
  ran_at: string;
  machine: Machine;
}

/** Reads `json.a.b.c` (array items by a predicate through `pick`); undefined when absent. */
function at(json: unknown, ...keys: (string | ((v: unknown[]) => unknown))[]): number | undefined {
  let v: unknown = json;
  for (const k of keys) {
    if (typeof k === 'function') v = Array.isArray(v) ? k(v) : undefined;
    else v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  }
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

const layoutRatio = (layout: string): FigureSpec => ({
  id: `engine-commit.${layout}`,
  bench: 'engine-commit',
  label: `engine commit vs raw I/O, ${layout} layout`,
  unit: '',
  goal: { kind: 'min', limit: 0.8 },
  read: (j) => at(j, 'layouts', layout, 'ratio'),
});

const p50 = (id: string, label: string, field: string, limit: number | null): FigureSpec => ({
  id: `tool-approval.${id}`,
  bench: 'tool-approval',
  label,
  unit: 'ms',
  goal: limit === null ? null : { kind: 'max', limit },
  read: (j) => at(j, field, 'p50_ms'),
});

/** bench/fanout.ts through the outbox: the 30-chat fan-out and the interactive figures (issue 31). */
function fanoutFigures(): FigureSpec[] {
  const fig = (
    id: string,
    label: string,
    unit: FigureSpec['unit'],
    goal: Goal | null,
    keys: string[],
  ) => ({
    id: `fanout.${id}`,
    bench: 'fanout',
    label,
    unit,
    goal,
    read: (j: unknown) => at(j, 'outbox', ...keys),
  });
  const max = (limit: number): Goal => ({ kind: 'max', limit });
  return [
    fig('429', 'fan-out to 30 Telegram groups: 429s', '', max(0), ['chats_30', 'rate_limited_429']),
    // The ideal under the same limits with the bot's other calls (the presses beside it) where
    // they went (bench/fanout-ideal.ts); the fan-out alone's ideal, which they put out of reach,
    // is shown beside it.
    fig(
      'ratio',
      "fan-out to 30 Telegram groups: time to final vs ideal (the presses' calls counted)",
      '×',
      max(1.05),
      ['chats_30', 'ratio_to_ideal'],
    ),
    fig(
      'ratio_alone',
      'fan-out to 30 Telegram groups: time to final vs the fan-out-alone ideal',
      '×',
      null,
      ['chats_30', 'ratio_to_fanout_alone_ideal'],
    ),
    fig('press_quiet', 'Telegram press → edit, quiet chat, p50', 'ms', max(50), [
      'quiet',
      'press_to_edit_ms',
      'p50',
    ]),
    fig('press_fanout', 'Telegram press → edit beside the fan-out, p50', 'ms', max(300), [
      'chats_30',
      'press_during_fanout_ms',
      'p50',
    ]),
    fig(
      'run_quiet',
      'Telegram /run → checkpoint (modelled, minus the agent), p50',
      'ms',
      max(500),
      ['quiet', 'run_to_checkpoint_ms', 'p50'],
    ),
  ];
}

/** bench/press-edit.ts: a real press through the whole bridge, per platform (issue 31). */
function pressEditFigures(): FigureSpec[] {
  const names = { slack: 'Slack', discord: 'Discord' } as const;
  return (Object.keys(names) as (keyof typeof names)[]).flatMap((p) => [
    {
      id: `press-edit.${p}.quiet`,
      bench: 'press-edit',
      label: `${names[p]} press → edit through serve, quiet chat, p50`,
      unit: 'ms' as const,
      goal: { kind: 'max' as const, limit: 50 },
      read: (j: unknown) => at(j, p, 'quiet', 'p50_ms'),
    },
    {
      id: `press-edit.${p}.fanout`,
      bench: 'press-edit',
      label: `${names[p]} press → edit through serve, beside a 30-chat fan-out, p50`,
      unit: 'ms' as const,
      goal: { kind: 'max' as const, limit: 300 },
      read: (j: unknown) => at(j, p, 'beside_fanout', 'p50_ms'),
    },
  ]);
}

/** Every figure, in the order the doc lists them. */
export const FIGURES: readonly FigureSpec[] = [
  ...['native', 'codemachine', 'codexclaw', 'flow', 'coordinator'].map(layoutRatio),
  {
    id: 'cli-start.help',
    bench: 'cli-start',
    label: '`phasebridge --help` vs bare `node -e 0` (median)',
    unit: '×',
    goal: { kind: 'max', limit: 2 },
    read: (j) => at(j, 'help', 'ratio_to_bare'),
  },
  {
    id: 'cli-start.status',
    bench: 'cli-start',
    label: '`phasebridge status` vs bare `node -e 0` (median)',
    unit: '×',
    goal: { kind: 'max', limit: 2 },
    read: (j) => at(j, 'status', 'ratio_to_bare'),
  },
  {
    id: 'cli-start.help_cpu',
    bench: 'cli-start',
    label: '`phasebridge --help` CPU time vs bare Node',
    unit: '×',
    goal: null,
    read: (j) => at(j, 'help', 'cpu_ratio_to_bare'),
  },
  p50('asked', 'tool approval: agent asks → buttons posted, p50', 'asked_to_buttons', 1000),
  p50('press', 'tool approval: press → answer at the agent, p50', 'press_to_answer', 50),
  p50('server', 'tool approval: approval server start, p50', 'server_start', 1000),
  p50('checkpoint', 'checkpoint press → edit, same run, p50', 'checkpoint_press_to_edit', 50),
  {
    id: 'workers.at4',
    bench: 'workers',
    label: '16 runs on 4 workers vs ideal',
    unit: '',
    goal: { kind: 'min', limit: 0.85 },
    read: (j) =>
      at(
        j,
        'rounds',
        (rs) => rs.find((r) => (r as { workers?: number }).workers === 4),
        'efficiency',
      ),
  },
  ...fanoutFigures(),
  ...pressEditFigures(),
  {
    id: 'hostile-probes.slowest',
    bench: 'hostile-probes',
    label: 'slowest CLI answer to a hostile probe (FIFO/sparse ledger, /dev/zero, deep YAML …)',
    unit: 'ms',
    goal: { kind: 'max', limit: 1000 },
    read: (j) => at(j, 'slowest', 'max_ms'),
  },
  {
    id: 'approval-digest.recheck',
    bench: 'approval-digest',
    label: 'checkpoint digest re-check on Approve, 10 MB / 2,000-file workspace (p50)',
    unit: 'ms',
    goal: { kind: 'max', limit: 20 },
    read: (j) => at(j, 'recheck_ms', 'p50_ms'),
  },
  {
    id: 'ledger-tail.ratio',
    bench: 'ledger-tail',
    label: "feed's read of one commit, 5,000-line run vs 40-line run",
    unit: '×',
    goal: { kind: 'max', limit: 2 },
    read: (j) => at(j, 'resumed_ratio_long_to_short'),
  },
  {
    id: 'long-run.ratio',
    bench: 'long-run',
    label: 'commits of a long run vs a short one',
    unit: '',
    goal: { kind: 'min', limit: 0.5 },
    read: (j) => at(j, 'ratio'),
  },
];

/** Whether `value` meets `goal` (null without a goal or a value). */
export function meets(goal: Goal | null, value: number | undefined): boolean | null {
  if (goal === null || value === undefined) return null;
  return goal.kind === 'max' ? value <= goal.limit : value >= goal.limit;
}

/** This machine, as a figure records it. */
export function thisMachine(): Machine {
  return {
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model.trim() ?? 'unknown',
    mem_gib: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    load_avg_1m: Number(os.loadavg()[0]!.toFixed(2)),
  };
}

const goalText = (s: FigureSpec) =>
  s.goal === null ? '—' : `${s.goal.kind === 'max' ? '≤' : '≥'} ${s.goal.limit}${s.unit}`;
const machineText = (m: Machine) =>
  `${m.cpus} × ${m.cpu_model}, ${m.mem_gib} GiB, ${m.node}, load ${m.load_avg_1m}`;

/** The Markdown table of the figures' last values (between the doc's markers). */
export function figuresTable(values: readonly FigureValue[]): string {
  const byId = new Map(values.map((v) => [v.id, v]));
  const rows = FIGURES.map((s) => {
    const v = byId.get(s.id);
    if (v === undefined)
      return `| ${s.label} | \`${s.bench}\` | ${goalText(s)} | not run yet | | | |`;
    const value = v.value === null ? 'not measured' : `${v.value}${s.unit}`;
    const met = v.met === null ? '' : v.met ? 'yes' : '**no**';
    return `| ${s.label} | \`${s.bench}\` | ${goalText(s)} | ${value} | ${met} | ${v.ran_at.slice(0, 16).replace('T', ' ')} | ${machineText(v.machine)} |`;
  });
  return [
    '| figure | bench | goal | last value | met | ran (UTC) | machine |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
