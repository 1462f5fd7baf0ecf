// The real agent CLIs, offline against the stub model server, each in its own private tmux
// server: start pinned, answer a handover prompt, ask for approval, then resume after a kill.
// Install them first with scripts/install-real-clis.sh; without them these tests are skipped
// (set JAGGERS_REQUIRE_REAL_CLIS=1 to make a missing CLI fail instead).

import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resumeArgs, startArgs } from './cli-env.js';
import { CLI_NAMES, cliBinary, factsSuite, isChosen } from './clis.js';
import { createRig, type CliRig } from './rig.js';
import { waitForScreen } from './drive.js';
import { screenState } from './screens.js';
import { codexSessionIds, opencodeSessions, sessionFile } from './session-files.js';
import type { Reply } from './stub-server.js';
import { defaultScript } from './stub-script.js';

/** Streams text replies in pieces so that the busy screen lasts long enough to be seen (codex shows
 * `Working` only until the first piece arrives). */
const slowly = (r: Reply): Reply => (r.kind === 'text' ? { ...r, chunks: 6, delayMs: 400 } : r);

for (const cli of CLI_NAMES.filter(isChosen)) {
  const { title, skip } = factsSuite('real', cli);
  describe.skipIf(skip)(title, () => {
    let rig: CliRig | undefined;

    afterEach(async () => {
      await rig?.dispose();
      rig = undefined;
    });

    it('starts idle, answers a prompt, asks for approval and resumes its session after a kill', async () => {
      const r = (rig = await createRig(cli));
      const pinned = randomUUID();
      await r.start(startArgs(cli, pinned));
      await r.waitFor('idle', { timeoutMs: 45_000 });

      // A handover-style prompt: the stub answers with the file's first body line, slowly.
      mkdirSync(join(r.cwd, '.jaggers', 'handover'), { recursive: true });
      writeFileSync(join(r.cwd, '.jaggers', 'handover', 'turn_1_ab.md'), '---\nfrom: lead\nturn: 1\n---\n\nthe secret word is pelican\n');
      r.stub.setScript((req) => slowly(defaultScript(req, r.cwd)));
      const first = 'Read .jaggers/handover/turn_1_ab.md and do what it asks';
      await r.type(first);
      await r.waitFor('busy', { timeoutMs: 20_000 });
      await r.waitFor('idle', { also: /answer: the secret word is pelican/ });
      await r.settle();
      expect(r.stub.turns().filter((t) => t.lastUserText === first)).toHaveLength(1);

      // A tool call that needs approval: the approval menu, then Enter on its first choice.
      r.stub.setScript();
      await r.type('Run the command that needs-approval');
      const waiting = await r.waitFor('waiting', { timeoutMs: 45_000 });
      expect(waiting).toContain('touch approved.txt');
      // claude 2.1.330 ignores keys for a moment after its menu appears: Enter once the screen is quiet.
      await r.settle(1_500);
      await r.tmux().run(['send-keys', '-t', 'e2e', 'Enter']);
      await r.waitFor('idle', { also: /stub: the command ran/ });
      await r.settle();
      expect(existsSync(join(r.cwd, 'approved.txt'))).toBe(true);
      expect(r.stub.turns().some((t) => t.hasToolResult)).toBe(true);

      // The CLI's own session file, under the pinned id (codex and opencode: the id it chose).
      const id = cli === 'codex' ? codexSessionIds(r.home)[0] : cli === 'opencode' ? opencodeSessions(cliBinary(cli), r.env, r.cwd)[0]?.id : pinned;
      expect(id, `${cli}'s session id (codex: a rollout file's session_meta; opencode: its session list)`).toBeDefined();
      const sessionId = id ?? '';
      expect(sessionFile(cli, r.home, r.cwd, sessionId), `${cli} session file for ${sessionId}`).toBeDefined();

      // Kill everything, start again with the resume arguments: the conversation goes on.
      await r.stop();
      await r.start(resumeArgs(cli, sessionId));
      // copilot, resumed a moment after its process was killed, may take the session for one another client
      // holds and ask (fixture copilot-1.0.102-waiting-session-in-use.txt): resume anyway, its first choice.
      const back = await waitForScreen(
        r.tmux(),
        (s) => /appears to be in use by another CLI/.test(s) || (screenState(cli, s) === 'idle' && /answer: the secret word is pelican/.test(s)),
        { timeoutMs: 45_000, what: `${cli} idle with its earlier turn, or copilot's "session in use" question` },
      );
      if (/appears to be in use by another CLI/.test(back)) await r.tmux().run(['send-keys', '-t', 'e2e', 'Enter']);
      await r.waitFor('idle', { timeoutMs: 45_000, also: /answer: the secret word is pelican/ });
      await r.settle();
      const third = 'Continue after the restart';
      await r.type(third);
      await r.waitFor('idle', { also: /stub reply to: Continue after the restart/ });
      const resumed = r.stub.turns().filter((t) => t.lastUserText === third);
      expect(resumed).toHaveLength(1);
      expect(resumed[0]?.userTexts).toEqual(expect.arrayContaining([first, 'Run the command that needs-approval', third]));
    }, 240_000);
  });
}
