/**
 * `npm run screens`: redraws the pictures in docs/screens/ from what the bridge really sends.
 * The whole bridge runs on the platform fakes (scripts/screens/capture.ts), each stored message is
 * drawn as its platform lays it out (render.ts) and photographed by headless chromium, beside the
 * console's own pages. Run it after changing how a message or a console page looks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { findChromium, launchChromium, missingChromiumBanner } from '../test/e2e/chromium.ts';
import { capture } from './screens/capture.ts';
import { renderPage } from './screens/render.ts';

const OUT = path.resolve(import.meta.dirname, '../docs/screens');

const chromiumPath = findChromium();
if (!chromiumPath) {
  process.stderr.write(missingChromiumBanner(true));
  process.exit(1);
}
fs.mkdirSync(OUT, { recursive: true });
const shot = await capture();
const browser = await launchChromium(chromiumPath);
const written: string[] = [];
try {
  const page = await browser.newPage({ viewport: { width: 640, height: 400 } });
  for (const [moment, list] of [
    ['checkpoint', shot.open],
    ['decided', shot.decided],
  ] as const) {
    for (const m of list) {
      await page.setContent(renderPage(m));
      const file = path.join(OUT, `${m.platform}-${moment}.png`);
      await page.locator('#shot').screenshot({ path: file });
      written.push(file);
    }
  }
  // The console as a person signed in through its link sees it, at the run's next checkpoint.
  await shot.world.message(shot.world.drivers[0]!, /Checkpoint review:1/);
  const web = await browser.newPage({ viewport: { width: 1100, height: 760 } });
  await web.goto(shot.world.bridge.loginUrl);
  await Promise.all([
    web.waitForURL((u) => u.search === ''),
    web.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  await web.locator('#conn', { hasText: 'live' }).waitFor({ timeout: 15_000 });
  await web.locator('#messages article.msg', { hasText: 'Checkpoint review:1' }).last().waitFor();
  written.push(path.join(OUT, 'console-chat.png'));
  await web.screenshot({ path: written.at(-1)! });
  await web.goto(new URL(`/runs/${shot.runId}`, web.url()).href);
  await web.locator('#checkpoint', { hasText: 'Checkpoint review:1' }).last().waitFor();
  written.push(path.join(OUT, 'console-run.png'));
  await web.screenshot({ path: written.at(-1)!, fullPage: true });
} finally {
  await browser.close();
  await shot.world.cleanup();
}
for (const f of written) console.log(`wrote ${path.relative(process.cwd(), f)}`);
process.exit(0);
