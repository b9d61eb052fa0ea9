/**
 * Issue 12 "files in, files out" on every platform that carries files, through the real SDK and
 * the platform's fake: a photo attached to `run` is downloaded into the run's inputs folder and
 * the agent's prompt names it; an oversized or disallowed file refuses the run with the limit;
 * files an agent declares in its directive reach the chat with the checkpoint, and a `..` or
 * symlinked path is refused without reading anything outside the workspace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AttachedFile, PlatformDriver } from './platform-driver.ts';
import { until } from './platform-driver.ts';
import type { ContractSubject } from './stories.ts';
import { runIdOf, World } from './world.ts';

/** The per-file limit the stories run with (small, so an oversized file stays small). */
const LIMIT = 4096;

/** A tiny JPEG: the JPEG signature, then filler (content sniffing reads the first bytes). */
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(600, 7)]);

const LOOK = `steps:
  - id: look
    agent: demo
    prompt: "Look at what was sent. demo: sleep=10"
    checkpoint:
      when: after
`;

/** One step whose agent writes report.md and declares `files` (the prompt's demo line). */
const sendWorkflow = (files: string) => `steps:
  - id: report
    agent: demo
    prompt: |
      Report.
      demo: sleep=10 write=report.md directive=continue files=${files}
    checkpoint:
      when: after
`;

/** Registers the files stories for one platform (skipped where the driver cannot attach files). */
export function filesStories(subject: ContractSubject): void {
  let d: PlatformDriver;
  let w: World;

  beforeEach(async () => {
    d = await subject.start();
    w = await World.create([d], { env: { PHASEBRIDGE_MAX_INPUT_BYTES: String(LIMIT) } });
    return () => w.cleanup();
  });

  const attach = (text: string, file: AttachedFile) => d.sendCommandWithFile!('alice', text, file);

  const sent = async () => (d.sentFiles ? await d.sentFiles() : []);

  const runsStarted = async () =>
    (await w.bridge.repos.runs.list({ workspace: w.workspace })).length;

  describe('Files in, files out', () => {
    it("downloads a photo attached to run into the run's inputs folder and names it in the prompt", async (ctx) => {
      if (d.sendCommandWithFile === undefined) return ctx.skip();
      w.workflow('look', LOOK);
      await attach('run look what is wrong on this screen', {
        name: 'screen.jpg',
        data: JPEG,
        photo: true,
      });
      const cp = await w.message(d, /Checkpoint look:1/);
      const runId = runIdOf(cp);
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.inputs).toHaveLength(1);
      const input = state.inputs![0]!;
      expect(input).toMatchObject({ kind: 'image', bytes: JPEG.length });
      expect(path.dirname(input.path)).toBe(`.phasebridge/runs/${runId}/inputs`);
      const onDisk = path.join(w.workspace, input.path);
      expect(fs.readFileSync(onDisk).equals(JPEG)).toBe(true);
      expect(fs.statSync(onDisk).mode & 0o777).toBe(0o600);
      const log = fs.readFileSync(await w.bridge.orchestrator.logPath(runId, 'look'), 'utf8');
      expect(log).toContain(
        `demo-agent: file from the requester: ${input.path} (${JPEG.length} bytes in the workspace)`,
      );
    });

    it('saves a file attached to a guidance reply and passes it on with the guidance', async (ctx) => {
      if (d.replyToWithFile === undefined) return ctx.skip();
      await d.sendCommand('alice', 'run demo add login');
      const plan = await w.message(d, /Checkpoint plan:1/);
      const runId = runIdOf(plan);
      await d.replyToWithFile('bob', plan, 'match this mockup', {
        name: 'mockup.png',
        data: Buffer.from('not a png'),
      });
      await w.message(d, /Your guidance was not passed on: mockup\.png is refused/);
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
      await d.replyToWithFile('bob', plan, 'match this mockup', { name: 'mockup.png', data: png });
      await w.message(
        d,
        /^Noted: goes to build with the approval; it goes to plan, attempt 2 if changes are requested\.$/,
      );
      const saved = `.phasebridge/runs/${runId}/inputs/mockup.png`;
      expect(fs.readFileSync(path.join(w.workspace, saved)).equals(png)).toBe(true);
      // A file sent with no words is guidance too, never silently dropped (issue 29). The
      // console's reply API refuses a reply without words out loud (400 "invalid text").
      const alone = `.phasebridge/runs/${runId}/inputs/flow.png`;
      if (!d.singleUser) {
        await d.replyToWithFile('bob', plan, '', { name: 'flow.png', data: png });
        const noted = /^Noted: goes to build with the approval/;
        await until(() => w.messages(d, noted).length === 2, 'the file alone noted');
        expect(fs.existsSync(path.join(w.workspace, alone))).toBe(true);
      }
      await d.sendCommand('bob', `changes ${runId} and add tests`);
      await w.message(d, /Checkpoint plan:2/);
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.feedback?.map((f) => f.text)).toEqual([
        `match this mockup\n\nFiles with this guidance: ${saved}`,
        ...(d.singleUser ? [] : [`Files with this guidance: ${alone}`]),
        'and add tests',
      ]);
      const log = fs.readFileSync(await w.bridge.orchestrator.logPath(runId, 'plan'), 'utf8');
      expect(log).toContain(`Files with this guidance: ${saved}`);
    });

    it('refuses a file over the limit, says the limit, and starts no run', async (ctx) => {
      if (d.sendCommandWithFile === undefined) return ctx.skip();
      w.workflow('look', LOOK);
      const big = Buffer.concat([JPEG, Buffer.alloc(LIMIT, 1)]);
      await attach('run look too big', { name: 'big.jpg', data: big });
      const refusal = await w.message(d, /Run not started/);
      expect(refusal.text).toContain(
        `big.jpg is ${Math.round((big.length / 1024) * 10) / 10} KB, over the limit of 4 KB per file`,
      );
      expect(refusal.text).toContain('Files are accepted up to 4 KB each, 5 a message');
      expect(await runsStarted()).toBe(0);
      expect(fs.existsSync(path.join(w.workspace, '.phasebridge', 'runs'))).toBe(false);
    });

    it('refuses a disallowed type, and a file whose content is not what its name says', async (ctx) => {
      if (d.sendCommandWithFile === undefined) return ctx.skip();
      w.workflow('look', LOOK);
      await attach('run look run this', { name: 'tool.exe', data: Buffer.from('MZ\x90\x00') });
      const refusal = await w.message(d, /Run not started: tool\.exe/);
      expect(refusal.text).toContain('tool.exe is not an accepted type (accepted: jpg, jpeg, png');
      await attach('run look a fake picture', {
        name: 'notes.png',
        data: Buffer.from('#!/bin/sh'),
      });
      const second = await w.message(d, /Run not started: notes\.png/);
      expect(second.text).toContain('notes.png is refused: its content is not a png image');
      expect(await runsStarted()).toBe(0);
    });

    it('sends the files the directive declares to the chat with the checkpoint', async () => {
      w.workflow('send', sendWorkflow('report.md'));
      await d.sendCommand('alice', 'run send write the report');
      await w.message(d, /Checkpoint report:1/);
      await until(async () => (await sent()).length > 0, 'the report file in the chat');
      const [file] = await sent();
      expect(file!.name).toBe('report.md');
      expect(file!.data.toString('utf8')).toBe('report: write the report\n');
      expect(file!.caption).toContain('📎 report (attempt 1) sent report.md');
    });

    it('refuses a symlinked path without reading its target', async () => {
      const secret = path.join(w.dir, 'secret.txt');
      fs.writeFileSync(secret, 'TOP SECRET\n');
      fs.symlinkSync(secret, path.join(w.workspace, 'leak.md'));
      w.workflow('send', sendWorkflow('leak.md,report.md'));
      await d.sendCommand('alice', 'run send write the report');
      await w.message(d, /Checkpoint report:1/);
      const notice = await w.message(d, /asked to send files that were not sent/);
      expect(notice.text).toContain(
        'leak.md: it is a link, not a regular file, or leads outside the workspace',
      );
      await until(async () => (await sent()).length > 0, 'the report file in the chat');
      expect((await sent()).map((f) => f.name)).toEqual(['report.md']);
      expect((await sent()).some((f) => f.data.includes('TOP SECRET'))).toBe(false);
    });

    it("refuses a '..' path in the directive with a clear error and sends nothing", async () => {
      fs.writeFileSync(path.join(w.dir, 'secret.txt'), 'TOP SECRET\n');
      w.workflow('send', sendWorkflow('../secret.txt'));
      await d.sendCommand('alice', 'run send write the report');
      const failed = await w.message(d, /must stay inside the workspace/);
      expect(failed.text).toContain("files.0: must stay inside the workspace (no '..')");
      expect(await sent()).toEqual([]);
    });
  });
}
