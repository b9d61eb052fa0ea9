/**
 * A console listening beyond loopback is served over https only: without an https
 * PHASEBRIDGE_PUBLIC_URL, a request needs a trusted proxy's `X-Forwarded-Proto: https`, and its
 * cookies are Secure. Real HTTP against a real WebChannel, settings from the real config.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { consoleExposure } from '../../../src/app/public-url.ts';
import { loadConfig } from '../../../src/config.ts';
import { signIn } from '../../support/console-login.ts';
import { startConsole, type TestConsole } from './support.ts';

let c: TestConsole | undefined;
afterEach(async () => {
  await c?.dispose();
  c = undefined;
});

const exposureOf = (env: Record<string, string>) =>
  consoleExposure(loadConfig({ env: { PHASEBRIDGE_HOME: '/tmp/pb-unused', ...env }, cwd: '/' }));

describe('the console off loopback', () => {
  it('refuses plain http, and serves what a trusted proxy says came over https', async () => {
    const exposure = exposureOf({
      PHASEBRIDGE_HOST: '0.0.0.0',
      PHASEBRIDGE_TRUST_PROXY: 'x-forwarded-proto',
    });
    expect(exposure.secureCookies).toBe(true);
    c = await startConsole({ channel: exposure });
    const plain = await fetch(`${c.base}/`, { headers: { accept: 'text/html' } });
    expect(plain.status).toBe(403);
    expect(await plain.text()).toContain('PHASEBRIDGE_PUBLIC_URL');
    const link = await c.channel.loginUrl(c.base);
    const viaProxy = { 'x-forwarded-proto': 'https' };
    const res = await signIn(link, viaProxy);
    expect(res.status).toBe(303);
    expect(res.headers.get('set-cookie')).toContain('; Secure');
  });

  it('does not believe X-Forwarded-Proto unless told to', async () => {
    c = await startConsole({ channel: exposureOf({ PHASEBRIDGE_HOST: '0.0.0.0' }) });
    const res = await fetch(`${c.base}/`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(res.status).toBe(403);
  });

  it('leaves loopback and an https public URL as they were', () => {
    expect(exposureOf({ PHASEBRIDGE_HOST: '127.0.0.1' }).httpsOnly).toBeUndefined();
    const behindTls = exposureOf({
      PHASEBRIDGE_HOST: '0.0.0.0',
      PHASEBRIDGE_PUBLIC_URL: 'https://pb.example.test/',
    });
    expect(behindTls.httpsOnly).toBeUndefined();
    expect(behindTls.secureCookies).toBe(true);
  });
});
