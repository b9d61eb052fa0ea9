/**
 * One HTTP call to a platform API for `doctor` and `setup`, with a failure told apart by cause:
 * the name does not resolve (DNS), the host cannot be reached (network), TLS fails, or no answer
 * in time. The URL is never part of a message: Telegram puts the token in it.
 */

/** Why a call got no HTTP answer. */
export type ProbeFailureKind = 'dns' | 'network' | 'tls' | 'timeout';

/** A call that got no HTTP answer, with the kind of failure and the low-level code. */
export class ProbeFailure extends Error {
  constructor(
    readonly kind: ProbeFailureKind,
    readonly host: string,
    readonly code: string,
  ) {
    super(`${LABEL[kind]} (${host}: ${code})`);
    this.name = 'ProbeFailure';
  }
}

const LABEL: Record<ProbeFailureKind, string> = {
  dns: 'DNS: the API host name does not resolve',
  network: 'network unreachable: no connection to the API host',
  tls: 'TLS handshake or certificate failed',
  timeout: 'no answer in time',
};

/** An HTTP answer: status, JSON body (empty when not JSON) and headers. */
export interface ProbeAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Headers;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const TLS_CODES = new Set([
  'EPROTO',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
]);

/** The low-level code under a fetch error (undici nests it in `cause`, sometimes in `errors`). */
function codeOf(err: unknown): string | undefined {
  let e = err as { code?: unknown; cause?: unknown; errors?: unknown[] } | undefined;
  for (let depth = 0; e && depth < 4; depth++) {
    if (typeof e.code === 'string' && e.code !== 'UND_ERR') return e.code;
    e = (e.cause ?? e.errors?.[0]) as typeof e;
  }
  return undefined;
}

/** Which kind of failure a rejected fetch was. */
export function classifyFetchError(err: unknown): { kind: ProbeFailureKind; code: string } {
  const name = (err as Error | undefined)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return { kind: 'timeout', code: name };
  const code = codeOf(err) ?? (err as Error | undefined)?.message ?? 'unknown';
  if (DNS_CODES.has(code)) return { kind: 'dns', code };
  if (TLS_CODES.has(code) || /^ERR_(SSL|TLS)_|CERT/.test(code)) return { kind: 'tls', code };
  return { kind: 'network', code };
}

/** Calls `url`; an HTTP answer of any status resolves, no answer throws a ProbeFailure. */
export async function probe(
  url: string,
  init: RequestInit,
  timeoutMs = 5000,
): Promise<ProbeAnswer> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const { kind, code } = classifyFetchError(err);
    throw new ProbeFailure(kind, new URL(url).host, code);
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  return { status: res.status, body, headers: res.headers };
}

/** The fix for a call that got no answer; `rootEnv` names the setting that moves the API root. */
export function fixFor(failure: ProbeFailure, rootEnv: string): string {
  switch (failure.kind) {
    case 'dns':
      return `check this host's DNS (resolv.conf, VPN) and the host name in ${rootEnv} if set`;
    case 'tls':
      return 'check the system clock, and a TLS-intercepting proxy (trust its CA with NODE_EXTRA_CA_CERTS)';
    case 'timeout':
      return `check the firewall and any proxy between this host and ${failure.host}, then retry`;
    default:
      return `check this host can reach ${failure.host} over HTTPS (firewall, proxy) and ${rootEnv} if set`;
  }
}
