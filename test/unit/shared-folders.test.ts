// jaggers' shared folders (.jaggers/handover, inbox, jobs) made readable for a CLI whose working folder
// does not hold them (an agent in its git worktree, or with a cwd of its own): the profile's arguments
// once per folder, opencode's OPENCODE_PERMISSION joined to the agent's own, nothing for an agent at the
// project's root; the folders made before the start.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planLaunch, type LaunchInput } from '../../src/agents/plan.js';
import { foldersLaunch, makeSharedFolders } from '../../src/agents/shared-folders.js';
import { opencodePermission } from '../../src/clis/opencode/folders.js';
import { loadProfile } from '../../src/profiles/load.js';
import { ProfileSchema } from '../../src/profiles/schema.js';
import { launchInput } from '../helpers/launch-input.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'jg-shared-'));
});
afterEach(async () => rm(root, { recursive: true, force: true }));

const input = (): LaunchInput => launchInput(root, { hooksOff: 'test' });
const shared = () => ['handover', 'inbox', 'jobs'].map((f) => path.join(root, '.jaggers', f));
const inWorktree = { name: 'a', profile: 'x', args: [], env: {}, cwd: '.jaggers/worktrees/a' };

describe('shared folders outside the agent folder', () => {
  it('each shipped profile: its arguments once per folder, before the session arguments; none at the root', async () => {
    const want: Record<string, (f: string) => string[]> = {
      claude: (f) => [`--allowedTools=Read(/${f}/**)`],
      qwen: (f) => [`--include-directories=${f}`],
      gemini: (f) => [`--include-directories=${f}`],
      copilot: (f) => [`--add-dir=${f}`],
    };
    for (const [cli, args] of Object.entries(want)) {
      const { profile } = await loadProfile(cli, path.join(root, '.jaggers'));
      const l = planLaunch(input(), { ...inWorktree, profile: cli }, profile, 'jg-1', 'sess-1');
      const folderArgs = shared().flatMap(args);
      const at = l.command.indexOf(folderArgs[0]!);
      expect(l.command.slice(at, at + folderArgs.length), cli).toEqual(folderArgs);
      expect(l.command.slice(at + folderArgs.length), cli).toEqual(profile.session.resumeArgs.map((a) => a.replace('{sessionId}', 'sess-1')));
      expect(l.folders?.dirs).toEqual(shared());
      const atRoot = planLaunch(input(), { ...inWorktree, profile: cli, cwd: undefined }, profile, 'jg-1', 'sess-1');
      expect(atRoot.folders, cli).toBeNull();
      expect(
        atRoot.command.filter((a) => a.includes('.jaggers/handover')),
        cli,
      ).toEqual([]);
    }
    const { profile: codex } = await loadProfile('codex', path.join(root, '.jaggers'));
    expect(planLaunch(input(), { ...inWorktree, profile: 'codex' }, codex, 'jg-1', null).folders).toBeNull();
  });

  it('a cwd of its own under the root (not .jaggers) also gets them; one inside .jaggers/handover does not get that one', () => {
    const profile = ProfileSchema.parse({ name: 'p', command: 'p', sharedFolders: { args: ['--dir', '{folder}'] } });
    expect(foldersLaunch(profile, { projectRoot: root, cwd: path.join(root, 'agents', 'a'), env: {} })?.args).toEqual(shared().flatMap((f) => ['--dir', f]));
    expect(foldersLaunch(profile, { projectRoot: root, cwd: path.join(root, '.jaggers', 'handover'), env: {} })?.dirs).toEqual(shared().slice(1));
    expect(foldersLaunch(profile, { projectRoot: root, cwd: path.join(root, '.jaggers'), env: {} })).toBeNull();
    // A folder with `$&` in its name is put in as it is.
    const odd = path.join(root, 'x$&y');
    expect(foldersLaunch(profile, { projectRoot: odd, cwd: path.join(odd, 'sub'), env: {} })?.args[1]).toBe(path.join(odd, '.jaggers', 'handover'));
  });

  it("opencode: OPENCODE_PERMISSION allows them as external directories, after the agent's own rules", async () => {
    const { profile } = await loadProfile('opencode', path.join(root, '.jaggers'));
    const l = planLaunch(
      input(),
      { ...inWorktree, profile: 'opencode', env: { OPENCODE_PERMISSION: '{"bash":"ask","external_directory":"deny"}' } },
      profile,
      'jg-1',
      null,
    );
    const allowed = Object.fromEntries(shared().map((f) => [`${f}/*`, 'allow']));
    expect(JSON.parse(l.env.OPENCODE_PERMISSION!)).toEqual({ bash: 'ask', external_directory: { '*': 'deny', ...allowed } });
    expect(Object.keys((JSON.parse(l.env.OPENCODE_PERMISSION!) as { external_directory: object }).external_directory)[0]).toBe('*');
    expect(l.command).toEqual(['opencode', ...profile.args]);
    // The person's own rule for one of them moves behind: ours decides. Not JSON, or none: ours alone.
    const f = shared()[0]!;
    const joined = JSON.parse(
      opencodePermission([f], { OPENCODE_PERMISSION: JSON.stringify({ external_directory: { [`${f}/*`]: 'deny', '/x/*': 'ask' } }) }).env.OPENCODE_PERMISSION!,
    ) as {
      external_directory: Record<string, string>;
    };
    expect(Object.entries(joined.external_directory)).toEqual([
      ['/x/*', 'ask'],
      [`${f}/*`, 'allow'],
    ]);
    for (const bad of [undefined, '', 'not json', '[1]'])
      expect(JSON.parse(opencodePermission([f], { OPENCODE_PERMISSION: bad }).env.OPENCODE_PERMISSION!)).toEqual({
        external_directory: { [`${f}/*`]: 'allow' },
      });
  });

  it('the folders are made (0700) before the start', async () => {
    const profile = ProfileSchema.parse({ name: 'p', command: 'p', sharedFolders: { args: ['--dir={folder}'] } });
    const l = foldersLaunch(profile, { projectRoot: root, cwd: path.join(root, 'sub'), env: {} });
    await makeSharedFolders(l);
    for (const d of shared()) expect(((await stat(d)).mode & 0o777).toString(8), d).toBe('700');
    await makeSharedFolders(null);
  });
});
