// Installing a profile's hooks at a pane's start (issue 27): the kit's files only under
// .jaggers/hooks/<terminalId>/, its args and env in the launch, and the ways to turn hooks off.
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkInside, hookLaunch, hooksOff, profileSignals, writeHookFiles } from '../../src/agents/hooks-install.js';
import { planLaunch, type LaunchInput } from '../../src/agents/plan.js';
import { fakeAgentHooks } from '../../src/clis/fake-agent/hooks.js';
import { loadProfile } from '../../src/profiles/load.js';
import { ProfileSchema } from '../../src/profiles/schema.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'jg-hooks-'));
});
afterEach(async () => rm(root, { recursive: true, force: true }));

const profile = ProfileSchema.parse({ name: 'f', command: 'jaggers-fake-agent', detect: { hooks: 'fake-agent' } });
const input = (o: Partial<LaunchInput> = {}): LaunchInput => ({
  projectRoot: root,
  session: 's',
  socket: 'sock',
  binDir: '/pkg/bin',
  basePath: '/usr/bin',
  size: { width: 200, height: 50 },
  task: null,
  newSessionId: () => 'uuid-1',
  ...o,
});

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
      fakeAgentHooks.install = () => ({ args: [], env: {}, files: [], unavailable: "its settings file must be root's" });
      expect(profileSignals(full, '0.9.0')[0]).toBe("no hooks (fake-agent: its settings file must be root's)");
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
