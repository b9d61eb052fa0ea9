import { describe, expect, it } from 'vitest';
import {
  argumentText,
  failureText,
  helpText,
  parseCommand,
  USAGE,
  usageOf,
  VERBS,
  type Verb,
} from '../../src/chatops/grammar.ts';
import { restOf, tokenize } from '../../src/chatops/tokenize.ts';

const RUN = '2026-11-29T143000Z-add-login';

describe('tokenize', () => {
  it('splits words and honours straight and typographic quotes', () => {
    expect(tokenize(`a "b c"  'd e' “f g” h`).map((t) => t.value)).toEqual([
      'a',
      'b c',
      'd e',
      'f g',
      'h',
    ]);
  });

  it('keeps apostrophes inside words and unterminated quotes literal', () => {
    expect(tokenize(`it's "fine`).map((t) => t.value)).toEqual([`it's`, `"fine`]);
    expect(tokenize(`"ab"cd ef`).map((t) => t.value)).toEqual([`"ab"cd`, 'ef']);
  });

  it('takes the rest of the text verbatim, or a lone quoted token unquoted', () => {
    const text = ' demo add a\nlogin page ';
    const tokens = tokenize(text);
    expect(restOf(text, tokens, 1)).toBe('add a\nlogin page');
    const quoted = 'demo "add a login page"';
    expect(restOf(quoted, tokenize(quoted), 1)).toBe('add a login page');
    expect(restOf(quoted, tokenize(quoted), 2)).toBeUndefined();
  });
});

describe('argumentText', () => {
  it('strips the leading /verb and a bot mention from the raw text', () => {
    expect(argumentText('run', '/run@phasebridge_bot demo "x y"', ['demo', '"x', 'y"'])).toBe(
      ' demo "x y"',
    );
    expect(argumentText('run', 'run demo', ['demo'])).toBe(' demo');
  });

  it('falls back to the words when the raw text does not start with the verb', () => {
    expect(argumentText('run', 'something else', ['demo', 'x'])).toBe('demo x');
  });
});

describe('parseCommand', () => {
  it('parses run with its spec, keeping line breaks', () => {
    expect(parseCommand('run', 'demo add a login page')).toEqual({
      ok: true,
      command: {
        verb: 'run',
        first: 'demo',
        rest: 'add a login page',
        text: 'demo add a login page',
      },
    });
    const multi = parseCommand('run', 'demo line one\nline two');
    expect(multi.ok && multi.command).toMatchObject({ rest: 'line one\nline two' });
    expect(parseCommand('run', '')).toEqual({ ok: true, command: { verb: 'run' } });
  });

  it('tells a run id from a reason in approve and reject', () => {
    expect(parseCommand('approve', '')).toEqual({ ok: true, command: { verb: 'approve' } });
    expect(parseCommand('approve', `${RUN} looks good`)).toEqual({
      ok: true,
      command: { verb: 'approve', runId: RUN, reason: 'looks good' },
    });
    expect(parseCommand('approve', 'looks good')).toEqual({
      ok: true,
      command: { verb: 'approve', reason: 'looks good' },
    });
    expect(parseCommand('reject', `${RUN} "too risky"`)).toEqual({
      ok: true,
      command: { verb: 'reject', runId: RUN, reason: 'too risky' },
    });
  });

  it('requires a reason to reject', () => {
    for (const text of ['', RUN]) {
      const r = parseCommand('reject', text);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(failureText(r.failure)).toContain(USAGE.reject.usage);
    }
  });

  it('parses the run-steering verbs and refuses bad arguments with their usage', () => {
    expect(parseCommand('cancel', `${RUN} wrong spec`)).toEqual({
      ok: true,
      command: { verb: 'cancel', runId: RUN, reason: 'wrong spec' },
    });
    expect(parseCommand('revert', `${RUN} build`)).toEqual({
      ok: true,
      command: { verb: 'revert', runId: RUN, stepId: 'build' },
    });
    for (const [verb, text] of [
      ['cancel', ''],
      ['cancel', 'not-a-run'],
      ['resume', `${RUN} extra`],
      ['retry', ''],
      ['revert', RUN],
      ['status', 'nope'],
      ['runs', 'x'],
      ['pair', ''],
      ['link', 'ABC confirm'],
      ['bind', ''],
      ['deny', 'a b'],
    ] as const) {
      const r = parseCommand(verb, text);
      expect(r, `${verb} ${text}`).toMatchObject({ ok: false, failure: { verb } });
      if (!r.ok) expect(failureText(r.failure)).toContain(`Usage: ${USAGE[verb].usage}`);
    }
  });

  it("parses link: a code request, a code, or the issuer's confirm / cancel", () => {
    expect(parseCommand('link', '')).toEqual({ ok: true, command: { verb: 'link' } });
    expect(parseCommand('link', 'abcdefghjk')).toEqual({
      ok: true,
      command: { verb: 'link', code: 'abcdefghjk' },
    });
    expect(parseCommand('link', 'Confirm')).toEqual({
      ok: true,
      command: { verb: 'link', step: 'confirm' },
    });
    expect(parseCommand('link', 'cancel')).toEqual({
      ok: true,
      command: { verb: 'link', step: 'cancel' },
    });
  });

  it('parses bind with an optional --follow anywhere after the workspace', () => {
    expect(parseCommand('bind', '/srv/app --follow')).toEqual({
      ok: true,
      command: { verb: 'bind', workspace: '/srv/app', follow: true },
    });
    expect(parseCommand('bind', '/srv/app pabcd --FOLLOW')).toEqual({
      ok: true,
      command: { verb: 'bind', workspace: '/srv/app', workflow: 'pabcd', follow: true },
    });
    expect(parseCommand('bind', '/srv/app pabcd')).toEqual({
      ok: true,
      command: { verb: 'bind', workspace: '/srv/app', workflow: 'pabcd' },
    });
    for (const text of ['--follow', '/srv/app --follow --follow', '/srv/app a b --follow']) {
      expect(parseCommand('bind', text), text).toMatchObject({ ok: false });
    }
  });

  it('parses phase with exactly one run id', () => {
    expect(parseCommand('phase', RUN)).toEqual({
      ok: true,
      command: { verb: 'phase', runId: RUN },
    });
    expect(parseCommand('PHASE', ` ${RUN} `)).toMatchObject({ ok: true, command: { runId: RUN } });
    for (const text of ['', 'not-a-run', `${RUN} extra`]) {
      const r = parseCommand('phase', text);
      expect(r, text).toMatchObject({ ok: false, failure: { verb: 'phase' } });
      if (!r.ok) expect(failureText(r.failure)).toContain('Usage: phase <run>');
    }
  });

  it('parses repair with an optional dry-run, and refuses anything else', () => {
    expect(parseCommand('repair', RUN)).toEqual({
      ok: true,
      command: { verb: 'repair', runId: RUN, dryRun: false },
    });
    for (const mode of ['dry-run', '--dry-run', 'DRY-RUN']) {
      expect(parseCommand('repair', `${RUN} ${mode}`)).toMatchObject({
        ok: true,
        command: { dryRun: true },
      });
    }
    for (const text of ['', 'not-a-run', `${RUN} now`, `${RUN} dry-run x`]) {
      expect(parseCommand('repair', text), text).toMatchObject({
        ok: false,
        failure: { verb: 'repair' },
      });
    }
  });

  it('checks allow roles and accepts any case', () => {
    expect(parseCommand('allow', 'telegram:42 Approver')).toEqual({
      ok: true,
      command: { verb: 'allow', user: 'telegram:42', role: 'approver' },
    });
    const r = parseCommand('allow', 'telegram:42 boss');
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(failureText(r.failure)).toMatch(
        /"boss" is not a role; roles: viewer, operator, approver, admin/,
      );
  });

  it('answers an unknown verb in one line, a typo with the likely verb first; maps aliases', () => {
    const r = parseCommand('frobnicate', '');
    expect(r).toMatchObject({ ok: false, failure: { problem: 'unknown command "frobnicate"' } });
    if (!r.ok)
      expect(failureText(r.failure)).toBe(
        'Unknown command "frobnicate". Send help for the list of commands.',
      );
    for (const [typo, verb] of [
      ['staus', 'status'],
      ['aprove', 'approve'],
      ['rnu', 'run'],
      ['lop', 'changes'],
    ]) {
      const t = parseCommand(typo!, '');
      expect(t.ok ? undefined : t.failure.suggestion, typo).toBe(verb);
      if (!t.ok)
        expect(failureText(t.failure).split('\n')).toEqual([
          `Did you mean ${verb}? (unknown command "${typo}")`,
          usageOf(verb as Verb),
        ]);
    }
    expect(parseCommand('xyzzy', '')).toMatchObject({
      ok: false,
      failure: { problem: 'unknown command "xyzzy"' },
    });
    const far = parseCommand('xyzzy', '');
    expect(far.ok ? 'parsed' : far.failure.suggestion).toBeUndefined();
    expect(parseCommand('start', '')).toEqual({ ok: true, command: { verb: 'help' } });
    expect(parseCommand('HELP', '/run')).toEqual({
      ok: true,
      command: { verb: 'help', topic: 'run' },
    });
  });

  it('has a usage line for every verb', () => {
    for (const verb of VERBS) expect(helpText()).toContain(USAGE[verb].usage);
  });
});
