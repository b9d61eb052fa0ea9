/**
 * `doctor`'s look at a bridge running with this config: its `/readyz` names the adapters that are
 * not up and why (a second poller on the Telegram token, a revoked token, a platform that does
 * not answer). Asking the running bridge is the only safe way to see a poller conflict: polling
 * from here would itself conflict with that bridge.
 */
import type { Config } from '../config.ts';
import type { CheckResult } from './doctor-checks.ts';

const TIMEOUT_MS = 1500;

interface ReadyzBody {
  checks?: { name: string; ok: boolean; error?: string; detail?: string }[];
}

/** What the running bridge reports; one ok line when none runs here. */
export async function checkRunningBridge(config: Config): Promise<CheckResult[]> {
  const host =
    config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${config.port}/readyz`;
  let body: ReadyzBody;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    body = (await res.json()) as ReadyzBody;
  } catch {
    return [{ name: 'bridge', ok: true, detail: `not running at ${host}:${config.port}` }];
  }
  const down = (body.checks ?? []).filter((c) => !c.ok);
  if (down.length === 0) {
    return [
      { name: 'bridge', ok: true, detail: `running at ${host}:${config.port}, everything up` },
    ];
  }
  return down.map((c) => ({
    name: `bridge: ${c.name}`,
    ok: false,
    detail: c.detail ?? c.error ?? 'not ready',
    fix:
      c.name === 'telegram' && /409|conflict/i.test(c.detail ?? '')
        ? 'stop the other process polling this bot token (or give this bridge its own bot), then restart the bridge'
        : 'see the bridge log; `phasebridge setup <platform>` checks a token',
  }));
}
