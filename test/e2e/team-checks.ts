// Checks shared by the suites that drive a team of real CLIs (team.ts): a handoff that fails with what
// jaggers and the pane showed, the reply it must carry, the stub's request that carried a prompt, the
// CLI's own record of a conversation, and what a resumed pane was started with.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { HandoffResult } from '../../src/api/types.js';
import { builtinProfilesDir } from '../../src/package-root.js';
import { cliBinary, type CliName } from './clis.js';
import { opencodeExport, sessionFile } from './session-files.js';
import type { RecordedRequest } from './stub-server.js';
import type { Team } from './team.js';

/** What each CLI is handed first: its answer must come back after a resume. */
export const secretOf = (cli: CliName): string =>
  `the secret word for ${cli} is ${{ claude: 'pelican', qwen: 'otter', gemini: 'heron', codex: 'badger', opencode: 'marten', copilot: 'lynx' }[cli]}`;

/** The shipped profile's resume arguments for conversation `id`. */
export function profileResumeArgs(cli: CliName, id: string): string[] {
  const profile = JSON.parse(readFileSync(path.join(builtinProfilesDir, `${cli}.json`), 'utf8')) as { session: { resumeArgs: string[] } };
  return profile.session.resumeArgs.map((a) => a.replace('{sessionId}', id));
}

/** A pane process's command line. */
export function argvOf(pid: number | null): string[] {
  if (pid === null) throw new Error('the pane has no process');
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
}

export interface TeamChecks {
  /** `jaggers handoff <agent> <args> --timeout 90 --json`; a failure says what jaggers saw, what the stub got and the screen. */
  handoff(agent: CliName, args: string[]): Promise<HandoffResult>;
  /** The handoff's reply contains `text`; else fails with what jaggers saw and what the screen shows. */
  expectReply(agent: CliName, res: HandoffResult, text: string): Promise<void>;
  /** The stub's one turn request that carried `pointer` (the prompt jaggers typed). */
  requestWith(cli: CliName, pointer: string): RecordedRequest;
  /** The CLI's own record of conversation `id` (opencode keeps all of them in one database: its export). */
  sessionText(cli: CliName, id: string): string;
}

/** The checks on the team `team()` returns (made in a `beforeAll`, so asked for at each call). */
export function teamChecks(team: () => Team, o: { sessionFile?: (cli: CliName, id: string) => string | undefined } = {}): TeamChecks {
  const fileOf = o.sessionFile ?? ((cli: CliName, id: string) => sessionFile(cli, team().homes[cli]!, team().cwds[cli], id));
  return {
    async handoff(agent, args) {
      const t = team();
      const started = Date.now();
      const r = await t.jg(['handoff', agent, ...args, '--timeout', '90', '--json']);
      if (r.code !== 0) {
        // What the agent showed and what jaggers thought of it, for the failure message.
        const why = (await t.jg(['why', agent])).stdout;
        const screen = (await t.jg(['capture', agent])).stdout;
        const sent = t.turnsOf(agent).map((q) => `${q.lastUserText} (at ${q.at - started} ms)`);
        const published = await t.published(agent, started);
        expect.fail(
          `jaggers handoff ${agent} ${args.join(' ')} exited ${r.code}: ${r.stderr}\n${why}\nthe supervisor published: ${published}\n` +
            `prompts the stub got: ${JSON.stringify(sent)}\nscreen:\n${screen}`,
        );
      }
      return JSON.parse(r.stdout) as HandoffResult;
    },

    async expectReply(agent, res, text) {
      if (res.reply?.text.includes(text)) return;
      const screen = (await team().jg(['capture', agent])).stdout;
      expect.fail(
        `${agent}'s reply ${JSON.stringify(res.reply)} does not contain ${JSON.stringify(text)}; states ${res.states.join(' -> ')}; ` +
          `prompts the stub got: ${JSON.stringify(
            team()
              .turnsOf(agent)
              .map((q) => q.lastUserText),
          )}\nscreen now:\n${screen}`,
      );
    },

    requestWith(cli, pointer) {
      const sent = team()
        .turnsOf(cli)
        .filter((r) => r.lastUserText === pointer);
      expect(
        sent,
        `${cli} sent the prompt ${JSON.stringify(pointer)} once; it sent ${JSON.stringify(
          team()
            .turnsOf(cli)
            .map((r) => r.lastUserText),
        )}`,
      ).toHaveLength(1);
      return sent[0]!;
    },

    sessionText(cli, id) {
      const t = team();
      if (cli === 'opencode') return opencodeExport(cliBinary(cli), t.envs[cli]!, t.cwds[cli], id);
      const file = fileOf(cli, id);
      expect(file, `${cli}'s session file for ${id}`).toBeDefined();
      return readFileSync(file!, 'utf8');
    },
  };
}
