/**
 * A bridge that goes away mid-answer (restarting): the CLI's control client says what happened
 * and what to do, not a raw ECONNRESET or an internal error.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { probeBridge } from '../../src/control/client.ts';
import { ResourceError } from '../../src/errors.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-ctl-reset-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let server: net.Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A socket server that reads the request, then ends the connection the way `how` says. */
async function bridgeThat(how: 'destroy' | 'end'): Promise<string> {
  const socketPath = path.join(dir, `${how}.sock`);
  server = net.createServer((sock) => {
    sock.once('data', () => (how === 'destroy' ? sock.destroy() : sock.end()));
  });
  await new Promise<void>((resolve) => server!.listen(socketPath, resolve));
  return socketPath;
}

describe('control client when the bridge restarts', () => {
  for (const how of ['destroy', 'end'] as const) {
    it(`a bridge that calls ${how}() mid-request says to run the command again`, async () => {
      const socketPath = await bridgeThat(how);
      const err = await probeBridge(socketPath).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ResourceError);
      expect((err as Error).message).toBe(
        'the bridge restarted while answering: run the command again',
      );
    });
  }

  it('nobody listening is still "no bridge" (the CLI works alone)', async () => {
    expect(await probeBridge(path.join(dir, 'none.sock'))).toBeNull();
  });
});
