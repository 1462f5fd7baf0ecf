// The web dashboard (issue 29) in a real Chromium, against a real supervisor on a private tmux server
// with two demo agents: log in with the one-time token, see both cards, assign a job and watch its card
// go busy then done with no reload, read the demo agent's reply in the xterm buffer, answer a waiting
// question with a button, and get 401 without the login on every route.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TerminalView } from '../../src/api/types.js';
import { packageRoot } from '../../src/package-root.js';
import { api, raw } from '../helpers/api.js';
import type { Rig } from '../helpers/rig.js';
import { chromiumBuilds, launchBrowser } from './browser.js';
import { POLL, QUESTION, cardSelector, dashboardWorld, login as webLogin, replyLine, watchCard } from './dashboard-world.js';

// Every Chromium found (Debian's and the releases scripts/install-browsers.sh caches), each in its own
// world, at 1280 and 390 pixels; one that is missing is skipped with the reason in its name.
for (const build of chromiumBuilds()) {
  describe.skipIf(build.missing !== null)(`the web dashboard in ${build.name}${build.missing ? ` (skipped: ${build.missing})` : ''}`, () => {
    let rig: Rig;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let base: URL;

    const login = () => webLogin(rig);
    const card = (agent: string, state?: string) => page.locator(cardSelector(agent, state));

    beforeAll(async () => {
      rig = await dashboardWorld();
      browser = await launchBrowser(build.executablePath);
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
      page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    });

    afterAll(async () => {
      await browser?.close();
      await rig?.cleanup();
    });

    it('logs in with the token: an HttpOnly session cookie, then the overview with both demo agents', async () => {
      if (build.major) expect(browser.version()).toMatch(new RegExp(`^${build.major}\\.`));
      const l = await login();
      base = new URL(l.url);
      expect(base.pathname).toBe('/login');
      const res = await page.goto(l.url);
      expect(res?.status()).toBe(200);
      expect(new URL(page.url()).pathname).toBe('/');
      const cookies = await context.cookies();
      expect(cookies.find((c) => c.name.startsWith('jaggers_web'))).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
      await expect.poll(() => card('alice').count(), POLL).toBe(1);
      await expect.poll(() => card('bob').count(), POLL).toBe(1);
      await card('alice', 'idle').waitFor();
      await expect.poll(() => page.locator('.live').textContent(), POLL).toBe('live');
      // The token was for one login only.
      const again = await raw({ host: base.hostname, port: Number(base.port) }, 'GET', `/login?token=${encodeURIComponent(l.token)}`);
      expect(again.status).toBe(401);
    });

    it('assigns a job from the form and the card goes busy, then done, with no reload', async () => {
      await page.evaluate(watchCard('alice'));
      await page.getByRole('link', { name: 'Work' }).click();
      const form = page.getByRole('form', { name: 'Assign a job' });
      // The API's own error text for a bad target, shown as it is.
      await form.getByLabel('Agent').fill('nobody');
      await form.getByLabel('Prompt').fill('count the words in README.md');
      await form.getByRole('button', { name: 'Assign a job' }).click();
      await expect.poll(() => form.getByRole('alert').textContent(), POLL).toMatch(/nobody/);

      await form.getByLabel('Agent').fill('alice');
      await form.getByLabel('Prompt').fill('count the words in README.md');
      await form.getByRole('button', { name: 'Assign a job' }).click();
      await expect.poll(() => form.getByRole('status').textContent(), POLL).toMatch(/^job j-[0-9a-f]+ recorded/);
      const job = /job (j-[0-9a-f]+)/.exec((await form.getByRole('status').textContent()) ?? '')![1]!;
      await page.locator(`tr[data-job="${job}"] [data-job-state="running"]`).waitFor({ timeout: 30_000 });
      await page.getByRole('link', { name: 'Agents', exact: true }).click();
      await card('alice', 'done').waitFor({ timeout: 30_000 });
      const states = await page.evaluate<string[]>('window.aliceStates');
      expect(states.indexOf('busy'), states.join(' -> ')).toBeGreaterThan(0);
      expect(states.indexOf('done'), states.join(' -> ')).toBeGreaterThan(states.indexOf('busy'));
      expect(await page.evaluate('window.notReloaded')).toBe(true);
    });

    it("opens alice's terminal: the demo agent's reply is in the xterm buffer; typing is off until switched on", async () => {
      const jobs = await api(rig).call<{ id: string; agent: string | null; state: string }[]>('GET', '/v1/jobs');
      const firstLine = await replyLine(rig, jobs.find((j) => j.agent === 'alice')!.id);

      await card('alice').getByRole('link', { name: 'alice' }).click();
      expect(new URL(page.url()).hash).toBe('#/terminal/alice');
      const text = () => page.evaluate<string | null>('window.jaggers.terminalText()');
      await expect.poll(text, { timeout: 15_000 }).toContain(firstLine.slice(0, 40));
      // Live: a reply that comes while the terminal is open arrives as the pane's output.
      const live = await api(rig).call<{ id: string }>('POST', '/v1/jobs', { target: 'alice', text: 'plan a tool that prints the date in ISO format' });
      const liveReply = await replyLine(rig, live.id);
      await expect.poll(text, { timeout: 15_000 }).toContain(liveReply.slice(0, 40));
      // At the pane's own size, whatever the page's width.
      const pane = await api(rig).call<TerminalView>('GET', '/v1/terminals/alice');
      const size = (await rig.tmux(['display-message', '-p', '-t', pane.pane, '#{pane_width}x#{pane_height}'])).trim();
      await expect.poll(() => page.locator('.term-status').textContent(), POLL).toContain(size.replace('x', '×'));

      const typing = page.getByRole('switch');
      expect(await typing.isChecked()).toBe(false);
      await page.locator('.xterm').click();
      await page.keyboard.type('zzqq');
      // Nothing went to the pane while typing is off...
      await typing.check();
      expect(await page.locator('.switch').textContent()).toBe('Typing: on');
      await page.locator('.xterm').click();
      await page.keyboard.type('hello from the page');
      // ...and what is typed with it on reaches the agent's editor.
      const screen = await rig.waitForScreen('alice', /hello from the page/);
      expect(screen).not.toContain('zzqq');
      for (let i = 0; i < 'hello from the page'.length; i++) await page.keyboard.press('Backspace');
      await rig.waitForScreen('alice', /^(?![\s\S]*hello from the page)/);
      await typing.uncheck();
      // The tmux window keeps its size: the page never resizes it.
      await page.setViewportSize({ width: 390, height: 800 });
      expect((await rig.tmux(['display-message', '-p', '-t', pane.pane, '#{pane_width}x#{pane_height}'])).trim()).toBe(size);
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    it("shows a pane's colours: the snapshot's red text is drawn red", async () => {
      await page.goto(new URL('/#/terminal/carol', base).href);
      const red = page.locator('.xterm-rows span.xterm-fg-1', { hasText: 'red text' });
      await red.waitFor({ timeout: 15_000 });
      expect(await page.locator('.xterm-rows span.xterm-fg-1', { hasText: 'plain' }).count()).toBe(0);
    });

    it('answers a waiting question with its button', async () => {
      await page.getByRole('link', { name: 'Agents', exact: true }).click();
      await api(rig).call('POST', '/v1/terminals/bob/input', { text: QUESTION.input });
      await card('bob', 'waiting_input').waitFor({ timeout: 20_000 });
      const button = card('bob').getByRole('button', { name: QUESTION.button });
      await button.waitFor();
      expect(await card('bob').locator('.question .q').textContent()).toMatch(QUESTION.text);
      await button.click();
      await rig.waitForScreen('bob', QUESTION.done);
      await expect.poll(() => card('bob').getAttribute('data-state'), { timeout: 20_000 }).not.toBe('waiting_input');
      expect(await card('bob').locator('.question').count()).toBe(0);
    });

    it("the work page: a message in bob's inbox, a workflow from its form, its turn's prompt and reply, the API's own errors", async () => {
      await page.getByRole('link', { name: 'Work', exact: true }).click();
      const message = page.getByRole('form', { name: 'Send a message' });
      await message.getByLabel('To').fill('bob');
      await message.getByLabel('Message').fill('the page says hello');
      await message.getByRole('button', { name: 'Send a message' }).click();
      await expect.poll(() => message.getByRole('status').textContent(), POLL).toMatch(/^message m-[0-9a-f]+ sent$/);
      const sent = /(m-[0-9a-f]+)/.exec((await message.getByRole('status').textContent()) ?? '')![1]!;
      await page.locator('#inbox-agent').selectOption('bob');
      await page.locator('#inbox').getByText(sent, { exact: true }).waitFor();

      const workflow = page.getByRole('form', { name: 'Start a workflow' });
      await workflow.getByLabel('Workflow').fill('no-such-workflow');
      await workflow.getByLabel('Task').fill('plan a tool that prints the date');
      await workflow.getByRole('button', { name: 'Start a workflow' }).click();
      const refused = await api(rig)
        .call('POST', '/v1/tasks', { workflow: 'no-such-workflow', text: 'x' })
        .then(
          () => '',
          (e: Error) => e.message,
        );
      expect(refused).toMatch(/no-such-workflow/);
      await expect.poll(() => workflow.getByRole('alert').textContent(), POLL).toBe(refused.replace(/^jaggers: /, ''));

      await workflow.getByLabel('Workflow').fill('handoff');
      await workflow.getByLabel('Task').fill('plan a tool that prints the date');
      await workflow.getByLabel(/^Agents/).fill('bob');
      await workflow.getByRole('button', { name: 'Start a workflow' }).click();
      await expect.poll(() => workflow.getByRole('status').textContent(), POLL).toMatch(/^task t-[0-9a-f]+ started/);
      const task = /(t-[0-9a-f]+)/.exec((await workflow.getByRole('status').textContent()) ?? '')![1]!;
      const done = await api(rig).call<{ status: string; turns: { seq: number }[] }>('GET', `/v1/tasks/${task}/wait?timeout=60`);
      expect(done.status).toBe('done');
      const seq = done.turns[0]!.seq;
      const reply = await api(rig).call<{ text: string }>('GET', `/v1/tasks/${task}/turns/${seq}/reply`);

      const row = page.locator(`details.task[data-task="${task}"]`);
      await row.locator('summary').click();
      await expect.poll(() => row.locator('summary .pill').textContent(), { timeout: 15_000 }).toBe('done');
      const turn = row.locator(`li[data-turn="${seq}"]`);
      await turn.locator('summary', { hasText: 'prompt' }).click();
      await expect.poll(() => turn.locator('pre').first().textContent(), POLL).toContain('plan a tool that prints the date');
      await turn.locator('summary', { hasText: 'reply' }).click();
      await expect.poll(() => turn.locator('pre').nth(1).textContent(), POLL).toBe(reply.text);

      // A task that runs is cancelled from its button.
      const running = await api(rig).call<{ id: string }>('POST', '/v1/tasks', { workflow: 'handoff', text: 'plan a long tool', agents: ['alice'] });
      const slow = page.locator(`details.task[data-task="${running.id}"]`);
      await slow.locator('summary').click();
      await slow.getByRole('button', { name: `Cancel task ${running.id}` }).click();
      await expect.poll(async () => (await api(rig).call<{ status: string }>('GET', `/v1/tasks/${running.id}`)).status, POLL).toBe('cancelled');
      await expect.poll(() => page.locator(`details.task[data-task="${running.id}"] summary .pill`).textContent(), POLL).toBe('cancelled');
    });

    it('fits a phone: one column of cards at 390 pixels, nothing wider than the screen, usable with the keyboard', async () => {
      await page.setViewportSize({ width: 390, height: 800 });
      await page.goto(new URL('/#/', base).href);
      await card('bob').waitFor();
      const boxes = await Promise.all(['alice', 'bob'].map((a) => card(a).boundingBox()));
      expect(boxes[0]!.x).toBe(boxes[1]!.x);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      for (const view of ['#/work', '#/terminal/bob']) {
        await page.goto(new URL(`/${view}`, base).href);
        await page.locator('main > section').waitFor();
        expect(await page.evaluate<number>('document.documentElement.scrollWidth'), view).toBeLessThanOrEqual(390);
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      // From the top of the page, Tab reaches the first agent's link and Enter opens its terminal.
      await page.goto(new URL('/#/', base).href);
      await card('alice').waitFor();
      for (let i = 0; i < 10; i++) {
        await page.keyboard.press('Tab');
        if ((await page.evaluate('document.activeElement?.textContent')) === 'alice') break;
      }
      await page.keyboard.press('Enter');
      await page.waitForURL(/#\/terminal\/alice$/);
    });

    it('answers 401 without the login on every route: the page, its assets, the API, the streams, a used token', async () => {
      const target = { host: base.hostname, port: Number(base.port) };
      const assets = await readdir(path.join(packageRoot, 'dist', 'web', 'assets'));
      const routes: [string, string, string?][] = [
        ['GET', '/'],
        ['GET', '/index.html'],
        ...assets.map((a): [string, string] => ['GET', `/assets/${a}`]),
        ['GET', '/v1/health'],
        ['GET', '/v1/terminals'],
        ['GET', '/v1/terminals/alice/screen'],
        ['GET', '/v1/events'],
        ['GET', '/v1/terminals/alice/stream'],
        ['GET', '/v1/jobs'],
        ['GET', '/v1/tasks'],
        ['GET', '/v1/flows'],
        ['GET', '/v1/terminals/alice/inbox'],
        ['POST', '/v1/jobs', JSON.stringify({ target: 'alice', text: 'x' })],
        ['POST', '/v1/messages', JSON.stringify({ to: 'alice', text: 'x' })],
        ['POST', '/v1/terminals/alice/keys', JSON.stringify({ data: 'x' })],
        ['POST', '/v1/terminals/alice/answer', JSON.stringify({ choice: '1' })],
        ['GET', '/login'],
        ['GET', '/login?token=not-a-token'],
        ['GET', '/no-such-page'],
      ];
      for (const [method, url, body] of routes) {
        const r = await raw(target, method, url, body, { cookie: 'jaggers_web=forged' });
        expect(r.status, `${method} ${url}`).toBe(401);
        if (url.startsWith('/v1/')) expect(r.json().error?.code, `${method} ${url}`).toMatch(/^E_/);
      }
      // A browser of its own, with no cookie: the page does not load.
      const other = await browser.newContext();
      const p = await other.newPage();
      const res = await p.goto(new URL('/', base).href);
      expect(res?.status()).toBe(401);
      await other.close();
    });
  });
}
