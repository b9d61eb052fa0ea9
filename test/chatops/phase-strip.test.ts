/** The phase strip of a pabcd run's status message and the text of chat `phase <run>`. */
import { describe, expect, it } from 'vitest';
import { phaseHistory, phaseStrip } from '../../src/chatops/phase-strip.ts';
import { renderStatus } from '../../src/chatops/status-message.ts';
import { PASS, PabcdDriver } from '../engine/pabcd/support.ts';

const textOf = (m: ReturnType<typeof renderStatus>) =>
  typeof m.text === 'string' ? m.text : JSON.stringify(m.text);

describe('phase strip', () => {
  it('marks the current phase, shows the gates and the time in phase', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('build');
    const now = Date.parse(d.run.pabcd!.since) + 90_000;
    expect(phaseStrip(d.run, now)).toMatch(
      /^I · P · A · \[B\] · C · D {2}\(in B 1\D+30\D*; gates: interview ✓, audit ✓, check ✗\)$/,
    );
    expect(textOf(renderStatus(d.run, now))).toContain('I · P · A · [B] · C · D');
  });

  it('the status message changes with every phase change', async () => {
    const d = new PabcdDriver();
    await d.start();
    const seen = new Set<string>();
    while (d.current !== 'done') {
      const strip = phaseStrip(d.run, Date.parse(d.run.updatedAt))!;
      seen.add(strip.split('  ')[0]!);
      await d.finish(PASS[d.current]);
    }
    expect([...seen]).toEqual([
      '[I] · P · A · B · C · D',
      'I · [P] · A · B · C · D',
      'I · P · [A] · B · C · D',
      'I · P · A · [B] · C · D',
      'I · P · A · B · [C] · D',
    ]);
  });

  it('phase <run> lists every move with who and why', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('audit');
    for (let i = 0; i < 4; i++) await d.finish({ did: 'x y', auditOutput: 'no', verdict: 'fail' });
    await d.ok({ type: 'answerCheckpoint', answer: 'approve', reason: 'audited by hand' });
    const text = phaseHistory(d.run, Date.parse(d.run.updatedAt));
    expect(text.split('\n').slice(3)).toEqual([
      '2026-03-04 05:06:00 IDLE → I · chat by Alice',
      '2026-03-04 05:06:02 I → P · orchestrate by the agent · “listed 4 requirements”',
      '2026-03-04 05:06:04 P → A · orchestrate by the agent · “plan with files and acceptance criteria”',
      '2026-03-04 05:06:13 A → B · chat by Alice · override · “audited by hand”',
    ]);
  });
});
