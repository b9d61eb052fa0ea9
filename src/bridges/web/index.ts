/**
 * Public entry of the web console adapter.
 *
 * One shared chat: every browser session sees the same chat, `web:console` (so a run started in
 * one tab is followed in every tab, and a binding made once survives restarts). Its only user is
 * the local admin, user ref `web:admin` (ChatUser { platform: 'web', id: 'admin' }): whoever holds
 * a session is the person who started `phasebridge serve`. Private answers and reason prompts go
 * to the presser's session (and tab) only. Messages, prompts and sessions are kept in the stores
 * given as `state` and `auth` (bridge.db in a bridge), in memory without them.
 *
 * Wiring (serve): pass `auth: repos.consoleAuth` and `state: repos.channelState.scope('web')`;
 * bind `web:console` to the default workspace and allow `web:admin` as admin; mount
 * `channel.route` at `/`, `channel.protect(metrics.handler())` at `/metrics` and the health
 * routes; add the probe `readiness.add('web', async () => channel.running)`; start the channel
 * with `chatops.handle`; print `await channel.loginUrl(server.url)`. `phasebridge login` adds a
 * token from another process with `issueLoginToken(repos.consoleAuth)`.
 */
export type { AdminSource } from './admin-source.ts';
export { WebChannel, type WebChannelOptions } from './channel.ts';
export { WEB_ADMIN } from './inbound.ts';
export { CONSOLE_CHAT_REF } from './outbound.ts';
export type { QueueJobView, QueueListName, QueueSource } from './queue-source.ts';
export {
  orchestratorRunsSource,
  type RunListItem,
  type RunsReader,
  type RunsSource,
  type RunView,
  type StepView,
} from './runs-source.ts';
export {
  type ConsoleAuthStore,
  consoleLoginUrl,
  issueLoginToken,
  LOGIN_TOKEN_TTL_MS,
  type StoredSession,
} from './session.ts';
