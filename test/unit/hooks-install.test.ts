// Installing a profile's hooks at a pane's start (issue 27): the kit's files only under
// .jaggers/hooks/<terminalId>/, its args and env in the launch, and the ways to turn hooks off.
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkInside, hookLaunch, hooksOff, profileSignals, writeHookFiles } from '../../src/agents/hooks-install.js';
import { planLaunch, type LaunchInput } from '../../src/agents/plan.js';
import { fakeAgentHooks } from '../../src/clis/fake-agent/hooks.js';
import { loadProfile } from '../../src/profiles/load.js';
import { ProfileSchema } from '../../src/profiles/schema.js';
import { launchInput } from '../helpers/launch-input.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'jg-hooks-'));
});
afterEach(async () => rm(root, { recursive: true, force: true }));

const profile = ProfileSchema.parse({ name: 'f', command: 'jaggers-fake-agent', detect: { hooks: 'fake-agent' } });
const input = (o: Partial<LaunchInput> = {}): LaunchInput => launchInput(root, o);

describe('hook install', () => {
  it("qwen: one variable names jaggers' MCP config and the hooks, so the hook file holds both", async () => {
    const { profile: qwen } = await loadProfile('qwen', path.join(root, '.jaggers'));
    const l = planLaunch(input(), { name: 'q', profile: 'qwen', args: [], env: {} }, qwen, 'jg-2', null);
    const file = l.env.QWEN_CODE_SYSTEM_DEFAULTS_PATH!;
    expect(path.dirname(file)).toBe(path.join(root, '.jaggers', 'hooks', 'jg-2'));
    const text = l.hooks!.files.find((f) => f.path === file)!.text;
    const settings = JSON.parse(text) as { mcpServers: Record<string, unknown>; hooks: Record<string, unknown>; $version: number };
    expect(Object.keys(settings.mcpServers)).toEqual(['jaggers']);
    expect(Object.keys(settings.hooks)).toContain('Stop');
    expect(settings.$version).toBe(4);
  });

  it("the launch carries the kit's args; its file goes under .jaggers/hooks/<id>/ and calls the bridge with the spool and the id", async () => {
    const l = planLaunch(input(), { name: 'a', profile: 'f', args: [], env: {} }, profile, 'jg-1', null);
    const dir = path.join(root, '.jaggers', 'hooks', 'jg-1');
    const file = path.join(dir, 'fake-agent-hooks.json');
    expect(l.command).toEqual(['jaggers-fake-agent', '--hooks', file]);
    expect(l.hooksDir).toBe(dir);
    await writeHookFiles(l.hooks, null);
    const settings = JSON.parse(await readFile(file, 'utf8')) as { hooks: Record<string, string> };
    expect(settings.hooks.Stop).toBe(`sh /pkg/bin/jaggers-hook ${path.join(root, '.jaggers', 'hook-spool')} jg-1 Stop`);
    expect(await readdir(path.join(root, '.jaggers'))).toEqual(['hooks']);
    // Hooks off for the next start: the old install is removed.
    const off = planLaunch(input({ hooksOff: 'JAGGERS_HOOKS=0' }), { name: 'a', profile: 'f', args: [], env: {} }, profile, 'jg-1', null);
    expect(off.hooks).toBeNull();
    expect(off.command).toEqual(['jaggers-fake-agent']);
    await writeHookFiles(off.hooks, { dir: off.hooksDir });
    expect(await readdir(path.join(root, '.jaggers', 'hooks'))).toEqual([]);
    expect(planLaunch(input(), { name: 'a', profile: 'f', args: [], env: {}, hooks: false }, profile, 'jg-1', null).hooks).toBeNull();
  });

  it("refuses any file a kit names outside the terminal's hook folder", () => {
    const dir = path.join(root, '.jaggers', 'hooks', 'jg-1');
    for (const bad of [path.join(root, 'settings.json'), path.join(dir, '..', 'jg-2', 'x'), dir, 'relative.json', '/etc/passwd'])
      expect(() => checkInside(dir, bad, 'k'), bad).toThrow(/refusing to write .*hook files go only under/);
    expect(() => checkInside(dir, path.join(dir, 'sub', 'x.json'), 'k')).not.toThrow();
    const saved = fakeAgentHooks.install;
    try {
      fakeAgentHooks.install = () => ({ args: [], env: {}, files: [{ path: path.join(os.homedir(), '.claude', 'settings.json'), text: '{}' }] });
      expect(() => hookLaunch(profile, { projectRoot: root, binDir: '/b', terminalId: 'jg-1', cwd: root })).toThrow(/refusing to write/);
    } finally {
      fakeAgentHooks.install = saved;
    }
  });

  it('hooks are off with JAGGERS_HOOKS=0, "hooks": false in jaggers.json or on the agent', () => {
    expect(hooksOff({}, null, null)).toBeNull();
    expect(hooksOff({ JAGGERS_HOOKS: '1' }, { hooks: true }, { hooks: true })).toBeNull();
    expect(hooksOff({ JAGGERS_HOOKS: '0' }, null, null)).toBe('JAGGERS_HOOKS=0');
    expect(hooksOff({ JAGGERS_HOOKS: 'off' }, null, null)).toBe('JAGGERS_HOOKS=off');
    expect(hooksOff({}, { hooks: false }, null)).toMatch(/jaggers.json/);
    expect(hooksOff({}, null, { hooks: false })).toMatch(/agent/);
  });
});

describe("gemini's overlay home, through the launcher", () => {
  const spec = { name: 'g', profile: 'gemini', args: [], env: {} };

  it("is written under .jaggers/hooks/<id>/home with links to the person's ~/.gemini; gemini's writes reach their files; a restart rebuilds it; removing it leaves their files", async () => {
    const { profile: gem } = await loadProfile('gemini', path.join(root, '.jaggers'));
    const home = path.join(root, 'person');
    const g = path.join(home, '.gemini');
    await mkdir(path.join(g, 'tmp', 'p', 'chats'), { recursive: true });
    await writeFile(path.join(g, 'oauth_creds.json'), 'creds');
    await writeFile(path.join(g, 'settings.json'), '{"general": {"vimMode": true}}');
    // The agent's own HOME (jaggers.json env) wins over the supervisor's.
    const l = planLaunch(input({ baseEnv: { HOME: '/elsewhere', PATH: '/bin' } }), { ...spec, env: { HOME: home } }, gem, 'jg-7', null);
    const dir = path.join(root, '.jaggers', 'hooks', 'jg-7');
    const overlay = path.join(dir, 'home');
    expect(l.env).toMatchObject({ GEMINI_CLI_HOME: overlay, GEMINI_CLI_TRUSTED_FOLDERS_PATH: path.join(g, 'trustedFolders.json'), HOME: home });
    await writeHookFiles(l.hooks, null);
    expect(JSON.parse(await readFile(path.join(overlay, '.gemini', 'settings.json'), 'utf8'))).toMatchObject({
      general: { vimMode: true },
      hooks: { AfterAgent: [expect.anything()] },
    });
    expect(await readlink(path.join(overlay, '.gemini', 'tmp'))).toBe(path.join(g, 'tmp'));
    expect(await readFile(path.join(overlay, '.gemini', 'oauth_creds.json'), 'utf8')).toBe('creds');
    // history/ is made in their ~/.gemini (gemini makes it at its start); state.json is not, until written.
    expect((await lstat(path.join(g, 'history'))).isDirectory()).toBe(true);
    expect(await readdir(g)).not.toContain('state.json');
    await writeFile(path.join(overlay, '.gemini', 'state.json'), '{"n": 1}');
    await writeFile(path.join(overlay, '.gemini', 'tmp', 'p', 'chats', 'session-1.jsonl'), 'x');
    expect(await readFile(path.join(g, 'state.json'), 'utf8')).toBe('{"n": 1}');
    expect(await readdir(path.join(g, 'tmp', 'p', 'chats'))).toEqual(['session-1.jsonl']);

    // gemini replaced a link by a file of its own (projects.json: written to a temp file, then renamed),
    // and left a file the person has no link for: the next start puts the links back and drops the rest.
    await writeFile(path.join(g, 'projects.json'), '{"projects": {}}');
    await writeFile(path.join(overlay, '.gemini', 'projects.json'), 'overlay copy');
    await writeFile(path.join(overlay, '.gemini', 'stray'), 'x');
    const again = planLaunch(input({ baseEnv: { HOME: home } }), spec, gem, 'jg-7', 'sid');
    await writeHookFiles(again.hooks, null);
    expect(await readlink(path.join(overlay, '.gemini', 'projects.json'))).toBe(path.join(g, 'projects.json'));
    expect(await readdir(path.join(overlay, '.gemini'))).not.toContain('stray');

    // `down` removes .jaggers/hooks; hooks off for the next start remove the pane's folder: links go, their targets stay.
    await writeHookFiles(null, { dir });
    expect(await readdir(path.join(root, '.jaggers', 'hooks'))).toEqual([]);
    expect((await readdir(g)).sort()).toEqual(['history', 'oauth_creds.json', 'projects.json', 'settings.json', 'state.json', 'tmp']);
    expect(await readdir(path.join(g, 'tmp', 'p', 'chats'))).toEqual(['session-1.jsonl']);
    expect(await readFile(path.join(g, 'settings.json'), 'utf8')).toBe('{"general": {"vimMode": true}}');
  });

  it('refuses a link a kit names outside the hook folder', () => {
    const saved = fakeAgentHooks.install;
    try {
      fakeAgentHooks.install = (ctx) => ({ args: [], env: {}, files: [], links: [{ path: path.join(ctx.dir, '..', 'x'), target: '/' }] });
      expect(() => hookLaunch(profile, { projectRoot: root, binDir: '/b', terminalId: 'jg-1', cwd: root })).toThrow(/refusing to write/);
      fakeAgentHooks.install = (ctx) => ({ args: [], env: {}, files: [], links: [{ path: path.join(ctx.dir, 'l'), target: '/' }], fresh: [root] });
      expect(() => hookLaunch(profile, { projectRoot: root, binDir: '/b', terminalId: 'jg-1', cwd: root })).toThrow(/refusing to write/);
    } finally {
      fakeAgentHooks.install = saved;
    }
  });

  it("doctor and profile check: hooks (gemini), or why not when the person's settings file cannot be read as gemini does", async () => {
    const { profile: gem } = await loadProfile('gemini', path.join(root, '.jaggers'));
    const home = path.join(root, 'person');
    expect(profileSignals(gem, '0.61.0', path.join(root, '.jaggers'), { HOME: home })[0]).toBe('hooks (gemini)');
    await mkdir(path.join(home, '.gemini'), { recursive: true });
    await writeFile(path.join(home, '.gemini', 'settings.json'), '{"hooks": []}');
    expect(profileSignals(gem, '0.61.0', path.join(root, '.jaggers'), { HOME: home })[0]).toBe(
      `no hooks (gemini: "hooks" in ${path.join(home, '.gemini', 'settings.json')} is a list, not an object of hook lists: jaggers cannot join its hooks to it)`,
    );
    await writeFile(path.join(home, '.gemini', 'settings.json'), '{"hooksConfig": {"enabled": false}}');
    expect(profileSignals(gem, '0.61.0', path.join(root, '.jaggers'), { HOME: home })[0]).toMatch(/^hooks \(gemini; note: .* turns gemini's hooks off/);
    // Nothing written by asking.
    expect(await readdir(path.join(home, '.gemini'))).toEqual(['settings.json']);
  });
});

describe('profile signals (doctor, profile check)', () => {
  it('names hooks, state file and screen, strongest first; a kit that installs nothing for a release says so', () => {
    const full = ProfileSchema.parse({
      name: 'f',
      command: 'c',
      detect: { hooks: 'fake-agent', stateFile: 'fake-agent', rules: [{ name: 'r', status: 'idle', pattern: 'x' }] },
    });
    expect(profileSignals(full, '1.0.0')).toEqual(['hooks (fake-agent)', 'state file (fake-agent)', 'screen (1 rule)']);
    const saved = fakeAgentHooks.install;
    try {
      fakeAgentHooks.install = () => ({ args: [], env: {}, files: [] });
      expect(profileSignals(full, '0.9.0')[0]).toBe('no hooks on release 0.9.0 (fake-agent installs none)');
      fakeAgentHooks.install = () => ({ args: [], env: {}, files: [], unavailable: 'its settings file cannot be joined' });
      expect(profileSignals(full, '0.9.0')[0]).toBe('no hooks (fake-agent: its settings file cannot be joined)');
    } finally {
      fakeAgentHooks.install = saved;
    }
    expect(profileSignals(ProfileSchema.parse({ name: 's', command: 'c' }), null)).toEqual(['screen (0 rules)']);
  });
});

describe("opencode's caveat", () => {
  it("says when the person's ~/.config/opencode has no node_modules/ (an offline start then waits ~75 s), and nothing once it has", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'jg-oc-'));
    try {
      const opencode = ProfileSchema.parse({ name: 'o', command: 'opencode', detect: { hooks: 'opencode' } });
      const first = profileSignals(opencode, '1.18.33', home, { HOME: home })[0];
      expect(first).toBe(
        `hooks (opencode; note: ${path.join(home, '.config', 'opencode')} has no node_modules/ yet: with its plugin, opencode's starts wait about 75 s offline until one online start fills it)`,
      );
      await mkdir(path.join(home, 'xdg', 'opencode', 'node_modules'), { recursive: true });
      expect(profileSignals(opencode, '1.18.33', home, { HOME: home, XDG_CONFIG_HOME: path.join(home, 'xdg') })[0]).toBe('hooks (opencode)');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('the fake agent hook kit', () => {
  it('reads its payloads defensively', () => {
    const r = fakeAgentHooks.read;
    expect(r('SessionStart', { session_id: 's-1', transcript_path: '/t' })).toEqual([{ kind: 'session', sessionId: 's-1', transcriptPath: '/t' }]);
    expect(r('UserPromptSubmit', { session_id: 's-1' })).toEqual([{ kind: 'turn-start', sessionId: 's-1' }]);
    expect(r('Stop', { session_id: 's-1', last_assistant_message: 'x' })).toEqual([{ kind: 'turn-end', sessionId: 's-1', reply: 'x' }]);
    expect(r('Stop', { last_assistant_message: 42 })).toEqual([{ kind: 'turn-end' }]);
    expect(r('PermissionRequest', { message: 'Allow?' })).toEqual([{ kind: 'waiting', question: 'Allow?' }]);
    expect(r('SessionStart', { session_id: '../../etc' })).toEqual([]);
    expect(r('Stop', 'not json')).toEqual([]);
    expect(r('Stop', null)).toEqual([]);
    expect(r('Stop', [1])).toEqual([]);
    expect(r('Other', {})).toEqual([]);
  });
});
