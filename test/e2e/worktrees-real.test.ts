// Agents in git worktrees of their own (issue 28) on the real CLIs, offline against the stub model server:
// every agent has `"isolation": "worktree"`, so `up` starts it in `.jaggers/worktrees/<agent>` on branch
// `jaggers/<agent>`. Per CLI: one handoff (its pointer relative to the worktree, `../../handover/...`),
// the pin recorded and the CLI's own session file found where that CLI files the worktree's conversations,
// under the pinned id; then after `tmux kill-server` and `up`, the pane started with the profile's resume
// arguments for that id in the worktree, and a second handoff whose request carries the earlier turns,
// written into the same session file. In both handoffs the stub has the CLI read the handover file with its
// own file tool (codex: `cat`), outside its worktree, and nobody is asked (the profiles' `sharedFolders`).
// `jaggers diff` works on each, and the user's checkout stays clean.
// Needs `npm run build` (window 0 runs the built supervisor) and scripts/install-real-clis.sh; a CLI that
// is not installed is skipped (JAGGERS_REQUIRE_REAL_CLIS=1 makes it fail instead).

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HandoffResult } from '../../src/api/types.js';
import type { PinRow } from '../../src/commands/sessions.js';
import { parseArtifact } from '../../src/handover/artifact.js';
import { readRegistry } from '../helpers/api.js';
import { CLI_NAMES, cliBinary, CLIS, isChosen, isCliInstalled, type CliName } from './clis.js';
import { codexSessionIds, firstJsonLine, geminiSlug, opencodeSessions, projectDirName, sessionFile } from './session-files.js';
import { argvOf, profileResumeArgs, secretOf, teamChecks } from './team-checks.js';
import type { RecordedRequest } from './stub-server.js';
import { createTeam, SIGNALS, type Team } from './team.js';

const required = process.env.JAGGERS_REQUIRE_REAL_CLIS === '1';
// JAGGERS_E2E_CLIS=claude,codex narrows the team (to look into one CLI).
const team = CLI_NAMES.filter((cli) => (required || isCliInstalled(cli)) && isChosen(cli));
const inTeam = (cli: CliName) => team.includes(cli);

const STEP_MS = 180_000;

describe.skipIf(team.length === 0)(`jaggers: agents in git worktrees on the real CLIs (${SIGNALS})`, () => {
  let t: Team;
  /** The first handoff's result per CLI, and the id pinned by then. */
  const first = new Map<CliName, HandoffResult>();
  const pinned = new Map<CliName, string>();

  /**
   * gemini's homes: the CLI's own `~/.gemini`, and with hooks on each pane's overlay
   * (`.jaggers/hooks/<id>/home/.gemini`), where gemini's `projects.json` lands.
   */
  const geminiDirs = (): string[] => {
    const hooks = path.join(t.rig.root, '.jaggers', 'hooks');
    const overlays = existsSync(hooks) ? readdirSync(hooks).map((id) => path.join(hooks, id, 'home', '.gemini')) : [];
    return [path.join(t.homes.gemini!, '.gemini'), ...overlays.filter((d) => existsSync(path.join(d, 'projects.json')))];
  };
  /** Where the CLI files conversation `id` for its worktree (gemini: under the slug its projects.json gives the worktree). */
  const ownSessionFile = (cli: CliName, id: string): string | undefined => {
    const slug = cli === 'gemini' ? geminiSlug(geminiDirs(), t.cwds[cli]) : undefined;
    if (cli === 'gemini' && slug === undefined) throw new Error(`no projects.json in ${JSON.stringify(geminiDirs())} names ${t.cwds[cli]}`);
    return sessionFile(cli, t.homes[cli]!, t.cwds[cli], id, slug);
  };
  const { handoff, expectReply, sessionText } = teamChecks(() => t, { sessionFile: ownSessionFile });

  /**
   * A handoff the stub answers by calling the CLI's own file tool on the handover file (outside the
   * worktree: `../../handover/...`) and repeating what it read: jaggers let the CLI read that folder, and
   * nobody was asked (no waiting_input on the way).
   */
  const readHandoff = async (cli: CliName, words: string): Promise<{ res: HandoffResult; request: RecordedRequest }> => {
    const res = await handoff(cli, ['--message', `read-it-yourself: ${words}`]);
    expect(res.delivery.kind).toBe('delivered');
    // The pointer names the handover file relative to the worktree: outside it, in the project's .jaggers.
    expect(res.pointer).toMatch(/^Read \.\.\/\.\.\/handover\/\S+\.md /);
    await expectReply(cli, res, `read by its tool: ${words}`);
    expect(res.states, `${cli}'s states`).not.toContain('waiting_input');
    // The prompt's request, and the one after the tool ran, whose result carried the file's words.
    const sent = t.turnsOf(cli).filter((r) => r.lastUserText === res.pointer || (r.hasToolResult && JSON.stringify(r.body).includes(res.pointer)));
    const prompt = sent.filter((r) => !r.hasToolResult);
    expect(prompt, `${cli} sent ${JSON.stringify(res.pointer)} once`).toHaveLength(1);
    expect(sent.some((r) => r.hasToolResult && JSON.stringify(r.body).includes(`read-it-yourself: ${words}`))).toBe(true);
    return { res, request: prompt[0]! };
  };

  const git = (args: string[], cwd = t.rig.root): string =>
    execFileSync('git', args, { cwd, env: { ...t.rig.env, LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  /** The agent's pane runs in its worktree, and the registry says so. */
  const expectInWorktree = async (cli: CliName): Promise<void> => {
    const pane = await t.pane(cli);
    expect(readlinkSync(`/proc/${pane.panePid}/cwd`), `${cli}'s pane's cwd`).toBe(t.cwds[cli]);
    const terminal = Object.values(readRegistry(t.rig.root).terminals).find((x) => x.agent === cli);
    expect(terminal?.cwd, `${cli}'s terminal in the registry`).toBe(t.cwds[cli]);
  };

  beforeAll(async () => {
    const started = Date.now();
    t = await createTeam(team, { worktrees: true });
    const up = await t.jg(['up']);
    expect(up.code, up.stderr).toBe(0);
    await Promise.all(team.map((cli) => t.waitForStatus(cli, (s) => s.state === 'idle', { timeoutMs: 90_000, what: 'idle after up' })));
    console.log(`worktrees-real: team of ${team.length} up and idle in ${Date.now() - started} ms`);
  }, STEP_MS);
  afterAll(async () => t?.dispose());

  // The CLIs work at once within each step; the steps run one after another.
  describe('up and one handoff, each CLI in its worktree', () => {
    for (const cli of CLI_NAMES) {
      it.skipIf(!inTeam(cli)).concurrent(
        `${cli} ${CLIS[cli].version}: started in .jaggers/worktrees/${cli} on jaggers/${cli}, reads the handover file outside it unasked; its conversation filed for that folder under the pinned id`,
        async () => {
          const cwd = t.cwds[cli];
          await expectInWorktree(cli);
          expect(git(['rev-parse', '--abbrev-ref', 'HEAD'], cwd).trim()).toBe(`jaggers/${cli}`);

          const { res } = await readHandoff(cli, secretOf(cli));
          first.set(cli, res);

          const pin = (await t.jgJson<PinRow[]>(['sessions', '--json'])).find((p) => p.agent === cli);
          expect(pin?.sessionId, `${cli}'s pin`).toBeTruthy();
          const id = pin!.sessionId!;
          pinned.set(cli, id);
          const home = t.homes[cli]!;
          // The CLI's own record, where it files conversations of the worktree folder, under the pinned id.
          switch (cli) {
            case 'claude':
              // By exact cwd: ~/.claude/projects/<cwd, non-alphanumerics as '-'>/<id>.jsonl.
              expect(ownSessionFile(cli, id)).toBe(path.join(home, '.claude', 'projects', projectDirName(cwd), `${id}.jsonl`));
              expect(parseArtifact(readFileSync(res.artifact, 'utf8')).meta.target_session).toBe(id);
              break;
            case 'qwen': {
              // ~/.qwen/projects/<cwd as a name>/chats/<id>.jsonl, its records naming the worktree (the
              // loader checks the hash of that cwd).
              const file = ownSessionFile(cli, id);
              expect(file).toBe(path.join(home, '.qwen', 'projects', projectDirName(cwd), 'chats', `${id}.jsonl`));
              expect(firstJsonLine(file!)).toMatchObject({ sessionId: id, cwd });
              break;
            }
            case 'gemini': {
              // ~/.gemini/tmp/<slug>/chats/session-<date>-<id8>.jsonl, the slug from projects.json (the
              // worktree's basename) and its owner in tmp/<slug>/.project_root.
              const slug = geminiSlug(geminiDirs(), cwd);
              expect(slug).toBe(path.basename(cwd));
              expect(readFileSync(path.join(home, '.gemini', 'tmp', slug!, '.project_root'), 'utf8').trim()).toBe(cwd);
              const file = ownSessionFile(cli, id);
              expect(file, `gemini's chat file for ${id} under tmp/${slug}/chats`).toBeDefined();
              expect(firstJsonLine(file!).sessionId).toBe(id);
              break;
            }
            case 'codex': {
              // Not given at start: discovered from the rollout whose session_meta names the worktree.
              expect(codexSessionIds(home)).toEqual([id]);
              const meta = firstJsonLine(ownSessionFile(cli, id)!) as { type: string; payload: { id: string; cwd: string } };
              expect(meta).toMatchObject({ type: 'session_meta', payload: { id, cwd } });
              break;
            }
            case 'opencode': {
              // Not given at start: discovered from `opencode session list`, whose session names the worktree.
              const sessions = opencodeSessions(cliBinary(cli), t.envs[cli]!, cwd);
              expect(sessions.map((s) => [s.id, s.directory])).toEqual([[id, cwd]]);
              break;
            }
            case 'copilot': {
              // ~/.copilot/session-state/<id>/events.jsonl, its session.start naming the worktree.
              const file = ownSessionFile(cli, id);
              expect(file).toBe(path.join(home, '.copilot', 'session-state', id, 'events.jsonl'));
              expect(firstJsonLine(file!)).toMatchObject({ type: 'session.start', data: { sessionId: id, context: { cwd } } });
              expect(parseArtifact(readFileSync(res.artifact, 'utf8')).meta.target_session).toBe(id);
              break;
            }
          }
          expect(sessionText(cli, id)).toContain(res.pointer);
        },
        STEP_MS,
      );
    }
  });

  describe('after tmux kill-server, up resumes each pinned conversation in its worktree', () => {
    let pinsBefore: PinRow[] = [];
    beforeAll(async () => {
      pinsBefore = await t.jgJson<PinRow[]>(['sessions', '--json']);
      await t.killServer();
      const up = await t.jg(['up']);
      expect(up.code, up.stderr).toBe(0);
    }, STEP_MS);

    for (const cli of CLI_NAMES) {
      it.skipIf(!inTeam(cli)).concurrent(
        `${cli}: resumed with its pinned id in its worktree, the earlier turns in the next request (its handover read unasked), written to the same session file`,
        async () => {
          const id = pinned.get(cli);
          expect(id, `${cli} was pinned before the kill`).toBeTruthy();
          expect(pinsBefore.find((p) => p.agent === cli)?.sessionId).toBe(id);
          await t.waitForStatus(cli, (s) => s.state === 'idle', { timeoutMs: 90_000, what: 'idle after the resume' });
          // Started with the profile's resume arguments for the pinned id, in the worktree; the pin did not move.
          const pane = await t.pane(cli);
          expect(argvOf(pane.panePid).join(' '), `${cli}'s command line`).toContain(` ${profileResumeArgs(cli, id!).join(' ')}`);
          await expectInWorktree(cli);
          const pins = await t.jgJson<PinRow[]>(['sessions', '--json']);
          expect(pins.find((p) => p.agent === cli)).toMatchObject({ sessionId: id, previous: [] });

          const fileBefore = cli === 'opencode' ? undefined : ownSessionFile(cli, id!);
          const { res, request: req } = await readHandoff(cli, `after the restart ${cli} continues`);
          // The stub got the conversation's earlier turns with the new prompt.
          expect(req.userTexts).toEqual(expect.arrayContaining([first.get(cli)!.pointer, res.pointer]));
          expect(req.assistantTexts.join('\n')).toContain(`read by its tool: ${secretOf(cli)}`);
          // And the CLI wrote the new turn into the same session file, beside the first.
          if (fileBefore !== undefined) expect(ownSessionFile(cli, id!)).toBe(fileBefore);
          const text = sessionText(cli, id!);
          expect(text).toContain(first.get(cli)!.pointer);
          expect(text).toContain(res.pointer);
          await expectInWorktree(cli);
        },
        STEP_MS,
      );
    }
  });

  describe("each agent's branch, and the user's checkout", () => {
    it('jaggers diff works for each agent; git status in the user checkout is empty', async () => {
      const files: Record<string, string[]> = {};
      for (const cli of team) {
        const d = await t.jg(['diff', cli, '--json']);
        expect(d.code, `jaggers diff ${cli}: ${d.stderr}`).toBe(0);
        const diff = JSON.parse(d.stdout) as { name: string; agent: string | null; files: { path: string }[]; commits: { subject: string }[] };
        expect(diff).toMatchObject({ name: cli, agent: cli });
        files[cli] = diff.files.map((f) => f.path);
        // Whatever a CLI left in its worktree was committed at the end of its handoff.
        expect(git(['status', '--porcelain', '--untracked-files=all'], t.cwds[cli]), `${cli}'s worktree`).toBe('');
      }
      console.log(`worktrees-real: files changed on each agent's branch: ${JSON.stringify(files)}`);
      expect(git(['status', '--porcelain', '--untracked-files=all'])).toBe('');
      expect(git(['rev-parse', '--abbrev-ref', 'HEAD']).trim()).toBe('main');
    });
  });
});
