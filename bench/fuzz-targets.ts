/**
 * The parsers a hostile file or request reaches, each wrapped as a fuzz target: feed it bytes,
 * and it must answer (a value, or one of our typed errors), never crash. Shared by
 * `bench/fuzz.ts` (100,000 cases) and `test/fuzz/parsers.test.ts` (the CI share).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import {
  fromDirectMessage,
  fromMention,
  fromSlashCommand,
  fromThreadReply,
} from '../src/bridges/slack/inbound.ts';
import { toInbound } from '../src/bridges/telegram/inbound.ts';
import { readConfigFile } from '../src/config-file.ts';
import { readTemplateAt } from '../src/engine/layouts/codemachine/template-file.ts';
import { coordinatorPaths } from '../src/engine/layouts/coordinator/format.ts';
import { readSessionHead } from '../src/engine/layouts/coordinator/index.ts';
import { readEventsJsonl } from '../src/engine/layouts/flow/events-file.ts';
import { readRunJson } from '../src/engine/layouts/native.ts';
import { parseLedger, readLedger } from '../src/engine/ledger/ledger-file.ts';
import { parseLedgerLine } from '../src/engine/ledger/ledger-format.ts';
import { parseWorkflow } from '../src/engine/workflow/load.ts';
import { yamlDepthProblem } from '../src/engine/workflow/yaml-limits.ts';
import { PhasebridgeError } from '../src/errors.ts';
import { readDirectiveFile } from '../src/jobs/runner/directive-file.ts';

/** One parser under fuzz: `run` throws only for a crash (a typed error is an answer). */
export interface FuzzTarget {
  readonly name: string;
  readonly input: fc.Arbitrary<string>;
  run(text: string): void;
}

const LEDGER_LINE =
  '{"v":1,"seq":1,"key":"k1","at":"2026-01-01T00:00:00.000Z","command":"start","actor":{"id":"a"},"events":[],"effects":[]}';
const WORKFLOW = 'id: w\nsteps:\n  - id: a\n    agent: demo\n    prompt: do it\n';
const RUN_JSON = '{"id":"r","seq":1,"status":"awaiting","steps":[{"id":"plan"}]}';
const TELEGRAM_UPDATE = JSON.stringify({
  update_id: 1,
  message: {
    message_id: 7,
    date: 1,
    chat: { id: -100, type: 'supergroup', title: 'Ops' },
    from: { id: 5, is_bot: false, first_name: 'A', username: 'a' },
    text: '/approve@pb_bot run-1 ok',
    entities: [{ type: 'bot_command', offset: 0, length: 14 }],
    reply_to_message: {
      message_id: 3,
      date: 1,
      chat: { id: -100, type: 'supergroup' },
      from: { id: 9, is_bot: true, first_name: 'PB' },
    },
  },
});
const SLACK_EVENT = JSON.stringify({
  command: '/pb',
  text: 'approve run-1 ok',
  channel_id: 'C1',
  user_id: 'U1',
  trigger_id: 't',
  team_id: 'T1',
  event: { user: 'U1', text: '<@UBOT> run demo x', channel: 'C1', ts: '1.1', thread_ts: '1.0' },
});

/** The paths of every value in `v` (objects and arrays walked). */
function pathsOf(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof v !== 'object' || v === null) return [at];
  const keys = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
  return [at, ...keys.flatMap((k) => pathsOf((v as Record<string, unknown>)[k], [...at, k]))];
}

/** A JSON sample with values at random paths replaced by random JSON or removed, as text. */
function aroundJson(sample: string): fc.Arbitrary<string> {
  const base = JSON.parse(sample) as unknown;
  const paths = pathsOf(base).filter((p) => p.length > 0);
  const edit = fc.tuple(fc.constantFrom(...paths), fc.option(fc.jsonValue({ maxDepth: 2 })));
  const structural = fc.array(edit, { minLength: 1, maxLength: 4 }).map((edits) => {
    const copy = structuredClone(base) as Record<string | number, unknown>;
    for (const [p, value] of edits) {
      let node: Record<string | number, unknown> | undefined = copy;
      for (const k of p.slice(0, -1)) {
        const next: unknown = node?.[k];
        node = typeof next === 'object' && next !== null ? (next as typeof node) : undefined;
      }
      const key = p.at(-1)!;
      // An earlier edit may have turned an object into an array (or back): skip such a path.
      if (node === undefined || Array.isArray(node) !== (typeof key === 'number')) continue;
      if (value === null) delete node[key];
      else node[key] = value;
    }
    return JSON.stringify(copy);
  });
  return fc.oneof({ arbitrary: structural, weight: 4 }, { arbitrary: around(sample), weight: 1 });
}

/** Parses JSON text, or gives undefined (the SDKs hand us parsed JSON, never raw text). */
function json(t: string): unknown {
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
}

/** Random text, or a known-good sample mutated (cut, spliced, duplicated, nested). */
function around(sample: string): fc.Arbitrary<string> {
  const mutated = fc
    .tuple(fc.nat(sample.length), fc.nat(sample.length), fc.string({ maxLength: 40 }))
    .map(([a, b, ins]) => sample.slice(0, Math.min(a, b)) + ins + sample.slice(Math.max(a, b)));
  const nested = fc
    .tuple(fc.constantFrom('[', '{', '- ', '  a:\n'), fc.integer({ min: 1, max: 3000 }))
    .map(([open, n]) => `${sample}${open.repeat(n)}`);
  return fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.json({ maxDepth: 4 }),
    mutated,
    nested,
    fc.constant(sample),
  );
}

/** True for an answer: a phasebridge error is how a parser says "refused". */
function typed(err: unknown): boolean {
  return err instanceof PhasebridgeError;
}

function answer(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!typed(err)) throw err;
  }
}

/** The targets; file readers write into `scratch` (a fresh temp folder the caller removes). */
export function fuzzTargets(scratch: string): FuzzTarget[] {
  const file = (rel: string, text: string): string => {
    const p = path.join(scratch, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
    return p;
  };
  return [
    {
      name: 'ledger bytes',
      input: around(`${LEDGER_LINE}\n${LEDGER_LINE.replace('"seq":1', '"seq":2')}\n`),
      run: (t) => answer(() => parseLedger(Buffer.from(t, 'utf8'), 4096)),
    },
    {
      name: 'ledger line',
      input: around(LEDGER_LINE),
      run: (t) => answer(() => parseLedgerLine(t)),
    },
    {
      name: 'ledger file',
      input: around(`${LEDGER_LINE}\n`),
      run: (t) => answer(() => readLedger(file('ledger.jsonl', t), 4096)),
    },
    {
      name: 'run.json',
      input: around(RUN_JSON),
      run: (t) => {
        file('run/run.json', t);
        answer(() => readRunJson(path.join(scratch, 'run')));
      },
    },
    {
      name: 'template.json',
      input: around('{"template":"x","steps":[]}'),
      run: (t) => answer(() => readTemplateAt(file('ws/.codemachine/template.json', t))),
    },
    {
      name: 'directive.json',
      input: around('{"action":"continue","reason":"ok"}'),
      run: (t) => answer(() => readDirectiveFile(file('d/directive.json', t))),
    },
    {
      name: 'coordinator state.json',
      input: around('{"session_id":"s","state":"running"}'),
      run: (t) => {
        const ws = path.join(scratch, 'coord');
        fs.rmSync(ws, { recursive: true, force: true });
        fs.mkdirSync(ws);
        answer(() => readSessionHead(ws));
        const p = coordinatorPaths(ws).state;
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, t);
        answer(() => readSessionHead(ws));
      },
    },
    {
      name: 'workflow YAML',
      input: around(WORKFLOW),
      run: (t) => answer(() => parseWorkflow(t, { file: 'fuzz.workflow.yaml', root: scratch })),
    },
    {
      name: 'YAML depth scan',
      input: around(WORKFLOW),
      run: (t) => {
        yamlDepthProblem(t);
      },
    },
    {
      name: 'config file',
      input: around('port: 7717\nworkspace: /tmp/x\n'),
      run: (t) => {
        answer(() => readConfigFile(file('config.yaml', t), true, new Map(), []));
      },
    },
    {
      name: 'flow events.jsonl',
      input: around('{"type":"run.started","at":"2026-01-01T00:00:00Z"}\n{"type":"x"}\n'),
      run: (t) => {
        readEventsJsonl(t);
      },
    },
    {
      name: 'Telegram update',
      input: aroundJson(TELEGRAM_UPDATE),
      run: (t) => {
        const u = json(t);
        if (u === null || typeof u !== 'object') return;
        answer(() => toInbound(u as never, { id: 9, username: 'pb_bot' }));
      },
    },
    {
      name: 'Slack payloads',
      input: aroundJson(SLACK_EVENT),
      run: (t) => {
        const p = json(t);
        if (p === null || typeof p !== 'object') return;
        const bot = { team: 'T1', botUserId: 'UBOT', command: '/pb' };
        answer(() => fromSlashCommand(p as never, bot));
        if ('event' in p && typeof p.event === 'object' && p.event !== null) {
          answer(() => fromMention(p as never, bot));
          answer(() => fromThreadReply(p as never, bot));
          answer(() => fromDirectMessage(p as never, bot));
        }
      },
    },
    {
      name: 'console form',
      input: around('reason=ok&csrf=abc&action=approve'),
      run: (t) => {
        const form = new URLSearchParams(t);
        form.get('reason');
      },
    },
  ];
}

/** A fresh scratch folder for the file targets. */
export function fuzzScratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'pb-fuzz-'));
}
