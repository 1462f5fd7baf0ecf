// The world the dashboard's browser tests run in, one per test file and the same for every browser: a
// real supervisor on a private tmux server with two demo agents (alice thinks long enough to be seen
// busy, bob answers at once and asks a question on `/menu`) and carol, a program that prints in colour.
// And what the tests ask of it beside the page: a login link, a card's selector, a job's reply.
import { expect } from 'vitest';
import type { JobResultView } from '../../src/api/types.js';
import { api } from '../helpers/api.js';
import { writeFakeProfile, writeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

/** How long a poll of the page waits (expect.poll's own default, 1 s, is short on a loaded machine). */
export const POLL = { timeout: 15_000, interval: 100 };

export interface WebLogin {
  url: string;
  address: string;
  token: string;
}

/** The world, started with `jaggers up`; the caller cleans it up (`rig.cleanup()`). */
export async function dashboardWorld(): Promise<Rig> {
  const rig = await Rig.create();
  // The demo agent, thinking long enough for a person (and the test) to see it busy.
  await writeFakeProfile(rig.root, 'demo-slow', ['--think-ms', '2500', '--replies', 'work']);
  // And a plain program that prints in colour, for the terminal's colours.
  await writeProfile(rig.root, 'colours', { command: 'sh', args: ['-c', "printf 'plain \\033[31mred text\\033[0m\\n'; exec cat"] });
  await writeProject(rig.root, {
    agents: [
      { name: 'alice', profile: 'demo-slow' },
      { name: 'bob', profile: 'demo' },
      { name: 'carol', profile: 'colours' },
    ],
  });
  const up = await rig.run(['up']);
  expect(up.code, up.stderr).toBe(0);
  return rig;
}

/** A fresh login link (`POST /v1/web`, as `jaggers web` asks for it): its token works once. */
export const login = (rig: Rig): Promise<WebLogin> => api(rig).call<WebLogin>('POST', '/v1/web', {});

/** An agent's card on the overview, in `state` when given. */
export const cardSelector = (agent: string, state?: string): string => `article.card[data-agent="${agent}"]${state ? `[data-state="${state}"]` : ''}`;

/**
 * Code to run in the page (as text: the tests are type-checked without the DOM's types) that records
 * every state `agent`'s card takes, in order, in `window.<agent>States`, also while another view is on
 * screen (the card stays the same element); and marks the page, to see later that it was not reloaded.
 */
export const watchCard = (agent: string): string => `{
  window.notReloaded = true;
  const card = document.querySelector('${cardSelector(agent)}');
  const seen = (window.${agent}States = [card.dataset.state]);
  new MutationObserver(() => seen.at(-1) !== card.dataset.state && seen.push(card.dataset.state)).observe(card, { attributes: true, attributeFilter: ['data-state'] });
}`;

/**
 * The first line of a job's reply, as the API gives it, once the job has ended (its agent's card may say
 * done a moment before the job is recorded done).
 */
export async function replyLine(rig: Rig, job: string): Promise<string> {
  await api(rig).call('GET', `/v1/jobs/${job}/wait?timeout=30`);
  const line = (await api(rig).call<JobResultView>('GET', `/v1/jobs/${job}/result`)).reply!.split('\n')[0]!;
  expect(line.length).toBeGreaterThan(10);
  return line;
}

/** The permission question bob (the demo agent) asks on `/menu`, and the text its card shows for it. */
export const QUESTION = { input: '/menu', text: /Allow execution of \[Shell\]: touch approved\.txt\?/, button: '1. Allow once', done: /approved/ };
