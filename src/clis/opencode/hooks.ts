// opencode 1.18.33's hooks: a plugin in a throwaway config folder (OPENCODE_CONFIG_DIR) that passes
// its bus events to jaggers' hook bridge, and what those events say.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { HookInstall, HookInstallContext, HookKit, HookSignal } from '../types.js';
import { opencodePluginSource } from './plugin-source.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
/** A permission's question is for a status line: a command of any length is cut. */
const QUESTION_MAX = 500;

/**
 * OPENCODE_CONFIG_DIR adds a config folder to the person's own (~/.config/opencode, OPENCODE_CONFIG,
 * the project's): their models, providers, auth and jaggers' MCP config (OPENCODE_CONFIG) all still
 * apply. opencode installs `@opencode-ai/plugin` into every config folder that lacks it and, once any
 * plugin is configured, waits for that before it starts (offline: about 75 s of npm retries). It only
 * checks that `node_modules/` exists and that package-lock.json names the package, so both are written
 * here; the plugin imports nothing from it.
 */
export function opencodeInstall(ctx: HookInstallContext): HookInstall {
  const dir = ctx.dir.replace(/\/+$/, '');
  const lock = {
    name: 'jaggers-opencode-hooks',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { dependencies: { '@opencode-ai/plugin': ctx.version ?? '*' } } },
  };
  return {
    args: [],
    env: { OPENCODE_CONFIG_DIR: dir },
    files: [
      { path: `${dir}/plugins/jaggers.js`, text: opencodePluginSource(ctx.bridge) },
      { path: `${dir}/package-lock.json`, text: `${JSON.stringify(lock, null, 2)}\n` },
      {
        path: `${dir}/node_modules/.jaggers`,
        text: 'Left empty on purpose: opencode installs nothing here while this folder exists (see package-lock.json).\n',
      },
    ],
  };
}

/** One call of the plugin: the bus event (`{type, properties}`) or `chat.message`'s input. */
export function opencodeRead(event: string, payload: unknown): HookSignal[] {
  if (!isObject(payload)) return [];
  if (event === 'chat.message') {
    // The first place opencode names the session: there is no session-start hook.
    const sessionId = nonEmpty(payload.sessionID);
    return sessionId === undefined
      ? [{ kind: 'turn-start' }]
      : [
          { kind: 'session', sessionId },
          { kind: 'turn-start', sessionId },
        ];
  }
  const props = isObject(payload.properties) ? payload.properties : {};
  const sessionId = nonEmpty(props.sessionID);
  const withSession = sessionId === undefined ? {} : { sessionId };
  switch (event) {
    case 'session.status':
      // `busy` comes several times a turn (each step, and again after a permission is answered).
      return isObject(props.status) && props.status.type === 'busy' ? [{ kind: 'turn-start', ...withSession }] : [];
    case 'session.idle': {
      const reply = nonEmpty(payload.lastAssistantMessage);
      return [{ kind: 'turn-end', ...withSession, ...(reply === undefined ? {} : { reply }) }];
    }
    case 'permission.asked': {
      const patterns = Array.isArray(props.patterns) ? props.patterns.filter((p): p is string => typeof p === 'string') : [];
      const tool = nonEmpty(props.permission);
      const question = tool === undefined ? undefined : patterns.length > 0 ? `${tool}: ${patterns.join(' ')}` : tool;
      return [{ kind: 'waiting', ...withSession, ...(question === undefined ? {} : { question: question.slice(0, QUESTION_MAX) }) }];
    }
    default:
      return [];
  }
}

/**
 * opencode installs the dependencies of any plugin into the person's own `~/.config/opencode` on its
 * first online start; offline, before that, each start waits about 75 s for npm to give up (docs/clis.md).
 */
export function opencodeCaveat(env: NodeJS.ProcessEnv): string | null {
  const config = env.XDG_CONFIG_HOME || (env.HOME ? path.join(env.HOME, '.config') : null);
  if (!config) return null;
  const dir = path.join(config, 'opencode');
  if (existsSync(path.join(dir, 'node_modules'))) return null;
  return `${dir} has no node_modules/ yet: with its plugin, opencode's starts wait about 75 s offline until one online start fills it`;
}

export const opencodeHooks: HookKit = { install: opencodeInstall, read: opencodeRead, caveat: opencodeCaveat };
