// The real agent CLIs the end-to-end tests drive, pinned to versions that run on Node 20.
// scripts/install-real-clis.sh installs exactly these; keep the two in sync.

import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type CliName = 'claude' | 'qwen' | 'gemini' | 'codex';

export interface CliInfo {
  name: CliName;
  pkg: string;
  version: string;
  /** The binary, relative to the install prefix. */
  bin: string;
}

export const CLIS: Record<CliName, CliInfo> = {
  claude: { name: 'claude', pkg: '@anthropic-ai/claude-code', version: '2.1.197', bin: 'node_modules/.bin/claude' },
  qwen: { name: 'qwen', pkg: '@qwen-code/qwen-code', version: '0.15.10', bin: 'node_modules/.bin/qwen' },
  gemini: { name: 'gemini', pkg: '@google/gemini-cli', version: '0.61.0', bin: 'node_modules/.bin/gemini' },
  codex: { name: 'codex', pkg: '@openai/codex', version: '0.169.0', bin: 'node_modules/.bin/codex' },
};

export const CLI_NAMES = Object.keys(CLIS) as CliName[];

export function cliCacheDir(): string {
  return process.env.JAGGERS_CLI_CACHE ?? join(homedir(), '.cache', 'jaggers', 'clis');
}

export function cliPrefix(cli: CliName): string {
  return join(cliCacheDir(), `${cli}-${CLIS[cli].version}`);
}

function installedBinary(cli: CliName): string | undefined {
  const prefix = cliPrefix(cli);
  const bin = join(prefix, CLIS[cli].bin);
  if (!existsSync(join(prefix, '.jaggers-installed'))) return undefined;
  try {
    accessSync(bin, constants.X_OK);
    return bin;
  } catch {
    return undefined;
  }
}

export function isCliInstalled(cli: CliName): boolean {
  return installedBinary(cli) !== undefined;
}

/** Path of the installed binary; throws with the install command when it is missing. */
export function cliBinary(cli: CliName): string {
  const bin = installedBinary(cli);
  if (bin === undefined) {
    const { pkg, version } = CLIS[cli];
    throw new Error(`${cli} ${version} (${pkg}) is not installed in ${cliPrefix(cli)}: run scripts/install-real-clis.sh ${cli}`);
  }
  return bin;
}
