/**
 * `phasebridge audit [RUN] [--json]` (issue 29): what people did and said. With a run: every
 * word a human gave it (notes, Request changes reasons, approval comments, rejections, the words
 * it was cancelled with), who wrote each and where it went, then the bridge's audit rows about
 * the run. Without one: the newest audit rows. People are named as chat names them; `--json`
 * carries their ids too.
 */
import type { Command } from 'commander';
import { personName } from '../../engine/person-name.ts';
import type { RunWord } from '../../engine/run-words.ts';
import { InvalidInputError } from '../../errors.ts';
import type { CliContext } from '../context.ts';
import { readRun } from '../read-run.ts';
import { formatInstant } from '../render/format.ts';

const KIND: Readonly<Record<RunWord['kind'], string>> = {
  guidance: 'note',
  changes: 'changes requested',
  approval: 'approval comment',
  rejection: 'rejection',
  outcome: 'ended the run',
};

/** Where words went, in words. */
function whereWords(w: RunWord): string {
  if (w.to === undefined) return w.kind === 'rejection' ? 'the run failed with it' : 'the run';
  const moved = w.forwardedFrom
    ? ` (first kept for ${w.forwardedFrom.stepId}, attempt ${w.forwardedFrom.attempt})`
    : '';
  const state = w.delivered ? 'given to' : 'kept for';
  return `${state} ${w.to.stepId}, attempt ${w.to.attempt}${moved}`;
}

/** One line per word: when, who, what kind, where it went, the text. */
export function wordLines(words: readonly RunWord[]): string[] {
  return words.map((w) => {
    const at = w.checkpointId ? ` at ${w.checkpointId}` : '';
    const text = w.text.replace(/\r?\n/g, '\n    ');
    return `  ${formatInstant(w.at)} ${personName(w.by)}: ${KIND[w.kind]}${at} → ${whereWords(w)}: ${text}`;
  });
}

/** Registers `audit`. */
export function registerAuditCommand(program: Command, ctx: CliContext): void {
  program
    .command('audit')
    .description(
      "show what people said to a run (notes, reasons, comments: who, where it went) and the bridge's audit rows",
    )
    .argument('[run]', 'a run id; without it, the newest audit rows')
    .option('--limit <n>', 'at most this many audit rows (default 50)', '50')
    .option('--json', 'print as JSON (with the ids of the people)')
    .action(async (runId: string | undefined, opts: { limit: string; json?: boolean }) => {
      const limit = Number(opts.limit);
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) {
        throw new InvalidInputError(
          `--limit must be a whole number from 1 to 10000 (got '${opts.limit}')`,
        );
      }
      const repos = await ctx.repos();
      let words: RunWord[] | undefined;
      if (runId !== undefined) {
        const { state } = await readRun(ctx, runId);
        const { runWords } = await import('../../engine/run-words.ts');
        words = runWords(state);
      }
      const rows = await repos.audit.listRecent({
        limit,
        ...(runId !== undefined && { target: runId }),
      });
      const people = await repos.people.lookup(rows.map((r) => r.actor));
      const named = rows.map((r) => {
        const known = people.get(r.actor) ?? { id: r.actor };
        // A linked identity is named as its one person, whose id `--json` shows (issue 36).
        return {
          ...r,
          at: new Date(r.at).toISOString(),
          actorName: personName(known),
          ...(known.person !== undefined && { person: known.person }),
        };
      });
      if (opts.json) {
        const out = runId === undefined ? { audit: named } : { run: runId, words, audit: named };
        console.log(JSON.stringify(out, null, 2));
        return;
      }
      const lines: string[] = [];
      if (words !== undefined) {
        lines.push(`words people gave run ${runId} (oldest first)`);
        lines.push(...(words.length > 0 ? wordLines(words) : ['  none']));
        lines.push('');
      }
      lines.push(
        runId === undefined ? 'audit (newest first)' : `audit of run ${runId} (newest first)`,
      );
      if (named.length === 0) lines.push('  none');
      for (const r of named) {
        const about = r.target && runId === undefined ? ` ${r.target}` : '';
        const detail = r.detail ? `: ${r.detail}` : '';
        lines.push(
          `  ${formatInstant(r.at)} ${r.actorName} ${r.action}${about} ${r.outcome}${detail}`,
        );
      }
      for (const line of lines) console.log(line);
    });
}
