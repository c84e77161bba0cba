// Replays a Chrome DevTools Recorder file with @puppeteer/replay in a
// headless Chromium (puppeteer-core, the test's own browser) and prints
// the text of #summary on the last page. Used by e2e::recording and
// e2e::recorder_files.
// Usage: node replay-check.mjs FLOW.json CHROMIUM
import { readFileSync } from 'node:fs';
import { createRunner, PuppeteerRunnerExtension } from '@puppeteer/replay';
import puppeteer from 'puppeteer-core';

const [flowFile, chromium] = process.argv.slice(2);
const flow = JSON.parse(readFileSync(flowFile, 'utf8'));
const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage();
  const runner = await createRunner(flow, new PuppeteerRunnerExtension(browser, page, { timeout: 10000 }));
  await runner.run();
  // The flow's last click navigates and nothing follows it to wait on.
  await new Promise((r) => setTimeout(r, 1000));
  await page.waitForFunction(() => document.readyState === 'complete', { timeout: 10000 });
  const [summary, size] = await page.evaluate(() =>
    ['summary', 'size-chosen'].map((id) => document.getElementById(id)?.textContent ?? ''));
  console.log(JSON.stringify({ url: page.url(), summary, size }));
} finally {
  await browser.close();
}
