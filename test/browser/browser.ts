// Real browsers for the dashboard's tests: Debian's Chromium (/usr/bin/chromium) driven by playwright-core,
// also for the screenshot and the benchmark, and Debian's Firefox ESR (/usr/bin/firefox-esr) driven by
// puppeteer-core over WebDriver BiDi (playwright's Firefox is a patched build of its own, which cannot be
// downloaded here; puppeteer drives a stock Firefox). Neither package downloads a browser. Headless, a
// fresh profile each, and none of the browser's own network traffic: the machine's network is closed, and
// the page needs none.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import puppeteer, { type Browser as PuppeteerBrowser } from 'puppeteer-core';

export const CHROMIUM = process.env.JAGGERS_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or null when they can. */
export function noBrowser(): string | null {
  return existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (install Debian's chromium package, as .ci/run does)`;
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser of its own: `launch` gives it a fresh, empty profile folder (--user-data-dir), removed on close. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

export const FIREFOX = process.env.JAGGERS_FIREFOX ?? '/usr/bin/firefox-esr';

/** Why the Firefox tests cannot run here, or null when they can. */
export function noFirefox(): string | null {
  return existsSync(FIREFOX) ? null : `no Firefox at ${FIREFOX} (install Debian's firefox-esr package, as .ci/run does)`;
}

/** The page's size in Firefox: its window's (Firefox 140 has no BiDi command for the screen's orientation, which puppeteer's `setViewport` sends). */
export const FIREFOX_SIZE = { width: 1280, height: 900 };

/**
 * Firefox of its own: puppeteer makes it a fresh profile folder, with the preferences for automation (no
 * updates, telemetry or safe-browsing lookups), removed on close.
 */
export function launchFirefox(): Promise<PuppeteerBrowser> {
  return puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    defaultViewport: null,
    args: [`--width=${FIREFOX_SIZE.width}`, `--height=${FIREFOX_SIZE.height}`],
  });
}
