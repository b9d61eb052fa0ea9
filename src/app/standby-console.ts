/**
 * The console of a standby (serve-ha.ts): every path that is not its own is forwarded to the
 * leader (http/forward.ts). The standby is the edge the browser reached, so its own https rule
 * comes first: a leader bound to loopback serves plain http, and must not get plain-http clients
 * from the network through a standby that listens beyond loopback.
 */
import { requireHttps } from '../bridges/web/guard.ts';
import type { Config } from '../config.ts';
import { ConsoleForwarder, type LeaderNow } from '../http/forward.ts';
import type { HttpLogger, Route } from '../http/server.ts';
import { consoleExposure } from './public-url.ts';

/** The standby's `/` route: its https rule (as the console's own), then the forward. */
export function standbyConsoleRoute(
  config: Pick<Config, 'host' | 'publicUrl' | 'trustProxy'>,
  leader: () => Promise<LeaderNow | undefined>,
  log: HttpLogger,
): Route {
  const exposure = consoleExposure(config);
  const forwarder = new ConsoleForwarder({
    leader,
    log,
    trustForwardedProto: config.trustProxy !== undefined,
    secureCookies: exposure.secureCookies,
  });
  return {
    prefix: '/',
    handler: async (req, res) => {
      if (requireHttps(exposure, req, res)) await forwarder.handle(req, res);
    },
    // This bridge is about to lead: forwarded streams end, their pages reconnect.
    onClose: () => forwarder.closeAll(),
  };
}
