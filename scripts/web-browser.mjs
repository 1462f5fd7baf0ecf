// Shared by the dashboard's scripts (screenshot, benchmark): a private world with demo agents, its web
// login, and Debian's Chromium driven by playwright-core with the flags test/browser/browser.ts uses.
import { spawnSync } from 'node:child_process';
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { ApiClient } from '../dist/src/api/client.js';
import { apiSocketPath } from '../dist/src/api/paths.js';
import { benchWorld, worldEnd } from './bench-lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repo, 'bin', 'jaggers.js');
export const CHROMIUM = process.env.JAGGERS_CHROMIUM ?? '/usr/bin/chromium';

export function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A private world (temp project and HOME, own tmux socket) with `agents` (`[{name, profile}]`) and
 * `profiles` (`{name: args}`, the demo profile with other arguments), started with `jaggers up`.
 */
export async function demoWorld(name, agents, profiles = {}) {
  const world = await benchWorld(name);
  const end = worldEnd(world);
  const demo = JSON.parse(await (await import('node:fs/promises')).readFile(path.join(repo, 'profiles', 'demo.json'), 'utf8'));
  await mkdir(path.join(world.root, '.jaggers', 'profiles'), { recursive: true });
  for (const [p, args] of Object.entries(profiles)) {
    await writeFile(path.join(world.root, '.jaggers', 'profiles', `${p}.json`), JSON.stringify({ ...demo, name: p, args }));
  }
  await writeFile(path.join(world.root, 'jaggers.json'), JSON.stringify({ agents }));
  const jaggers = (...args) => {
    const r = spawnSync(process.execPath, [bin, ...args], { cwd: world.root, env: world.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`jaggers ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  end.started();
  jaggers('up');
  const api = new ApiClient({ socketPath: apiSocketPath(path.join(world.root, '.jaggers')) });
  return { world, api, jaggers, end: end.end };
}

/** A web login link, as `jaggers web` prints it. */
export async function webLogin(api) {
  return api.call('POST', '/v1/web', {});
}

/** Until the agent's state is one of `states` (the API's own wait). */
export async function waitState(api, agent, states, timeoutS = 30) {
  return api.call('GET', `/v1/terminals/${agent}/wait?state=${states}&timeout=${timeoutS}`);
}
