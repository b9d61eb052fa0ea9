#!/usr/bin/env node
// `npm run mutate [-- --mutate a.ts,b.ts --name policy --tests 'test/x/*.test.ts']`: Stryker with
// stryker.config.json; `--name` keeps that subset's incremental results and reports apart
// (.cache/stryker/<name>.*); `--tests` runs only those test files (vitest.mutate.config.ts reads
// them from the environment the test runners inherit): a score with fewer tests is a floor.
// StrykerJS 10 declares Node >= 22 and its CLI refuses older; the project supports Node 20, where
// the mutation run itself works, so this starts Stryker's API without the CLI's version guard.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
const entry = path.join(root, 'node_modules/@stryker-mutator/core/dist/src/stryker.js');
const { Stryker } = await import(pathToFileURL(entry).href);

const args = process.argv.slice(2);
const options = {};
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--mutate') options.mutate = args[++i].split(',');
  else if (args[i] === '--no-incremental') options.incremental = false;
  else if (args[i] === '--tests') process.env.PHASEBRIDGE_MUTATE_TESTS = args[++i];
  else if (args[i] === '--name') {
    const name = args[++i];
    options.incrementalFile = `.cache/stryker/${name}.incremental.json`;
    options.jsonReporter = { fileName: `.cache/stryker/${name}.json` };
    options.htmlReporter = { fileName: `.cache/stryker/${name}.html` };
  } else {
    console.error(
      `mutate: unknown argument ${args[i]} (known: --mutate a.ts,b.ts, --name NAME, --tests a.test.ts,b.test.ts, --no-incremental)`,
    );
    process.exit(2);
  }
}
const results = await new Stryker(options).runMutationTest();
console.log(`mutate: ${results.length} mutants; report in .cache/stryker/ (html and json)`);
