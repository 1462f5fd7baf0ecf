// Real browsers for the dashboard's tests: Debian's Chromium (/usr/bin/chromium) and the two newest
// Chromium releases on the npm registry (@sparticuz/chromium's headless shell, which
// scripts/install-browsers.sh unpacks into a cache folder outside the repository), driven by
// playwright-core, and Debian's Firefox ESR (/usr/bin/firefox-esr) driven by
// puppeteer-core over WebDriver BiDi (playwright's Firefox is a patched build of its own, which cannot be
// downloaded here; puppeteer drives a stock Firefox). Neither package downloads a browser. Headless, a
// fresh profile each, and none of the browser's own network traffic: the machine's network is closed, and
// the page needs none.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import puppeteer, { type Browser as PuppeteerBrowser, type Page as PuppeteerPage } from 'puppeteer-core';

export const CHROMIUM = process.env.JAGGERS_CHROMIUM ?? '/usr/bin/chromium';

/** The Chromium majors scripts/install-browsers.sh installs (keep the two in sync): the newest two it can. */
export const CHROMIUM_RELEASES = ['153', '152'];

/** Where scripts/install-browsers.sh puts them: `<cache>/chromium-<major>/chromium`. */
export const BROWSER_CACHE = process.env.JAGGERS_BROWSER_CACHE ?? path.join(homedir(), '.cache', 'jaggers', 'browsers');

export interface ChromiumBuild {
  /** For a test's name: "Chromium 150 (/usr/bin/chromium)", "Chromium 153 (@sparticuz/chromium)". */
  name: string;
  executablePath: string;
  /** The major version it is, when known (what `browser.version()` starts with). */
  major: string | null;
  /** Why it cannot run here, or null when it can. */
  missing: string | null;
}

/** The major version a Chromium binary says it is (`Chromium 150.0.7871.100 built on Debian …`), or null. */
function majorOf(executable: string): string | null {
  try {
    const out = execFileSync(executable, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 });
    return /Chromium (\d+)\./.exec(out)?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Every Chromium the dashboard's tests run in: Debian's (or JAGGERS_CHROMIUM), then the cached releases, newest first. */
export function chromiumBuilds(): ChromiumBuild[] {
  const present = existsSync(CHROMIUM);
  const major = present ? majorOf(CHROMIUM) : null;
  const debian: ChromiumBuild = {
    name: `Chromium${major ? ` ${major}` : ''} (${CHROMIUM})`,
    executablePath: CHROMIUM,
    major,
    missing: present ? null : `no Chromium at ${CHROMIUM} (install Debian's chromium package, as .ci/run does)`,
  };
  const cached = CHROMIUM_RELEASES.map((major): ChromiumBuild => {
    const dir = path.join(BROWSER_CACHE, `chromium-${major}`);
    const executablePath = path.join(dir, 'chromium');
    const installed = existsSync(path.join(dir, '.jaggers-installed')) && existsSync(executablePath);
    return {
      name: `Chromium ${major} (@sparticuz/chromium)`,
      executablePath,
      major,
      missing: installed ? null : `no Chromium ${major} at ${executablePath} (run scripts/install-browsers.sh, as .ci/run does)`,
    };
  });
  return [debian, ...cached];
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

/**
 * A browser of its own: `launch` gives it a fresh, empty profile folder (--user-data-dir), removed on close.
 * Debian's Chromium unless told another (the cached ones are headless shells; the same flags suit both).
 */
export function launchBrowser(executablePath = CHROMIUM): Promise<Browser> {
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true });
}

export const FIREFOX = process.env.JAGGERS_FIREFOX ?? '/usr/bin/firefox-esr';

/** Why the Firefox tests cannot run here, or null when they can. */
export function noFirefox(): string | null {
  return existsSync(FIREFOX) ? null : `no Firefox at ${FIREFOX} (install Debian's firefox-esr package, as .ci/run does)`;
}

/** The page's size in Firefox: its window's (Firefox 140 has no BiDi command for the screen's orientation, which puppeteer's `setViewport` sends). */
export const FIREFOX_SIZE = { width: 1280, height: 900 };

/** A phone's page, as the Chromium test sets it. */
export const PHONE = { width: 390, height: 800 };

/**
 * Sets the page's viewport in Firefox (null: back to the window's) with WebDriver BiDi's own
 * `browsingContext.setViewport`. puppeteer's `setViewport` sends it together with
 * `emulation.setScreenOrientationOverride`, unknown to Firefox 140, and fails; and no headless Firefox
 * window is narrower than 450 pixels, so `--width=390` cannot make a phone. The frame's `browsingContext`
 * is puppeteer's own object for the page's BiDi context, not in its public types.
 */
export async function setFirefoxViewport(page: PuppeteerPage, viewport: { width: number; height: number } | null): Promise<void> {
  const frame = page.mainFrame() as unknown as { browsingContext?: { setViewport(o: { viewport: typeof viewport }): Promise<void> } };
  if (!frame.browsingContext) throw new Error("puppeteer's Firefox frame has no browsingContext: its internals changed");
  await frame.browsingContext.setViewport({ viewport });
}

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
