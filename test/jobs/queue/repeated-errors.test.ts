/**
 * An outage's connection errors: the first of each kind is reported, its repeats are counted and
 * reported once a minute with their number (a Redis outage used to log several lines a second).
 */
import { expect, it } from 'vitest';
import { quietRepeats } from '../../../src/jobs/queue/repeated-errors.ts';

function reporter() {
  const lines: string[] = [];
  let t = 0;
  const report = quietRepeats(
    (err, context) => lines.push(`${context}: ${(err as Error).message}`),
    60_000,
    () => t,
  );
  return { lines, report, advance: (ms: number) => (t += ms) };
}

const refused = () => new Error('connect ECONNREFUSED 127.0.0.1:6379');

it('reports the first error of a kind, then its repeats once a minute with their count', () => {
  const { lines, report, advance } = reporter();
  for (let i = 0; i < 30; i++) {
    report(refused(), 'bullmq worker');
    advance(1_000);
  }
  expect(lines).toEqual(['bullmq worker: connect ECONNREFUSED 127.0.0.1:6379']);
  advance(30_000);
  report(refused(), 'bullmq worker');
  expect(lines).toEqual([
    'bullmq worker: connect ECONNREFUSED 127.0.0.1:6379',
    'bullmq worker: connect ECONNREFUSED 127.0.0.1:6379 (and 29 times more in the last 60 s)',
  ]);
});

it('another message or another connection is its own kind, reported at once', () => {
  const { lines, report } = reporter();
  report(refused(), 'bullmq worker');
  report(refused(), 'bullmq queue');
  report(new Error('Command timed out'), 'bullmq worker');
  report(refused(), 'bullmq worker');
  expect(lines).toEqual([
    'bullmq worker: connect ECONNREFUSED 127.0.0.1:6379',
    'bullmq queue: connect ECONNREFUSED 127.0.0.1:6379',
    'bullmq worker: Command timed out',
  ]);
});

it('an error seen once a minute ago or longer is reported as it comes, with no count', () => {
  const { lines, report, advance } = reporter();
  report(refused(), 'bullmq queue');
  advance(60_000);
  report(refused(), 'bullmq queue');
  expect(lines).toEqual([
    'bullmq queue: connect ECONNREFUSED 127.0.0.1:6379',
    'bullmq queue: connect ECONNREFUSED 127.0.0.1:6379',
  ]);
});
