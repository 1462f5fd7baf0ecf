// gemini's HookKit: when it can install (gemini reads a per-process settings file only when root owns
// it and every folder above it), what it installs, and what `read` makes of every payload gemini 0.61.0
// sent in test/e2e/hooks-gemini.test.ts (test/fixtures/hooks/gemini-*.json), and of other shapes.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gemini } from '../../../src/clis/gemini/index.js';
import { GEMINI_HOOK_EVENTS, geminiHooks, geminiInstaller, whyNotSecure, type GeminiProbe, type PathInfo } from '../../../src/clis/gemini/hooks.js';
import { HOOK_FIXTURES, hookFixture, kitContext } from '../../helpers/hook-fixtures.js';

const fixture = hookFixture;
const read = geminiHooks.read;
const V = 'gemini-0.61.0';
const ctx = kitContext('/srv/p', '0.61.0');

/** A machine where `uid` runs jaggers and these paths exist (the rest do not). */
const probe = (uid: number | undefined, paths: Record<string, PathInfo>): GeminiProbe => ({ uid: () => uid, info: (p) => paths[p] ?? null });
const rootDir: PathInfo = { uid: 0, mode: 0o40755 };
const safe = { '/': rootDir, '/srv': rootDir, '/srv/p': rootDir };

describe('gemini hooks: install', () => {
  it('is the gemini folder kind `gemini`', () => {
    expect(gemini.hooks.gemini).toBe(geminiHooks);
  });

  it('as root under root-owned folders: GEMINI_CLI_SYSTEM_DEFAULTS_PATH to one settings file in the pane hook folder', () => {
    const install = geminiInstaller(probe(0, safe))(ctx);
    expect(install.unavailable).toBeUndefined();
    expect(install.args).toEqual([]);
    expect(install.env).toEqual({ GEMINI_CLI_SYSTEM_DEFAULTS_PATH: '/srv/p/.jaggers/hooks/t1/gemini-system-defaults.json' });
    expect(install.files.map((f) => f.path)).toEqual(['/srv/p/.jaggers/hooks/t1/gemini-system-defaults.json']);
    const settings = JSON.parse(install.files[0]!.text) as { hooks: Record<string, { hooks: Record<string, unknown>[] }[]> };
    expect(Object.keys(settings.hooks)).toEqual([...GEMINI_HOOK_EVENTS]);
    for (const event of GEMINI_HOOK_EVENTS) {
      expect(settings.hooks[event]).toEqual([
        { hooks: [{ type: 'command', name: `jaggers-${event}`, command: `${ctx.bridgeShell} ${event}`, timeout: 5000 }] },
      ]);
    }
  });

  it('as an ordinary user: nothing installed, and why', () => {
    const install = geminiInstaller(probe(1000, safe))(ctx);
    expect(install).toMatchObject({ args: [], env: {}, files: [] });
    expect(install.unavailable).toMatch(/only when root owns it.*uid 1000.*outside \.jaggers/);
    expect(geminiInstaller(probe(undefined, safe))(ctx).unavailable).toMatch(/uid unknown/);
  });

  it('as root, refuses a folder above that another user owns, that group or others may write, or a symlink not root own', () => {
    expect(whyNotSecure(ctx.dir, probe(0, { ...safe, '/srv/p': { uid: 1000, mode: 0o40755 } }))).toBe(
      'gemini refuses its settings file under /srv/p: owned by uid 1000, not root',
    );
    expect(whyNotSecure(ctx.dir, probe(0, { ...safe, '/srv': { uid: 0, mode: 0o41777 } }))).toBe(
      'gemini refuses its settings file under /srv: group or others may write it (mode 1777)',
    );
    expect(whyNotSecure(ctx.dir, probe(0, { ...safe, '/srv/p/.jaggers': { uid: 0, mode: 0o40775 } }))).toMatch(/under \/srv\/p\/\.jaggers: group or others/);
    expect(whyNotSecure(ctx.dir, probe(0, { ...safe, '/srv': { uid: 0, mode: 0o40755, link: { uid: 1000 } } }))).toMatch(/a symlink owned by uid 1000/);
    expect(geminiInstaller(probe(0, { ...safe, '/': { uid: 0, mode: 0o40777 } }))(ctx)).toMatchObject({
      env: {},
      files: [],
      unavailable: expect.stringContaining('under /:'),
    });
  });

  it('checks the real folders with the node probe: /tmp is writable by others', async () => {
    const { nodeProbe } = await import('../../../src/clis/gemini/hooks.js');
    expect(whyNotSecure('/tmp/x/.jaggers/hooks/t1', { ...nodeProbe, uid: () => 0 })).toMatch(/under \/tmp: group or others may write it \(mode 1777\)/);
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
