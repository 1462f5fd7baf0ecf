// gemini's HookKit: the overlay home it installs (GEMINI_CLI_HOME: the person's settings.json with
// jaggers' hooks joined in, links to the rest of their ~/.gemini), built on a temp folder here, and what
// `read` makes of every payload gemini 0.61.0 sent in test/e2e/hooks-gemini.test.ts
// (test/fixtures/hooks/gemini-*.json), and of other shapes.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gemini } from '../../../src/clis/gemini/index.js';
import { GEMINI_HOOK_EVENTS, geminiCaveat, geminiHomeOf, geminiHooks, geminiInstaller, nodeReader } from '../../../src/clis/gemini/hooks.js';
import { joinHooks, parseSettings, stripJsonComments } from '../../../src/clis/gemini/settings-join.js';
import type { HookInstall } from '../../../src/clis/types.js';
import { HOOK_FIXTURES, hookFixture, kitContext } from '../../helpers/hook-fixtures.js';

const fixture = hookFixture;
const read = geminiHooks.read;
const V = 'gemini-0.61.0';

let tmp: string;
let home: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'jg-gemini-'));
  home = path.join(tmp, 'home');
  await mkdir(home);
});
afterEach(async () => rm(tmp, { recursive: true, force: true }));

const project = () => path.join(tmp, 'p');
const install = (env: Record<string, string | undefined> = { HOME: home }): HookInstall =>
  geminiInstaller(nodeReader)({ ...kitContext(project(), '0.61.0'), env });
const settingsOf = (i: HookInstall) => JSON.parse(i.files[0]!.text) as { hooks: Record<string, unknown[]> } & Record<string, unknown>;
const linksOf = (i: HookInstall) =>
  Object.fromEntries((i.links ?? []).map((l) => [path.relative(path.join(project(), '.jaggers/hooks/t1/home'), l.path), l.target]));
const ours = (event: string) => ({
  hooks: [{ type: 'command', name: `jaggers-${event}`, command: `sh /opt/jaggers/bin/jaggers-hook ${project()}/.jaggers/spool t1 ${event}`, timeout: 5000 }],
});

describe('gemini hooks: install (the overlay home)', () => {
  it('is the gemini folder kind `gemini`', () => {
    expect(gemini.hooks.gemini).toBe(geminiHooks);
  });

  it("a person's ~/.gemini: GEMINI_CLI_HOME names the overlay; its settings.json is theirs with jaggers' hooks before their own; every other entry a link", async () => {
    const g = path.join(home, '.gemini');
    await mkdir(path.join(g, 'tmp', 'p', 'chats'), { recursive: true });
    await mkdir(path.join(g, 'history'));
    await mkdir(path.join(g, 'extensions'));
    for (const f of ['oauth_creds.json', 'google_accounts.json', 'projects.json', 'trustedFolders.json', 'installation_id', 'GEMINI.md'])
      await writeFile(path.join(g, f), '{}');
    await writeFile(
      path.join(g, 'settings.json'),
      `{
  // theirs, with comments
  "security": { "auth": { "selectedType": "oauth-personal" } }, /* and "a // string" */
  "ui": { "theme": "http://x/y // not a comment" },
  "hooks": { "AfterAgent": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }], "disabled": ["x"] },
  "hooksConfig": { "notifications": true }
}`,
    );
    await writeFile(path.join(home, '.env'), 'GEMINI_API_KEY=k\n');
    const i = install();
    const dir = path.join(project(), '.jaggers', 'hooks', 't1');
    const overlay = path.join(dir, 'home');
    expect(i.unavailable).toBeUndefined();
    expect(i.args).toEqual([]);
    expect(i.env).toEqual({ GEMINI_CLI_HOME: overlay, GEMINI_CLI_TRUSTED_FOLDERS_PATH: path.join(g, 'trustedFolders.json') });
    expect(i.files.map((f) => f.path)).toEqual([path.join(overlay, '.gemini', 'settings.json')]);
    const s = settingsOf(i);
    expect(s.security).toEqual({ auth: { selectedType: 'oauth-personal' } });
    expect(s.ui).toEqual({ theme: 'http://x/y // not a comment' });
    expect(s.hooksConfig).toEqual({ notifications: true });
    expect(s.hooks.disabled).toEqual(['x']);
    expect(s.hooks.AfterAgent).toEqual([ours('AfterAgent'), { hooks: [{ type: 'command', command: 'notify-send done' }] }]);
    for (const event of GEMINI_HOOK_EVENTS) expect(s.hooks[event]![0]).toEqual(ours(event));
    // Every entry but settings.json, tmp/ and history/ (made at every start) and the files gemini writes
    // in place even when absent; ~/.env (gemini reads it from its home).
    const links = linksOf(i);
    expect(Object.keys(links).sort()).toEqual(
      [
        '.env',
        ...['GEMINI.md', 'extensions', 'gemini-credentials.json', 'google_accounts.json', 'history', 'installation_id', 'mcp-oauth-tokens.json'].map(
          (n) => `.gemini/${n}`,
        ),
        ...['oauth_creds.json', 'projects.json', 'state.json', 'tmp', 'trustedFolders.json', 'trusted_hooks.json'].map((n) => `.gemini/${n}`),
      ].sort(),
    );
    expect(links['.gemini/tmp']).toBe(path.join(g, 'tmp'));
    expect(links['.env']).toBe(path.join(home, '.env'));
    expect(links).not.toHaveProperty('.gemini/settings.json');
    expect(links).not.toHaveProperty('.agents');
    expect(i.fresh).toEqual([overlay]);
    expect(i.folders).toEqual([]);
  });

  it('a first run (no ~/.gemini): tmp/ and history/ are made in it, as gemini makes them at its start; the settings hold only the hooks', () => {
    const i = install();
    const g = path.join(home, '.gemini');
    expect(i.folders).toEqual([path.join(g, 'tmp'), path.join(g, 'history')]);
    expect(settingsOf(i)).toEqual({ hooks: Object.fromEntries(GEMINI_HOOK_EVENTS.map((e) => [e, [ours(e)]])) });
    expect(linksOf(i)['.gemini/tmp']).toBe(path.join(g, 'tmp'));
    expect(linksOf(i)['.gemini/state.json']).toBe(path.join(g, 'state.json'));
  });

  it("the pane's own GEMINI_CLI_HOME is the person's gemini home; its own GEMINI_CLI_TRUSTED_FOLDERS_PATH is kept; a relative one is from the pane's folder", async () => {
    const custom = path.join(tmp, 'gh');
    await mkdir(path.join(custom, '.gemini'), { recursive: true });
    await writeFile(path.join(custom, '.gemini', 'settings.json'), '{"model": {"name": "m"}}');
    const i = install({ HOME: home, GEMINI_CLI_HOME: custom, GEMINI_CLI_TRUSTED_FOLDERS_PATH: '/t.json' });
    expect(settingsOf(i).model).toEqual({ name: 'm' });
    expect(i.env).toEqual({ GEMINI_CLI_HOME: path.join(project(), '.jaggers', 'hooks', 't1', 'home') });
    expect(i.folders).toEqual([path.join(custom, '.gemini', 'tmp'), path.join(custom, '.gemini', 'history')]);
    expect(geminiHomeOf({ GEMINI_CLI_HOME: 'rel', HOME: '/h' }, '/p')).toBe('/p/rel');
    expect(geminiHomeOf({ HOME: '/h', GEMINI_CLI_HOME: ' ' }, '/p')).toBe('/h');
    expect(geminiHomeOf({}, '/p', () => '/fallback')).toBe('/fallback');
    // Without an environment from the launcher: the supervisor's own.
    expect(geminiInstaller(nodeReader, () => ({ HOME: custom }))(kitContext(project(), '0.61.0')).folders).toEqual(i.folders);
  });

  it("a settings file of the person's that gemini would refuse, or with hooks that cannot be joined: no hooks, and why, naming the file", async () => {
    const file = path.join(home, '.gemini', 'settings.json');
    await mkdir(path.dirname(file));
    const why = async (text: string) => {
      await writeFile(file, text);
      const i = install();
      expect(i).toMatchObject({ args: [], env: {}, files: [] });
      expect(i.links).toBeUndefined();
      return i.unavailable;
    };
    expect(await why('{"a": 1,,}')).toMatch(new RegExp(`^${file} is not valid JSON \\(.*\\); gemini refuses to start with it too$`));
    expect(await why('[1]')).toBe(`${file} holds a list, not a JSON object; gemini refuses to start with it too`);
    expect(await why('"x"')).toMatch(/holds a string, not a JSON object/);
    expect(await why('{"hooks": "x"}')).toBe(`"hooks" in ${file} is a string, not an object of hook lists: jaggers cannot join its hooks to it`);
    expect(await why('{"hooks": {"BeforeAgent": {"hooks": []}}}')).toBe(
      `"hooks.BeforeAgent" in ${file} is an object, not a list: jaggers cannot join its hook to it`,
    );
    // Read defensively: an empty file (or comments only) is no settings; a folder in its place cannot be read.
    await writeFile(file, '  // nothing\n');
    expect(install()).not.toHaveProperty('unavailable');
    await rm(file);
    await mkdir(file);
    expect(install().unavailable).toMatch(new RegExp(`^cannot read ${file}: .*EISDIR`));
    await rm(path.join(home, '.gemini'), { recursive: true });
    await writeFile(path.join(home, '.gemini'), 'not a folder');
    expect(install().unavailable).toMatch(/^cannot read .*\.gemini: .*ENOTDIR/);
  });

  it("refuses a gemini home inside the pane's hook folder (a GEMINI_CLI_HOME left from another pane)", () => {
    const inside = path.join(project(), '.jaggers', 'hooks', 't1', 'home');
    expect(install({ GEMINI_CLI_HOME: inside }).unavailable).toMatch(/is inside jaggers' hook folder/);
    expect(install({ GEMINI_CLI_HOME: path.join(project(), '.jaggers', 'hooks', 't1') }).unavailable).toMatch(/is inside/);
  });

  it("caveat: the person's settings turn every hook off", async () => {
    const caveat = geminiCaveat(nodeReader);
    expect(caveat({ HOME: home })).toBeNull();
    await mkdir(path.join(home, '.gemini'));
    await writeFile(path.join(home, '.gemini', 'settings.json'), '{"hooksConfig": {"enabled": false}}');
    expect(caveat({ HOME: home })).toMatch(/settings\.json turns gemini's hooks off \(hooksConfig\.enabled: false\), jaggers' with them/);
    await writeFile(path.join(home, '.gemini', 'settings.json'), '{not json');
    expect(caveat({ HOME: home })).toBeNull();
  });
});

describe('gemini settings: comments and joining', () => {
  it('strips // and /* */ comments outside strings, keeping line breaks and escaped quotes', () => {
    expect(stripJsonComments('{"a": "x//y", // c\n"b": "q\\"/*z*/"} /* multi\nline */')).toBe('{"a": "x//y",     \n"b": "q\\"/*z*/"}         \n       ');
    expect(parseSettings('{"a": /* 1 */ 2}', 'f')).toEqual({ ok: true, settings: { a: 2 } });
    expect(parseSettings('\uFEFF{}', 'f')).toEqual({ ok: true, settings: {} });
  });

  it('joins per event, ours first (a sequential hook of theirs does not hold ours back), without touching their other events', () => {
    const mine = { BeforeAgent: [{ hooks: [{ command: 'me' }] }] };
    const got = joinHooks({ hooks: { BeforeAgent: [{ sequential: true, hooks: [{ command: 'them' }] }], AfterTool: [1] } }, mine, 'f');
    expect(got).toEqual({
      ok: true,
      settings: { hooks: { BeforeAgent: [{ hooks: [{ command: 'me' }] }, { sequential: true, hooks: [{ command: 'them' }] }], AfterTool: [1] } },
    });
    expect(joinHooks({}, mine, 'f')).toEqual({ ok: true, settings: { hooks: mine } });
  });
});

describe('gemini hooks: read, on gemini 0.61.0 payloads', () => {
  const start = fixture(`${V}-SessionStart-start`) as { session_id: string; transcript_path: string };
  const id = start.session_id;

  it('SessionStart at startup: the session and its chat file', () => {
    expect(read('SessionStart', start)).toEqual([{ kind: 'session', sessionId: id, transcriptPath: start.transcript_path }]);
  });

  it('SessionStart on resume: the session, not the new file its transcript_path names', () => {
    const resumed = fixture(`${V}-SessionStart-resume`) as { transcript_path: string; source: string };
    expect(resumed.source).toBe('resume');
    expect(resumed.transcript_path).not.toBe(start.transcript_path);
    expect(read('SessionStart', resumed)).toEqual([{ kind: 'session', sessionId: id }]);
  });

  it('BeforeAgent starts a turn', () => {
    for (const what of ['text', 'tool', 'resumed-text'])
      expect(read('BeforeAgent', fixture(`${V}-BeforeAgent-${what}`))).toEqual([{ kind: 'turn-start', sessionId: id }]);
  });

  it('AfterAgent ends it, with the chat file (also after a resume) and no reply: prompt_response is not the reply', () => {
    for (const what of ['text', 'tool', 'resumed-text']) {
      expect(read('AfterAgent', fixture(`${V}-AfterAgent-${what}`))).toEqual([{ kind: 'turn-end', sessionId: id, transcriptPath: start.transcript_path }]);
    }
  });

  it('Notification ToolPermission: waiting, with its message', () => {
    expect(read('Notification', fixture(`${V}-Notification-tool`))).toEqual([
      { kind: 'waiting', sessionId: id, question: 'Tool Confirm Shell Command requires execution' },
    ]);
  });

  it('every fixture reads without throwing, to signals naming the fixture session', () => {
    for (const name of readdirSync(HOOK_FIXTURES).filter((n) => n.startsWith(`${V}-`))) {
      const event = name.slice(V.length + 1).split('-')[0]!;
      const signals = read(event, fixture(name.slice(0, -'.json'.length)));
      expect(signals.length).toBeGreaterThan(0);
      for (const s of signals) expect(s.sessionId).toBe(id);
    }
  });
});

describe('gemini hooks: read, on payloads of other shapes', () => {
  it('gives [] for a payload that is not an object, and for events it does not know', () => {
    for (const p of [null, undefined, 'text', 42, [], ['a']]) expect(read('AfterAgent', p)).toEqual([]);
    expect(read('BeforeTool', { session_id: 's' })).toEqual([]);
    expect(read('Notification', { session_id: 's', notification_type: 'Other' })).toEqual([]);
  });

  it('leaves out fields of the wrong type, never throws', () => {
    expect(read('AfterAgent', { session_id: 1, transcript_path: {}, prompt_response: 'chunks joined' })).toEqual([{ kind: 'turn-end' }]);
    expect(read('BeforeAgent', {})).toEqual([{ kind: 'turn-start' }]);
    expect(read('SessionStart', { transcript_path: '/x' })).toEqual([]);
    expect(read('Notification', { notification_type: 'ToolPermission', message: 3 })).toEqual([{ kind: 'waiting' }]);
  });
});
