#!/usr/bin/env node
// The dashboard's page (issue 29) in Debian's Chromium. Prints figures; asserts nothing.
//
// 1. Event to card: 10 demo agents each given jobs (they go busy, done, idle...). Every `state` event is
//    timed where this process reads it on `GET /v1/events` (the unix socket), and again where the
//    page's card for that agent takes it: the card's `data-event` attribute changes (a MutationObserver,
//    the DOM changed) and the frame after it (requestAnimationFrame, drawn). Both clocks are the wall
//    clock's (performance.timeOrigin + now()), on one machine. Latency = page time - this process's.
//    Beside it, both readers against the event's own `at` (the supervisor's clock when it published
//    it, in whole ms): what the reference itself lags by on a loaded machine.
// 2. First load: the bytes the browser took for the page itself (index.html and its assets, compressed
//    as sent), from the Resource Timing entries of a fresh browser; and the API's JSON it read at load.
//
// Usage: npm run build && node scripts/bench-web.mjs [jobsPerAgent=20] [agents=10] [thinkMs=300]
import { pct, load } from './bench-lib.mjs';
import { demoWorld, launchBrowser, webLogin } from './web-browser.mjs';

const [JOBS = 20, AGENTS = 10, THINK_MS = 300] = process.argv.slice(2).map(Number);
const names = Array.from({ length: AGENTS }, (_, i) => `agent${String(i + 1).padStart(2, '0')}`);
const now = () => performance.timeOrigin + performance.now();
const f = (x) => (x === undefined ? '-' : `${x.toFixed(1)} ms`);

const { api, end } = await demoWorld(
  'web',
  names.map((name) => ({ name, profile: 'demo-fast' })),
  { 'demo-fast': ['--think-ms', String(THINK_MS), '--replies', 'work'] },
);
const stream = new AbortController();
let browser;
try {
  // This process's view of the event stream.
  const seen = new Map();
  const events = api.events('/v1/events?types=state', (e) => seen.set(e.id, { t: now(), at: Date.parse(e.at) }), { signal: stream.signal });
  events.catch(() => {});

  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const { url } = await webLogin(api);
  await page.goto(url);
  for (const n of names) await page.locator(`article.card[data-agent="${n}"]`).waitFor({ timeout: 30_000 });
  await page.locator('.live.on').waitFor();
  // Settle: the lists the page reads at load have come back.
  await page.waitForLoadState('networkidle');

  const first = await page.evaluate(`(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const res = performance.getEntriesByType('resource');
    const assets = res.filter((r) => new URL(r.name).pathname.startsWith('/assets/'));
    const apis = res.filter((r) => new URL(r.name).pathname.startsWith('/v1/') && !/events|stream/.test(r.name));
    const sum = (xs, k) => xs.reduce((a, r) => a + r[k], 0);
    return {
      page: { files: 1 + assets.length, encoded: nav.encodedBodySize + sum(assets, 'encodedBodySize'), decoded: nav.decodedBodySize + sum(assets, 'decodedBodySize'), transfer: nav.transferSize + sum(assets, 'transferSize') },
      api: { requests: apis.length, encoded: sum(apis, 'encodedBodySize') },
    };
  })()`);

  // Every card change, with the event that made it: its time in the DOM and at the next frame.
  await page.evaluate(`{
    // The page's main thread busy for 50 ms or more at a time (its own work, or the machine's CPU taken).
    window.longTasks = [];
    new PerformanceObserver((l) => window.longTasks.push(...l.getEntries().map((e) => e.duration))).observe({ type: 'longtask' });
    window.cardTimes = [];
    const stamp = () => performance.timeOrigin + performance.now();
    new MutationObserver((records) => {
      const t = stamp();
      const ids = [];
      // Each record's new value is the next record's old one (for the same card), or the card's value now.
      records.forEach((r, i) => {
        const next = records.slice(i + 1).find((x) => x.target === r.target);
        const id = next ? next.oldValue : r.target.getAttribute('data-event');
        if (id) ids.push(id);
      });
      requestAnimationFrame(() => {
        const drawn = stamp();
        for (const id of ids) window.cardTimes.push([Number(id), t, drawn]);
      });
    }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-event'], attributeOldValue: true });
  }`);

  const startId = Math.max(0, ...seen.keys());
  const jobs = [];
  for (let round = 0; round < JOBS; round++) {
    for (const n of names) jobs.push(await api.call('POST', '/v1/jobs', { target: n, text: `round ${round}: count the words in README.md` }));
  }
  for (const j of jobs) await api.call('GET', `/v1/jobs/${j.id}/wait?timeout=300`);
  // The last events' cards.
  const last = Math.max(...seen.keys());
  await page.waitForFunction(`window.cardTimes.some(([id]) => id >= ${last})`, null, { timeout: 10_000 }).catch(() => {});

  const cardTimes = await page.evaluate('window.cardTimes');
  const longTasks = await page.evaluate('window.longTasks');
  const byId = new Map(cardTimes.map(([id, dom, drawn]) => [id, { dom, drawn }]));
  const dom = [];
  const drawn = [];
  const nodeLag = [];
  const pageLag = [];
  let missing = 0;
  for (const [id, e] of seen) {
    if (id <= startId) continue;
    const c = byId.get(id);
    if (!c) {
      missing++;
      continue;
    }
    dom.push(c.dom - e.t);
    drawn.push(c.drawn - e.t);
    nodeLag.push(e.t - e.at);
    pageLag.push(c.dom - e.at);
  }
  for (const xs of [dom, drawn, nodeLag, pageLag]) xs.sort((a, b) => a - b);

  console.log(`bench-web: ${AGENTS} agents, ${jobs.length} jobs (think ${THINK_MS} ms), load ${load()}`);
  console.log(`event on /v1/events -> card changed, ${dom.length} state events (${missing} never reached a card):`);
  console.log(`  DOM    p50 ${f(pct(dom, 50))}  p90 ${f(pct(dom, 90))}  p99 ${f(pct(dom, 99))}  max ${f(dom.at(-1))}  min ${f(dom[0])}`);
  console.log(`  drawn  p50 ${f(pct(drawn, 50))}  p90 ${f(pct(drawn, 90))}  p99 ${f(pct(drawn, 99))}  max ${f(drawn.at(-1))}`);
  console.log(
    `from the event's own time (published, ms): this reader p50 ${f(pct(nodeLag, 50))} p99 ${f(pct(nodeLag, 99))}; the card (DOM) p50 ${f(pct(pageLag, 50))} p99 ${f(pct(pageLag, 99))}`,
  );
  console.log(`the page's long tasks (>= 50 ms) meanwhile: ${longTasks.length}${longTasks.length ? `, longest ${f(Math.max(...longTasks))}` : ''}`);
  const kb = (b) => `${(b / 1024).toFixed(1)} KB`;
  console.log(
    `first load: page ${first.page.files} files, ${kb(first.page.encoded)} compressed (${kb(first.page.decoded)} uncompressed, ${kb(first.page.transfer)} with headers); API ${first.api.requests} requests, ${kb(first.api.encoded)}`,
  );
} finally {
  stream.abort();
  await browser?.close();
  await end();
}
