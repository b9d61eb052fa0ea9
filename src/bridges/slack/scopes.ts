/**
 * What the Slack app must grant the bridge, in one table: each bot scope with the Web API methods
 * and events that need it. `phasebridge setup slack` builds the app manifest from it and `doctor`
 * compares it with the token's `x-oauth-scopes`; a test checks the adapter calls nothing else.
 */

/** One bot scope and why the bridge needs it. */
export interface SlackScope {
  readonly scope: string;
  /** Web API methods the adapter calls that need this scope. */
  readonly methods: readonly string[];
  /** Bot events the adapter listens to that need this scope. */
  readonly events: readonly string[];
  readonly why: string;
  /** The adapter works without it, a little worse (doctor says so but passes). */
  readonly optional?: true;
}

/** Every bot scope the adapter uses, and nothing more. */
export const SLACK_SCOPES: readonly SlackScope[] = [
  {
    scope: 'commands',
    methods: [],
    events: [],
    why: 'receive the slash command (SLACK_COMMAND, default /pb)',
  },
  {
    scope: 'app_mentions:read',
    methods: [],
    events: ['app_mention'],
    why: 'receive `@bot <command>` in channels',
  },
  {
    scope: 'channels:history',
    methods: ['conversations.history', 'conversations.replies'],
    events: ['message.channels'],
    why: 'see thread replies under run messages in public channels (guidance); find a message posted just before a restart, so it is not posted twice',
  },
  {
    scope: 'groups:history',
    methods: ['conversations.history', 'conversations.replies'],
    events: ['message.groups'],
    why: 'see thread replies under run messages in private channels (guidance); find a message posted just before a restart',
  },
  {
    scope: 'chat:write',
    methods: ['chat.postMessage', 'chat.update', 'chat.delete', 'chat.postEphemeral'],
    events: [],
    why: 'post run status and checkpoints, edit them in place, answer privately',
  },
  {
    scope: 'files:read',
    methods: [],
    events: [],
    why: 'download files attached to `@bot run …` or to a guidance reply in a thread (url_private_download)',
  },
  {
    scope: 'files:write',
    methods: ['files.getUploadURLExternal', 'files.completeUploadExternal'],
    events: [],
    why: 'upload logs and reports (files.uploadV2)',
  },
  {
    scope: 'users:read',
    methods: ['users.info'],
    events: [],
    why: 'name a person whose thread reply or mention carries their id only (users.info)',
    // Added after release (issue 29): an app installed before keeps working, naming by id.
    optional: true,
  },
];

/** Methods the adapter calls that need no scope (token check, modals, Socket Mode). */
export const SLACK_UNSCOPED_METHODS: readonly string[] = [
  'auth.test',
  'views.open',
  'apps.connections.open',
];

/** The bot scopes, in table order. */
export const slackBotScopes = (): string[] => SLACK_SCOPES.map((s) => s.scope);

/** The bot events to subscribe to. */
export const slackBotEvents = (): string[] => SLACK_SCOPES.flatMap((s) => s.events);

/** The required scopes a token lacks, from its `x-oauth-scopes` header (comma-separated). */
export function missingSlackScopes(header: string): string[] {
  return lacking(header, false);
}

/** The optional scopes a token lacks (see SlackScope.optional). */
export function missingOptionalSlackScopes(header: string): string[] {
  return lacking(header, true);
}

function lacking(header: string, optional: boolean): string[] {
  const granted = new Set(header.split(',').map((s) => s.trim()));
  return SLACK_SCOPES.filter(
    (s) => (s.optional === true) === optional && !granted.has(s.scope),
  ).map((s) => s.scope);
}
