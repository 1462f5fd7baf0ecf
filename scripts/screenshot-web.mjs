#!/usr/bin/env node
// docs/web-overview.png: the dashboard's overview with three demo agents in three states (busy on a
// job, waiting for a person on a permission question, done), in Debian's Chromium at 1280 pixels.
// Usage: npm run build && node scripts/screenshot-web.mjs [out=docs/web-overview.png]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoWorld, launchBrowser, waitState, webLogin } from './web-browser.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.resolve(process.argv[2] ?? path.join(repo, 'docs', 'web-overview.png'));

const { api, end } = await demoWorld(
  'web-shot',
  [
    { name: 'planner', profile: 'demo' },
    { name: 'coder', profile: 'demo-slow' },
    { name: 'reviewer', profile: 'demo' },
  ],
  // Busy for long enough to be photographed.
  { 'demo-slow': ['--think-ms', '120000', '--replies', 'work'] },
);
let browser;
try {
  const brief = 'Plan a small command-line tool that counts the words in a file';
  const planned = await api.call('POST', '/v1/jobs', { target: 'planner', text: brief, name: 'plan the word counter' });
  await api.call('GET', `/v1/jobs/${planned.id}/wait?timeout=60`);
  await waitState(api, 'planner', 'done,idle');
  await api.call('POST', '/v1/jobs', { target: 'coder', text: 'Write bin/count-words.js as the plan says', name: 'write count-words.js' });
  await api.call('POST', '/v1/jobs', { target: 'coder', text: 'Add a test for an empty file', name: 'test the empty file' });
  await waitState(api, 'coder', 'busy');
  await api.call('POST', '/v1/terminals/reviewer/input', { text: '/menu' });
  await waitState(api, 'reviewer', 'waiting_input');

  browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1280, height: 520 }, deviceScaleFactor: 1 });
  const { url } = await webLogin(api);
  await page.goto(url);
  for (const [agent, state] of [
    ['planner', 'done'],
    ['coder', 'busy'],
    ['reviewer', 'waiting_input'],
  ]) {
    await page.locator(`article.card[data-agent="${agent}"][data-state="${state}"]`).waitFor({ timeout: 30_000 });
  }
  await page.locator('article.card[data-agent="reviewer"] .question button').first().waitFor();
  await page.locator('.live.on').waitFor();
  // The cards' times in state, as they are a few seconds in.
  await page.waitForFunction("[...document.querySelectorAll('.elapsed')].every((e) => /\\d/.test(e.textContent))");
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
} finally {
  await browser?.close();
  await end();
}
