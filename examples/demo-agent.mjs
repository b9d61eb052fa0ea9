#!/usr/bin/env node
/**
 * phasebridge demo agent: a scripted stand-in for a coding agent (plain Node, no dependencies).
 *
 * Behaviour comes from `DEMO_AGENT_BEHAVIOUR` and/or a line in the prompt, both in the form
 *   demo: sleep=200 progress=3 directive=loop loops=2 reason="needs another pass"
 * Both are read; for a key given in both, the PROMPT WINS (the env sets defaults for a whole
 * agent, the prompt tunes one step).
 *
 * Keys:
 *   sleep=N        work for N ms before finishing (default 300)
 *   progress=N     print N lines `::progress step i/N` spread over the sleep
 *   directive=A    write directive A: continue | loop | checkpoint | stop | error | pause | trigger
 *                  | invalid (broken JSON) | badshape (unknown action)
 *   reason="…"     the directive's reason
 *   agent=ID       triggerAgentId for directive=trigger (default "helper")
 *   loops=K        directive=loop loops only the first K times per run and step (default 1),
 *                  then writes continue; the count is kept in `demo-loop-count.json` beside the
 *                  directive file, so a demo workflow always terminates
 *   exit=N         exit with code N after the work (a failing agent)
 *   hang           never finish (sleep forever)
 *   together=N     before the work, wait until N agents of this run's step (tasks, say) have
 *                  started, so they surely run at the same time (each marks a file under
 *                  `.phasebridge/demo-together/` in the workspace; gives up after 30 s, saying so)
 *   waitfor=PATH   before the work, wait until PATH (absolute, or relative to the workspace)
 *                  exists, so a test holds agents until it has done something; the wait ends
 *                  too when PATH's folder is gone (the test cleaned up)
 *   grandchild     start a grandchild process that hangs too, and print its pid
 *   ignoreterm     ignore SIGTERM (agent and grandchild), so only SIGKILL stops them
 *   noise=N        print about N bytes of filler output (to demo the output cap)
 *   tasks=N        write a task list of N tasks (t1…tN) for a following `tasks` step to
 *                  `taskfile=PATH` (workspace-relative, default tasks.json); `taskdeps=chain`
 *                  makes each task depend on the one before
 *   tests=P/T      write the directive's `verification` (P of T tests passed) with `build=passed|failed`
 *                  (default passed), as a verify step reports them
 *   failtask=ID    as a task's agent (the prompt has a `Task <id>: …` line): exit 1 for task ID;
 *                  every other task writes `continue` with a result branch `demo/<id>`
 *   files=A,B      the directive's `files` (workspace paths to send to the chat)
 *   write=FILE     append a line naming the step to FILE in the workspace (a change to diff);
 *                  FILE is a plain name (no folders), anything else is refused
 *
 * PABCD attestation keys (the directive's `attest`, see src/engine/pabcd/attest.ts): any of
 *   did="…" auditOutput="…" verdict=pass|fail checkOutput="…" exitCode=N scanRounds=N
 *   highContradictionCount=N
 * writes `attest` with those fields (numbers as numbers), with directive=continue unless another
 * is given. `exitCode` is the attested check's exit code, not the agent's own (that is `exit`).
 *
 * Reviewers' feedback (`$PHASEBRIDGE_FEEDBACK_FILE`, when phasebridge gives one) is printed one
 * line per entry: `demo-agent: feedback from Bob (changes, 2026-…): needs tests`.
 *
 * Files named in the prompt's "Files from the requester" section are printed one a line with
 * their size as found: `demo-agent: file from the requester: <path> (N bytes in the workspace)`.
 *
 * The prompt is read from stdin, or from the file given as the first argument.
 * The directive file is `$PHASEBRIDGE_DIRECTIVE_FILE`; the spec file is `$PHASEBRIDGE_SPEC_FILE`.
 * The last stdout line is a Claude-like `{"type":"result",…}` stream-json event, so token usage
 * and cost show up in demos.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const started = Date.now();

/** Parses `key=value key="quoted value" flag` into an object; a bare flag is "true". */
function parseBehaviour(text) {
  const out = {};
  const re = /([A-Za-z][\w-]*)(?:=(?:"((?:[^"\\]|\\.)*)"|(\S*)))?/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
    out[m[1]] = value ?? 'true';
  }
  return out;
}

/** The behaviour: env first, then the prompt's `demo:` line on top (the prompt wins). */
function behaviourFor(prompt, envValue) {
  const line = /^[ \t]*demo:(.*)$/m.exec(prompt);
  return { ...parseBehaviour(envValue ?? ''), ...parseBehaviour(line ? line[1] : '') };
}

function readPrompt() {
  const file = process.argv[2];
  if (file) return Promise.resolve(fs.readFileSync(file, 'utf8'));
  if (process.stdin.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (d) => {
      text += d;
    });
    process.stdin.on('end', () => resolve(text));
    process.stdin.on('error', () => resolve(text));
  });
}

function firstLine(text) {
  const line = text.split('\n').find((l) => l.trim() !== '' && !/^\s*demo:/.test(l)) ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}...` : line.trim();
}

function specFirstLine() {
  const spec = process.env.PHASEBRIDGE_SPEC_FILE;
  if (!spec) return '(no spec file given)';
  try {
    return firstLine(fs.readFileSync(spec, 'utf8')) || '(empty spec file)';
  } catch {
    return `(cannot read ${spec})`;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const int = (v, dflt) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : dflt);

function startGrandchild(ignoreTerm) {
  const code = `${ignoreTerm ? "process.on('SIGTERM', () => {});" : ''} setInterval(() => {}, 1 << 30);`;
  const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  console.log(`demo-agent: grandchild pid ${child.pid}`);
}

/** Loops left for this step: counts in `demo-loop-count.json` beside the directive file. */
function takeLoop(directiveFile, limit) {
  const stateFile = path.join(path.dirname(directiveFile), 'demo-loop-count.json');
  const key = process.env.PHASEBRIDGE_STEP_ID ?? 'step';
  let counts = {};
  try {
    counts = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
  } catch {
    counts = {};
  }
  const done = Number(counts[key] ?? 0);
  if (done >= limit) return false;
  counts[key] = done + 1;
  fs.writeFileSync(stateFile, `${JSON.stringify(counts)}\n`);
  return true;
}

const ATTEST_TEXT = ['did', 'auditOutput', 'verdict', 'checkOutput'];
const ATTEST_INT = ['exitCode', 'scanRounds', 'highContradictionCount'];

/** The `attest` object the behaviour asks for, or undefined when it names no attest key. */
function attestOf(b) {
  const att = {};
  for (const k of ATTEST_TEXT) if (b[k] !== undefined) att[k] = b[k];
  // Integers as numbers: the engine's schema refuses "0" as an exit code.
  for (const k of ATTEST_INT) if (b[k] !== undefined) att[k] = Number.parseInt(b[k], 10);
  return Object.keys(att).length > 0 ? att : undefined;
}

/** The task id of a `tasks` step's agent (its prompt ends with `Task <id>: <title>`). */
function taskIdOf(prompt) {
  return /^Task ([A-Za-z0-9][A-Za-z0-9_.-]*): /m.exec(prompt)?.[1];
}

/** Writes a task list of `tasks=N` tasks to `taskfile` (workspace-relative). */
function writeTaskList(b) {
  const n = int(b.tasks, 0);
  const tasks = Array.from({ length: n }, (_, i) => ({
    id: `t${i + 1}`,
    title: `demo task ${i + 1}`,
    priority: n - i,
    depends_on: b.taskdeps === 'chain' && i > 0 ? [`t${i}`] : [],
  }));
  const file = path.resolve(b.taskfile ?? 'tasks.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ tasks }, null, 2)}\n`);
  console.log(`demo-agent: wrote ${n} tasks to ${file}`);
}

function writeDirective(b, taskId) {
  const file = process.env.PHASEBRIDGE_DIRECTIVE_FILE;
  const attest = attestOf(b);
  const action = b.directive ?? (attest || taskId || b.tests ? 'continue' : undefined);
  if (!action) return;
  if (!file) {
    console.error('demo-agent: PHASEBRIDGE_DIRECTIVE_FILE is not set; no directive written');
    return;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let text;
  if (action === 'invalid') text = '{"action": "loop", ';
  else if (action === 'badshape') text = JSON.stringify({ action: 'explode' });
  else if (action === 'loop' && !takeLoop(file, int(b.loops, 1))) {
    text = JSON.stringify({ action: 'continue', reason: 'demo loop limit reached' });
  } else {
    const d = { action };
    if (b.reason !== undefined) d.reason = b.reason;
    if (action === 'trigger') d.triggerAgentId = b.agent ?? 'helper';
    if (b.files !== undefined) d.files = b.files.split(',').filter(Boolean);
    if (attest) d.attest = attest;
    if (taskId) {
      // A PR number per task (100 + its number), as a coding agent would report it.
      const n = Number(/(\d+)$/.exec(taskId)?.[1] ?? 0);
      d.result = { branch: `demo/${taskId}`, ...(n > 0 ? { pr: 100 + n } : {}) };
    }
    const tests = /^(\d+)\/(\d+)$/.exec(b.tests ?? '');
    if (tests) {
      d.verification = {
        testsTotal: Number(tests[2]),
        testsPassed: Number(tests[1]),
        buildStatus: b.build === 'failed' ? 'failed' : 'passed',
      };
    }
    text = JSON.stringify(d);
  }
  fs.writeFileSync(file, `${text}\n`);
  console.log(`demo-agent: directive ${text}`);
}

/**
 * Prints each file the prompt's "Files from the requester" section names, with its size as
 * found in the workspace, so logs and tests show the file reached the agent.
 */
function printInputs(prompt) {
  const section = /(?:^|\n)## Files from the requester\n([\s\S]*?)(?=\n## |$(?![\s\S]))/.exec(
    prompt,
  );
  if (!section) return;
  for (const m of section[1].matchAll(/^- (\S+) \(/gm)) {
    let found;
    try {
      found = `${fs.statSync(m[1]).size} bytes in the workspace`;
    } catch {
      found = 'MISSING from the workspace';
    }
    console.log(`demo-agent: file from the requester: ${m[1]} (${found})`);
  }
}

/** Prints each entry of the feedback file, so logs and the console show what reached the agent. */
function printFeedback() {
  const file = process.env.PHASEBRIDGE_FEEDBACK_FILE;
  if (!file) return;
  try {
    const { feedback } = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const f of feedback) {
      console.log(`demo-agent: feedback from ${f.by} (${f.kind}, ${f.at}): ${f.text}`);
    }
  } catch (err) {
    console.log(`demo-agent: cannot read feedback file ${file}: ${err.message}`);
  }
}

function resultLine(prompt, b, isError) {
  const input = 40 + Math.ceil(prompt.length / 4);
  const output = 120 + 10 * int(b.progress, 0);
  const cacheRead = 1024;
  const cost = (input * 3 + output * 15 + cacheRead * 0.3) / 1e6;
  return JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: isError,
    duration_ms: Date.now() - started,
    num_turns: 1,
    result: isError ? 'demo agent failed' : 'demo agent finished',
    session_id: `demo-${process.pid}`,
    total_cost_usd: Number(cost.toFixed(6)),
    usage: {
      input_tokens: input,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: cacheRead,
      output_tokens: output,
    },
  });
}

/** Waits until `n` agents of this run's step have started (each marks a file), at most 30 s. */
async function together(n) {
  const key = `${process.env.PHASEBRIDGE_RUN_ID ?? 'run'}-${process.env.PHASEBRIDGE_STEP_ID ?? 'step'}`;
  const dir = path.join('.phasebridge', 'demo-together', key.replace(/[^\w.-]/g, '_'));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, String(process.pid)), '');
  const until = Date.now() + 30_000;
  for (;;) {
    const started = fs.readdirSync(dir).length;
    if (started >= n) break;
    if (Date.now() > until) {
      console.log(`demo-agent: together=${n}: only ${started} started in 30 s, going on`);
      return;
    }
    await sleep(20);
  }
  console.log(`demo-agent: together=${n}: all started`);
}

/** Waits until `file` exists (a test's signal); its folder going away ends the wait too. */
async function waitForFile(file) {
  const dir = path.dirname(path.resolve(file));
  for (;;) {
    if (fs.existsSync(file)) break;
    if (!fs.existsSync(dir)) {
      console.log(`demo-agent: waitfor=${file}: its folder is gone, going on`);
      return;
    }
    await sleep(20);
  }
  console.log(`demo-agent: waitfor=${file}: there`);
}

/** Appends a line to a file of the workspace (the agent's cwd), so the step has a diff. */
function writeWorkFile(name) {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) {
    console.error(`demo-agent: write=${name} refused: a plain file name only`);
    return;
  }
  const step = process.env.PHASEBRIDGE_STEP_ID ?? 'step';
  fs.appendFileSync(name, `${step}: ${specFirstLine()}\n`);
  console.log(`demo-agent: wrote a line to ${name}`);
}

async function main() {
  const prompt = await readPrompt();
  const b = behaviourFor(prompt, process.env.DEMO_AGENT_BEHAVIOUR);
  const ignoreTerm = b.ignoreterm === 'true';
  if (ignoreTerm) process.on('SIGTERM', () => console.log('demo-agent: ignoring SIGTERM'));
  console.log(`demo-agent: prompt (${prompt.length} chars): ${firstLine(prompt) || '(no text)'}`);
  console.log(`demo-agent: spec: ${specFirstLine()}`);
  printFeedback();
  printInputs(prompt);
  // Which worker process ran this agent (the parent: agents are spawned without a shell).
  console.log(`demo-agent: pid ${process.pid}, worker pid ${process.ppid}`);
  if (b.grandchild === 'true') startGrandchild(ignoreTerm);

  const noise = int(b.noise, 0);
  for (let sent = 0; sent < noise; sent += 64) console.log(`noise ${'.'.repeat(57)}`);

  const meet = int(b.together, 0);
  if (meet > 0) await together(meet);
  if (b.waitfor !== undefined) await waitForFile(b.waitfor);

  const total = int(b.sleep, 300);
  const steps = int(b.progress, 0);
  for (let i = 1; i <= steps; i++) {
    await sleep(total / (steps + 1));
    console.log(`::progress step ${i}/${steps}`);
  }
  await sleep(steps > 0 ? total / (steps + 1) : total);

  if (b.hang === 'true') {
    console.log('demo-agent: hanging');
    setInterval(() => {}, 1 << 30);
    return;
  }
  if (b.tasks !== undefined) writeTaskList(b);
  if (b.write !== undefined) writeWorkFile(b.write);
  const taskId = taskIdOf(prompt);
  writeDirective(b, taskId);
  const exitCode = taskId !== undefined && b.failtask === taskId ? 1 : int(b.exit, 0);
  console.log(resultLine(prompt, b, exitCode !== 0));
  if (exitCode !== 0) console.error(`demo-agent: failing with exit code ${exitCode}`);
  process.exitCode = exitCode;
}

await main();
