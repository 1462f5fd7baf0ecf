// A throwaway HOME and environment per real CLI, written so that it starts straight to its input box
// (no onboarding, trust, key-approval or update dialogs) and talks only to the stub model server.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIS, cliPrefix, type CliName } from './clis.js';

export interface CliHomeOptions {
  /** A temp folder owned by the test; the HOME and scratch folders go inside it. */
  root: string;
  /** Port of the stub model server on 127.0.0.1. */
  port: number;
  /** The folder the CLI runs in (trusted in each CLI's config). */
  cwd: string;
  /** false: claude is not told to trust any folder, so it asks (its first-run trust dialog). */
  trust?: boolean;
}

export interface CliHome {
  /** The complete environment for the CLI (not to be merged with the test's own). */
  env: Record<string, string>;
  home: string;
}

export const STUB_API_KEY = 'sk-stub-0123456789abcdefghijklmnop';
export const STUB_MODEL = 'stub-model';
/** opencode speaks OpenAI Chat Completions as qwen does: its own model name tells its requests apart. */
export const OPENCODE_MODEL = 'stub-model-opencode';
/** And so does copilot, under a third name. */
export const COPILOT_MODEL = 'stub-model-copilot';

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Variables every CLI gets: a terminal, UTF-8, and no way to update itself into the real prefix. */
function baseEnv(home: string, root: string): Record<string, string> {
  const npmPrefix = join(root, 'npm-prefix');
  const tmp = join(root, 'tmp');
  mkdirSync(npmPrefix, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  return {
    HOME: home,
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'xterm-256color',
    COLORTERM: 'truecolor',
    // claude keeps task output under $TMPDIR/claude-<uid>: keep that inside the test's folder too.
    TMPDIR: tmp,
    npm_config_prefix: npmPrefix,
    NO_UPDATE_NOTIFIER: '1',
    npm_config_update_notifier: 'false',
    NO_BROWSER: 'true',
    DO_NOT_TRACK: '1',
  };
}

function claude(home: string, opts: CliHomeOptions): Record<string, string> {
  writeJson(join(home, '.claude.json'), {
    hasCompletedOnboarding: true,
    // 2.1.330 asks once "Make auto mode your default permission mode?" of anyone whose settings name
    // another mode; this is what answering it leaves behind.
    hasSeenAutoDefaultNudge: true,
    theme: 'dark',
    customApiKeyResponses: { approved: [STUB_API_KEY.slice(-20)], rejected: [] },
    // Trusting `/` covers every folder; the cwd is listed too in case a version stops inheriting.
    projects:
      opts.trust === false
        ? {}
        : {
            '/': { hasTrustDialogAccepted: true },
            [opts.cwd]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true },
          },
  });
  mkdirSync(join(home, '.claude'), { recursive: true });
  // Since 2.1.330 auto mode is the default and runs a shell command without asking; the suite checks
  // approval menus, so it asks for the standard mode (`profile check` and the fixtures cover auto mode).
  writeJson(join(home, '.claude', 'settings.json'), { skipDangerousModePermissionPrompt: true, permissions: { defaultMode: 'default' } });
  return {
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${opts.port}`,
    ANTHROPIC_API_KEY: STUB_API_KEY,
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  };
}

function qwen(home: string, opts: CliHomeOptions): Record<string, string> {
  mkdirSync(join(home, '.qwen'), { recursive: true });
  writeJson(join(home, '.qwen', 'settings.json'), {
    general: { enableAutoUpdate: false },
    memory: { enableManagedAutoMemory: false },
    security: { auth: { selectedType: 'openai' } },
    privacy: { usageStatisticsEnabled: false },
    // 0.24 starts in auto mode (an LLM classifier decides on each tool call): ask as 0.15 did.
    tools: { approvalMode: 'default' },
  });
  return {
    OPENAI_BASE_URL: `http://127.0.0.1:${opts.port}/v1`,
    OPENAI_API_KEY: STUB_API_KEY,
    OPENAI_MODEL: STUB_MODEL,
    QWEN_CODE_NO_RELAUNCH: 'true',
  };
}

function gemini(home: string, opts: CliHomeOptions): Record<string, string> {
  mkdirSync(join(home, '.gemini'), { recursive: true });
  writeJson(join(home, '.gemini', 'settings.json'), {
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    // 0.24 starts in auto mode (an LLM classifier decides on each tool call): ask as 0.15 did.
    tools: { approvalMode: 'default' },
  });
  return {
    GEMINI_API_KEY: STUB_API_KEY,
    GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${opts.port}`,
    GEMINI_CLI_NO_RELAUNCH: 'true',
  };
}

const tomlString = (s: string): string => JSON.stringify(s);

function codex(home: string, opts: CliHomeOptions): Record<string, string> {
  const codexHome = join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      `model = ${tomlString(STUB_MODEL)}`,
      'model_provider = "stub"',
      'check_for_update_on_startup = false',
      // Asks before a command that wants to leave the sandbox (the stub's tool calls ask to).
      'approval_policy = "on-request"',
      '',
      '[model_providers.stub]',
      'name = "stub"',
      `base_url = ${tomlString(`http://127.0.0.1:${opts.port}/v1`)}`,
      'env_key = "STUB_API_KEY"',
      'wire_api = "responses"',
      '',
      '[features]',
      // Else the TUI leaves a `codex app-server` daemon running after it exits.
      'daemon_auto_start = false',
      '',
      `[projects.${tomlString(opts.cwd)}]`,
      'trust_level = "trusted"',
      '',
    ].join('\n'),
  );
  return { CODEX_HOME: codexHome, STUB_API_KEY };
}

/**
 * What a person who has run opencode online once has in ~/.config/opencode, as far as opencode 1.18.33
 * looks: a `node_modules/` and a package-lock.json naming `@opencode-ai/plugin` (src/clis/opencode/hooks.ts
 * writes the same into jaggers' own config folder). Without it, a start with jaggers' hooks installs the
 * package from the npm registry first (64 MB, about 13 s of a core and 10-20 s before the CLI is done
 * starting, measured here), and offline waits about 75 s for npm to give up; every test HOME is new.
 */
export function seedOpencodeConfigDir(home: string): void {
  const dir = join(home, '.config', 'opencode');
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  writeJson(join(dir, 'package-lock.json'), { packages: { '': { dependencies: { '@opencode-ai/plugin': CLIS.opencode.version } } } });
}

function opencode(home: string, opts: CliHomeOptions): Record<string, string> {
  const dir = join(home, '.config', 'opencode');
  mkdirSync(dir, { recursive: true });
  seedOpencodeConfigDir(home);
  writeJson(join(dir, 'opencode.json'), {
    $schema: 'https://opencode.ai/config.json',
    model: `stub/${OPENCODE_MODEL}`,
    // Titles are asked of the small model: the stub answers those as a side request.
    small_model: `stub/${OPENCODE_MODEL}`,
    autoupdate: false,
    share: 'disabled',
    // Its build agent runs shell commands without asking by default: ask, so approval menus can be tested.
    permission: { bash: 'ask' },
    provider: {
      stub: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Stub',
        options: { baseURL: `http://127.0.0.1:${opts.port}/v1`, apiKey: '{env:STUB_API_KEY}' },
        models: { [OPENCODE_MODEL]: { name: 'Stub Model', limit: { context: 128000, output: 8192 } } },
      },
    },
  });
  return {
    STUB_API_KEY,
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    // Else it fetches its model catalog from models.dev (harmless offline, but a request all the same).
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  };
}

function copilot(home: string, opts: CliHomeOptions): Record<string, string> {
  const dir = join(home, '.copilot');
  mkdirSync(dir, { recursive: true });
  // Trusted folders are read from config.json only (in settings.json they are ignored: the dialog shows).
  writeJson(join(dir, 'config.json'), opts.trust === false ? {} : { trustedFolders: [opts.cwd] });
  writeJson(join(dir, 'settings.json'), { banner: 'never', showTipsOnStartup: false, tabs: { enabled: false } });
  return {
    // A provider of one's own (BYOK): no GitHub sign-in; offline: no telemetry, web tools or updates.
    COPILOT_PROVIDER_BASE_URL: `http://127.0.0.1:${opts.port}/v1`,
    COPILOT_PROVIDER_API_KEY: STUB_API_KEY,
    COPILOT_MODEL,
    COPILOT_OFFLINE: 'true',
    // Both set, or it warns on screen that the model is not in its catalog.
    COPILOT_PROVIDER_MAX_PROMPT_TOKENS: '128000',
    COPILOT_PROVIDER_MAX_OUTPUT_TOKENS: '8192',
    // Its first run unpacks ~235 MB under $XDG_CACHE_HOME/copilot: the one install-real-clis.sh made.
    XDG_CACHE_HOME: join(cliPrefix('copilot'), 'xdg-cache'),
  };
}

const SPECIFIC: Record<CliName, (home: string, opts: CliHomeOptions) => Record<string, string>> = { claude, qwen, gemini, codex, opencode, copilot };

export function prepareCliHome(cli: CliName, opts: CliHomeOptions): CliHome {
  const home = join(opts.root, `home-${cli}`);
  mkdirSync(home, { recursive: true });
  const specific = SPECIFIC[cli](home, opts);
  return { env: { ...baseEnv(home, opts.root), ...specific }, home };
}

/** Arguments that start a new conversation, pinned to `sessionId` where the CLI allows it. */
export function startArgs(cli: CliName, sessionId: string): string[] {
  // codex and opencode cannot pin an id at start: it is read from their own records after the first turn.
  return cli === 'codex' || cli === 'opencode' ? [] : ['--session-id', sessionId];
}

/** Arguments that reopen the conversation `id`. */
export function resumeArgs(cli: CliName, id: string): string[] {
  switch (cli) {
    case 'claude':
    case 'copilot':
      return ['--resume', id];
    case 'qwen':
    case 'gemini':
      return ['-r', id];
    case 'codex':
      return ['resume', id];
    case 'opencode':
      return ['--session', id];
  }
}
