// The web dashboard (issue 29) in a real Firefox, in the same world as the Chromium test
// (dashboard.test.ts): log in with the one-time token, see both demo agents' cards, assign a job through
// the page's form and watch its card go busy then done with no reload, read the demo agent's replies in
// the xterm buffer (one already on screen, one streamed while it is open), and answer a waiting question
// with its button; and at 390 pixels, one column of cards and no page wider than the screen, with the
// agent's tmux window at its own size, and the keyboard alone opening a terminal. Debian's firefox-esr,
// driven by puppeteer-core over WebDriver BiDi; one launch for the file.
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TerminalView } from '../../src/api/types.js';
import { api } from '../helpers/api.js';
import type { Rig } from '../helpers/rig.js';
import { FIREFOX_SIZE, PHONE, launchFirefox, noFirefox, setFirefoxViewport } from './browser.js';
import { POLL, QUESTION, cardSelector, dashboardWorld, login, replyLine, watchCard } from './dashboard-world.js';

const why = noFirefox();

describe.skipIf(why !== null)(`the web dashboard in Firefox${why ? ` (skipped: ${why})` : ''}`, () => {
  let rig: Rig;
  let browser: Browser;
  let page: Page;
  /** The page's address. */
  let base: URL;
  /** The job assigned from the form. */
  let job: string;
  /** What the page threw, uncaught: nothing, in every test. */
  const errors: string[] = [];

  /** Code run in the page is written as text: the tests are type-checked without the DOM's types. */
  const inPage = <T>(code: string): Promise<T> => page.evaluate(code) as Promise<T>;
  const text = (selector: string) => inPage<string | null>(`document.querySelector(${JSON.stringify(selector)})?.textContent ?? null`);
  const waitFor = async (selector: string, timeout = POLL.timeout) => (await page.waitForSelector(selector, { timeout }))!;
  // Not puppeteer's locators nor waitForFunction: they build functions in the page with `new Function`,
  // which the page's Content-Security-Policy forbids (Chromium lets CDP past it; Firefox's BiDi does not).
  const click = async (selector: string) => (await waitFor(selector)).click();
  /** Types into an empty field, as a person does. */
  const type = async (selector: string, value: string) => (await waitFor(selector)).type(value);
  /** An element by its role and accessible name (`getByRole`), as the browser's accessibility tree has it. */
  const role = (r: string, name: string, within = '') => `${within} ::-p-aria([name="${name}"][role="${r}"])`.trim();

  beforeAll(async () => {
    rig = await dashboardWorld();
    browser = await launchFirefox();
    page = (await browser.pages())[0] ?? (await browser.newPage());
    page.on('pageerror', (e) => errors.push(e instanceof Error ? e.message : String(e)));
  });

  afterAll(async () => {
    await browser?.close();
    await rig?.cleanup();
  });

  it('logs in with the token: an HttpOnly session cookie, then the overview with both demo agents', async () => {
    expect(await browser.version()).toMatch(/^firefox\/\d+/);
    expect(await inPage<number>('window.innerWidth')).toBe(FIREFOX_SIZE.width);
    const l = await login(rig);
    base = new URL(l.url);
    const res = await page.goto(l.url);
    expect(res?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/');
    const cookies = await browser.cookies();
    expect(cookies.find((c) => c.name.startsWith('jaggers_web'))).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    await waitFor(cardSelector('alice', 'idle'));
    await waitFor(cardSelector('bob'));
    await expect.poll(() => text('.live'), POLL).toBe('live');
    expect(errors).toEqual([]);
  });

  it('assigns a job from the form and the card goes busy, then done, with no reload', async () => {
    await inPage(watchCard('alice'));
    await click(role('link', 'Work'));
    const form = role('form', 'Assign a job');
    // (An input with a list of suggestions is a combobox.)
    await type(role('combobox', 'Agent', form), 'alice');
    await type(role('textbox', 'Prompt', form), 'count the words in README.md');
    await click(role('button', 'Assign a job', form));
    await expect.poll(() => text('#form-assign [role="status"]'), POLL).toMatch(/^job j-[0-9a-f]+ recorded/);
    job = /job (j-[0-9a-f]+)/.exec((await text('#form-assign [role="status"]')) ?? '')![1]!;
    await waitFor(`tr[data-job="${job}"] [data-job-state="running"]`, 30_000);
    await click(role('link', 'Agents'));
    await waitFor(cardSelector('alice', 'done'), 30_000);
    const states = await inPage<string[]>('window.aliceStates');
    expect(states.indexOf('busy'), states.join(' -> ')).toBeGreaterThan(0);
    expect(states.indexOf('done'), states.join(' -> ')).toBeGreaterThan(states.indexOf('busy'));
    expect(await inPage('window.notReloaded')).toBe(true);
    expect(errors).toEqual([]);
  });

  it("opens alice's terminal: the demo agent's replies are in the xterm buffer, the one on screen and one streamed", async () => {
    const firstLine = await replyLine(rig, job);
    await click(role('link', 'alice', cardSelector('alice')));
    await expect.poll(() => new URL(page.url()).hash, POLL).toBe('#/terminal/alice');
    const buffer = () => inPage<string | null>('window.jaggers.terminalText()');
    await expect.poll(buffer, POLL).toContain(firstLine.slice(0, 40));
    const live = await api(rig).call<{ id: string }>('POST', '/v1/jobs', { target: 'alice', text: 'plan a tool that prints the date in ISO format' });
    const liveReply = await replyLine(rig, live.id);
    await expect.poll(buffer, POLL).toContain(liveReply.slice(0, 40));
    // At the pane's own size, whatever the page's width: a phone's page does not resize the tmux window.
    const pane = await api(rig).call<TerminalView>('GET', '/v1/terminals/alice');
    const paneSize = async () => (await rig.tmux(['display-message', '-p', '-t', pane.pane, '#{pane_width}x#{pane_height}'])).trim();
    const size = await paneSize();
    await expect.poll(() => text('.term-status'), POLL).toContain(size.replace('x', '×'));
    await setFirefoxViewport(page, PHONE);
    expect(await inPage<number>('window.innerWidth')).toBe(PHONE.width);
    expect(await paneSize()).toBe(size);
    await setFirefoxViewport(page, null);
    expect(errors).toEqual([]);
  });

  it('answers a waiting question with its button', async () => {
    await click(role('link', 'Agents'));
    await waitFor(cardSelector('bob'));
    await api(rig).call('POST', '/v1/terminals/bob/input', { text: QUESTION.input });
    await waitFor(cardSelector('bob', 'waiting_input'), 20_000);
    const button = role('button', QUESTION.button, cardSelector('bob'));
    await waitFor(button);
    expect(await text(`${cardSelector('bob')} .question .q`)).toMatch(QUESTION.text);
    await click(button);
    await rig.waitForScreen('bob', QUESTION.done);
    await expect
      .poll(() => inPage<string | null>(`document.querySelector('${cardSelector('bob')}').dataset.state`), { timeout: 20_000 })
      .not.toBe('waiting_input');
    expect(await inPage<number>(`document.querySelectorAll('${cardSelector('bob')} .question').length`)).toBe(0);
    expect(errors).toEqual([]);
  });

  it('fits a phone: one column of cards at 390 pixels, nothing wider than the screen, usable with the keyboard', async () => {
    await setFirefoxViewport(page, PHONE);
    expect(await inPage<number>('window.innerWidth')).toBe(PHONE.width);
    /** Goes to a view by the address's hash, as a link does, and waits for it (its title). */
    const view = async (hash: string, title: string) => {
      await inPage(`location.hash = ${JSON.stringify(hash)}`);
      await expect.poll(() => page.title(), POLL).toBe(title);
    };
    await view('#/', 'Agents · jaggers');
    await waitFor(cardSelector('bob'));
    const x = (agent: string) => inPage<number>(`document.querySelector('${cardSelector(agent)}').getBoundingClientRect().x`);
    expect(await x('alice')).toBe(await x('bob'));
    const scrollWidth = () => inPage<number>('document.documentElement.scrollWidth');
    expect(await scrollWidth()).toBeLessThanOrEqual(PHONE.width);
    await view('#/work', 'Work · jaggers');
    await waitFor(`tr[data-job="${job}"]`);
    expect(await scrollWidth(), '#/work').toBeLessThanOrEqual(PHONE.width);
    await view('#/terminal/bob', 'bob · jaggers');
    await waitFor('.xterm');
    expect(await scrollWidth(), '#/terminal/bob').toBeLessThanOrEqual(PHONE.width);
    await setFirefoxViewport(page, null);
    expect(await inPage<number>('window.innerWidth')).toBe(FIREFOX_SIZE.width);
    // From the top of the page, Tab reaches the first agent's link and Enter opens its terminal.
    await page.goto(new URL('/#/', base).href);
    await waitFor(cardSelector('alice'));
    for (let i = 0; i < 10; i++) {
      await page.keyboard.press('Tab');
      if ((await inPage<string | null>('document.activeElement?.textContent ?? null')) === 'alice') break;
    }
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).hash, POLL).toBe('#/terminal/alice');
    expect(errors).toEqual([]);
  });
});
