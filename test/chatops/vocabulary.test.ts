/**
 * One vocabulary: every chat verb parses with the grammar and has its CLI command of the same
 * name (and the other way round), from the one table in src/chatops/vocabulary.ts.
 */
import { describe, expect, it } from 'vitest';
import { REQUIRED_ROLE } from '../../src/chatops/authorize.ts';
import { helpText, parseCommand, USAGE, VERBS, type Verb } from '../../src/chatops/grammar.ts';
import { CLI_ONLY, SHARED_ALIASES, VOCABULARY } from '../../src/chatops/vocabulary.ts';
import { CliContext } from '../../src/cli/context.ts';
import { buildProgram } from '../../src/cli/program.ts';

const RUN = '2026-11-29T143000Z-add-login';

/** A valid chat invocation of every verb (a Record, so a new verb without one does not compile). */
const SAMPLES: Readonly<Record<Verb, string>> = {
  run: 'demo add a login page',
  status: RUN,
  phase: RUN,
  prompt: `${RUN} plan`,
  diff: `${RUN} plan`,
  runs: '',
  sessions: '',
  approve: `${RUN} looks good`,
  reject: `${RUN} wrong plan`,
  changes: `${RUN} needs tests`,
  cancel: RUN,
  resume: RUN,
  skip: RUN,
  retry: RUN,
  reopen: RUN,
  revert: `${RUN} build`,
  repair: `${RUN} dry-run`,
  agents: '',
  workflows: '',
  bind: '/srv/app demo --follow',
  allow: 'telegram:123 viewer',
  deny: 'telegram:123',
  bindings: '',
  unbind: 'telegram:-1001234',
  access: '',
  whoami: '',
  console: '',
  link: 'ABCDEFGHJK',
  pair: 'ABCDEFGHJK',
  help: 'run',
};

/** The CLI's command names and aliases, plus commander's own `help`. */
async function cliNames(): Promise<Set<string>> {
  const program = await buildProgram(new CliContext());
  const names = program.commands.flatMap((c) => [c.name(), ...c.aliases()]);
  expect(program.helpInformation()).toContain('help [command]');
  return new Set([...names, 'help']);
}

const cli = await cliNames();

describe('one vocabulary in chat and CLI', () => {
  it.each(VERBS.map((v) => [v, VOCABULARY[v]] as const))(
    'chat %s parses, needs its table role, and the CLI has it',
    (verb, entry) => {
      const parsed = parseCommand(verb, SAMPLES[verb]);
      expect(parsed).toMatchObject({ ok: true, command: { verb } });
      expect(REQUIRED_ROLE[verb]).toBe(entry.role);
      expect(entry.cli).toBe(verb);
      expect(cli.has(entry.cli), `phasebridge ${entry.cli}`).toBe(true);
    },
  );

  it('has no CLI command without a chat verb, except the listed CLI-only ones', () => {
    const paired = new Set([
      ...Object.values(VOCABULARY).map((e) => e.cli),
      ...Object.keys(SHARED_ALIASES),
    ]);
    const unpaired = [...cli].filter((name) => !paired.has(name) && !(name in CLI_ONLY));
    // `console` (chat) pairs with `login`'s alias `console` (CLI): both open the console.
    expect(unpaired).toEqual([]);
  });

  it('knows the shared aliases on both sides', () => {
    for (const [alias, verb] of Object.entries(SHARED_ALIASES)) {
      expect(parseCommand(alias, SAMPLES[verb])).toMatchObject({ ok: true, command: { verb } });
      expect(cli.has(alias)).toBe(true);
    }
  });

  it('lists the verbs in help grouped by the role they need', () => {
    const sections = helpText().split('\n\n').slice(1);
    const titles = { Anyone: null, Viewers: 'viewer', Operators: 'operator' } as const;
    const more = { Approvers: 'approver', Admins: 'admin' } as const;
    const groups = { ...titles, ...more };
    expect(sections.map((s) => s.split('\n')[0])).toEqual(Object.keys(groups).map((t) => `${t}:`));
    for (const section of sections) {
      const title = section.split('\n')[0]!.slice(0, -1) as keyof typeof groups;
      const listed = VERBS.filter((v) =>
        section.split('\n').some((l) => l.startsWith(`${USAGE[v].usage} — `)),
      );
      expect(listed).toEqual(VERBS.filter((v) => VOCABULARY[v].role === groups[title]));
    }
  });
});
