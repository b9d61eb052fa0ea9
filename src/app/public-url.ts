/**
 * PHASEBRIDGE_PUBLIC_URL: the console's address as browsers reach it (usually a TLS proxy). It
 * decides the links phasebridge prints and whether the console's cookies are `Secure`. And
 * PHASEBRIDGE_ADVERTISE_URL: the console's address as the other bridges of a leader election
 * reach it (their standbys forward to it).
 */
import type { Config } from '../config.ts';
import { isLoopbackHost } from '../http/server.ts';

/** How the console guards its session cookie and state-changing requests. */
export interface ConsoleExposure {
  /** Set-Cookie gets `Secure`: the console is reachable beyond loopback, or through https. */
  readonly secureCookies: boolean;
  /** The public URL's origin, accepted in the Origin header besides the request's own host. */
  readonly allowedOrigins: readonly string[];
  /**
   * Off loopback without an https PHASEBRIDGE_PUBLIC_URL: a request is served only when a
   * trusted proxy says it came over https (`x-forwarded-proto`); undefined = no such check.
   */
  readonly httpsOnly?: { readonly trustForwardedProto: boolean };
}

/** Cookie and origin settings of the console for this config. */
export function consoleExposure(
  config: Pick<Config, 'host' | 'publicUrl'> & Partial<Pick<Config, 'trustProxy'>>,
): ConsoleExposure {
  const pub = config.publicUrl === undefined ? undefined : new URL(config.publicUrl);
  const offLoopback = !isLoopbackHost(config.host);
  // Beyond loopback the cookie may cross a network: only ever send it over TLS.
  const secureCookies = offLoopback || pub?.protocol === 'https:';
  const exposure = { secureCookies, allowedOrigins: pub ? [pub.origin] : [] };
  // An https public URL is the operator's TLS proxy; without one, each request must prove it.
  if (!offLoopback || pub?.protocol === 'https:') return exposure;
  return { ...exposure, httpsOnly: { trustForwardedProto: config.trustProxy !== undefined } };
}

/**
 * `link` (built on the server's own `serverUrl`) rebased onto the public URL, path prefix
 * included; unchanged without one. `http://127.0.0.1:7717/?token=x` → `https://pb.example/?token=x`.
 */
export function publicLink(link: string, serverUrl: string, publicUrl: string | undefined): string {
  if (publicUrl === undefined || !link.startsWith(serverUrl)) return link;
  return `${publicUrl.replace(/\/+$/, '')}${link.slice(serverUrl.replace(/\/+$/, '').length)}`;
}

/**
 * Where standbys forward the console to this bridge: PHASEBRIDGE_ADVERTISE_URL, else the address
 * it is bound to (`boundUrl`), unless that is a wildcard no peer could connect to.
 */
export function advertiseUrlOf(
  config: Pick<Config, 'advertiseUrl' | 'host'>,
  boundUrl: string,
): string | undefined {
  if (config.advertiseUrl !== undefined) return config.advertiseUrl;
  return config.host === '0.0.0.0' || config.host === '::' ? undefined : boundUrl;
}
