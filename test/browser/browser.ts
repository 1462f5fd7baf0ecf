// Real Chromium for the dashboard's tests, the screenshot and the benchmark: Debian's /usr/bin/chromium
// driven by playwright-core (which downloads no browser). Headless, no sandbox (CI runs as root), and
// none of Chromium's own network traffic: the machine's network is closed, and the page needs none.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
