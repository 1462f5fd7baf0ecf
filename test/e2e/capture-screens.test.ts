// Captures each state of each real CLI as the text tmux shows (200x50) into
// test/fixtures/screens/<cli>-<version>-<state>.txt. Not part of the normal run: it is skipped unless
// JAGGERS_CAPTURE_SCREENS=1 (scripts/capture-real-screens.mjs sets it, optionally with
// JAGGERS_CAPTURE_CLIS=claude,codex to pick CLIs).

import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startArgs } from './cli-env.js';
import { CLI_NAMES, CLIS, isCliInstalled, type CliName } from './clis.js';
import { settledScreen, waitForScreen } from './drive.js';
import { trimScreen } from './private-tmux.js';
import { createRig, type CliRig } from './rig.js';
import { screenState } from './screens.js';

const enabled = process.env.JAGGERS_CAPTURE_SCREENS === '1';
const picked = (process.env.JAGGERS_CAPTURE_CLIS ?? '').split(',').filter((c) => c !== '');
const scratch = join(tmpdir(), 'jaggers-screens');
// The canary captures into its own folder (JAGGERS_CAPTURE_DIR), not over the fixtures.
const outDir = process.env.JAGGERS_CAPTURE_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'screens');

const FIRST_REPLY = 'Foxes are small omnivores of the dog family. They hunt alone at dusk and dawn, and they cache food for later.';
const SECOND_REPLY = 'Owls turn their heads up to 270 degrees. Their feathers are built for silent flight through the night.';

function save(cli: CliName, state: string, screen: string): void {
  const file = join(outDir, `${cli}-${CLIS[cli].version}-${state}.txt`);
  writeFileSync(file, `${trimScreen(screen)}\n`);
  console.log(`saved ${file}`);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function captureAll(rig: CliRig): Promise<void> {
  const { cli } = rig;
  const tmux = await rig.start(startArgs(cli, randomUUID()));
  // A state that never came (a new release the e2e patterns do not know): its screen is saved all the
  // same, under the state's name, so the canary's report shows what the CLI drew instead.
  const orSave = async <T>(state: string, p: Promise<T>): Promise<T> => {
    try {
      return await p;
    } catch (e) {
      save(cli, state, await tmux.capture());
      throw new Error(`capture of ${cli} ${CLIS[cli].version} stopped waiting for ${state}: ${(e as Error).message}`);
    }
  };

  // starting: the last screen with something on it before the input box is ready.
  let starting: string | undefined;
  await orSave(
    'idle',
    waitForScreen(
      tmux,
      (s) => {
        const ready = screenState(cli, s) === 'idle';
        if (!ready && s.trim() !== '') starting = s;
        return ready;
      },
      { timeoutMs: 45_000, intervalMs: 30, what: `${cli} idle` },
    ),
  );
  if (starting !== undefined) save(cli, 'starting', starting);
  save(cli, 'idle', await settledScreen(tmux, 1_000));

  // busy: a slow reply; the last busy screen within the first 1.5 s (codex shows `Working` only until
  // text arrives), then a screen in the middle of the stream.
  rig.stub.setScript(() => ({ kind: 'text', text: FIRST_REPLY, chunks: 12, delayMs: 500 }));
  await rig.type('Tell me about foxes');
  const busyAt = Date.now();
  let busy: string | undefined;
  await orSave(
    'busy',
    waitForScreen(
      tmux,
      (s) => {
        if (screenState(cli, s) === 'busy') busy = s;
        return busy !== undefined && (Date.now() - busyAt > 1_500 || screenState(cli, s) !== 'busy');
      },
      { timeoutMs: 20_000, intervalMs: 50, what: `${cli} busy` },
    ),
  );
  if (busy !== undefined) save(cli, 'busy', busy);
  await sleep(Math.max(0, busyAt + 3_500 - Date.now()));
  const streaming = await tmux.capture();
  save(cli, 'busy-streaming', streaming);
  // codex hides its `Working` line while text streams: the screen then reads as idle.
  if (screenState(cli, streaming) === 'idle') save(cli, 'trap-idle-while-streaming', streaming);

  // done: the whole reply shown, back at the prompt.
  await orSave('done', rig.waitFor('idle', { timeoutMs: 30_000, also: (s) => s.includes('cache food for later.') }));
  save(cli, 'done', await settledScreen(tmux, 1_000));

  // trap: the finished reply and its summary line are still on screen while a new turn is busy.
  rig.stub.setScript(() => ({ kind: 'text', text: SECOND_REPLY, chunks: 10, delayMs: 600 }));
  await rig.type('Now tell me about owls');
  save(cli, 'trap-summary-while-busy', await orSave('trap-summary-while-busy', rig.waitFor('busy', { timeoutMs: 20_000, also: /cache food for later/ })));
  await rig.waitFor('idle', { timeoutMs: 30_000, also: (s) => s.includes('through the night.') });
  await rig.settle();

  // waiting: the approval menu of a shell tool call.
  rig.stub.setScript();
  await rig.type('Run the command that needs-approval');
  await orSave('waiting', rig.waitFor('waiting', { timeoutMs: 45_000 }));
  save(cli, 'waiting', await settledScreen(tmux, 1_000));
  await tmux.run(['send-keys', '-t', 'e2e', 'Enter']);
  await orSave('done-after-tool', rig.waitFor('idle', { timeoutMs: 30_000, also: /stub: the command ran\./ }));
  save(cli, 'done-after-tool', await settledScreen(tmux, 1_000));

  // idle in auto mode (claude's default since 2.1.330, qwen's since 0.24): its footer differs.
  // Shift+Tab cycles the permission modes; a few presses reach auto mode where the CLI has one.
  if (cli === 'claude' || cli === 'qwen') {
    for (let i = 0; i < 6 && !/auto mode/i.test(await tmux.capture()); i++) {
      const before = await tmux.capture();
      await tmux.run(['send-keys', '-t', 'e2e', 'BTab']);
      await waitForScreen(tmux, (s) => s !== before, { timeoutMs: 5_000, what: `${cli} to change its mode` }).catch(() => undefined);
    }
    await orSave('idle-auto-mode', waitForScreen(tmux, /auto mode/i, { timeoutMs: 5_000, what: `${cli} in auto mode` }));
    save(cli, 'idle-auto-mode', await settledScreen(tmux, 1_000));
  }
}

describe.skipIf(!enabled)('capture real CLI screens (JAGGERS_CAPTURE_SCREENS=1)', () => {
  let rig: CliRig | undefined;

  afterEach(async () => {
    await rig?.dispose();
    rig = undefined;
  });

  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  const clis = CLI_NAMES.filter((c) => picked.length === 0 || picked.includes(c));
  for (const cli of clis) {
    it.skipIf(!isCliInstalled(cli))(
      `${cli} ${CLIS[cli].version}`,
      async () => {
        mkdirSync(outDir, { recursive: true });
        // A fixed folder, so that the paths shown on screen are the same at every capture.
        rig = await createRig(cli, { root: join(scratch, cli) });
        await captureAll(rig);
        expect(rig.stub.turns().length).toBeGreaterThanOrEqual(3);
      },
      300_000,
    );
  }
});
