// The real agent CLIs the end-to-end tests drive, pinned to versions that run on Node 20.
// scripts/install-real-clis.sh installs exactly these; keep the two in sync.

import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type CliName = 'claude' | 'qwen' | 'gemini' | 'codex' | 'opencode' | 'copilot';

export interface CliInfo {
  name: CliName;
  pkg: string;
  version: string;
  /** The binary, relative to the install prefix. */
  bin: string;
}

const PINNED: Record<CliName, CliInfo> = {
  claude: { name: 'claude', pkg: '@anthropic-ai/claude-code', version: '2.1.330', bin: 'node_modules/.bin/claude' },
  qwen: { name: 'qwen', pkg: '@qwen-code/qwen-code', version: '0.24.4', bin: 'node_modules/.bin/qwen' },
  gemini: { name: 'gemini', pkg: '@google/gemini-cli', version: '0.61.0', bin: 'node_modules/.bin/gemini' },
  codex: { name: 'codex', pkg: '@openai/codex', version: '0.169.0', bin: 'node_modules/.bin/codex' },
  opencode: { name: 'opencode', pkg: 'opencode-ai', version: '1.18.33', bin: 'node_modules/.bin/opencode' },
  copilot: { name: 'copilot', pkg: '@github/copilot', version: '1.0.102', bin: 'node_modules/.bin/copilot' },
};

/**
 * `JAGGERS_CLI_VERSIONS=claude=2.1.331,qwen=0.25.0` runs the suite on other versions than the pinned
 * ones (the canary, scripts/canary.sh, sets it to the newest releases).
 */
function withOverrides(pinned: Record<CliName, CliInfo>, spec: string | undefined): Record<CliName, CliInfo> {
  const out = { ...pinned };
  for (const part of (spec ?? '').split(',').filter((p) => p.trim() !== '')) {
    const m = /^\s*(claude|qwen|gemini|codex|opencode|copilot)=(\d+\.\d+\.\d+[\w.-]*)\s*$/.exec(part);
    if (!m) throw new Error(`JAGGERS_CLI_VERSIONS: ${JSON.stringify(part)} is not <claude|qwen|gemini|codex|opencode|copilot>=<x.y.z>`);
    out[m[1] as CliName] = { ...out[m[1] as CliName], version: m[2]! };
  }
  return out;
}

export const CLIS: Record<CliName, CliInfo> = withOverrides(PINNED, process.env.JAGGERS_CLI_VERSIONS);

export const CLI_NAMES = Object.keys(CLIS) as CliName[];

const chosen = process.env.JAGGERS_E2E_CLIS?.split(',').map((s) => s.trim());
/** Whether this run is for `cli`: JAGGERS_E2E_CLIS (comma-separated; the canary sets it) names it, or is unset. */
export const isChosen = (cli: CliName): boolean => chosen === undefined || chosen.includes(cli);

/**
 * Whether this run includes the tests of the CLIs alone (no jaggers code runs in them: `real-clis`,
 * `headless-real`): the drift canary sets JAGGERS_E2E_FACTS=1 and runs them on each new release; the
 * suite of the pinned releases leaves them out (the same release behaves the same; they cost about 3.5
 * minutes of the suite's wall time).
 */
const FACTS = process.env.JAGGERS_E2E_FACTS === '1';

/** A suite of such tests for `cli`: its title (`<label> <cli> <version>`, with why it is skipped) and whether it is. */
export function factsSuite(label: string, cli: CliName): { title: string; skip: boolean } {
  const name = `${label} ${cli} ${CLIS[cli].version}`;
  if (!FACTS) return { title: `${name} (skipped: a fact of the CLI alone; npm run canary or JAGGERS_E2E_FACTS=1 runs it)`, skip: true };
  if (!isCliInstalled(cli) && process.env.JAGGERS_REQUIRE_REAL_CLIS !== '1')
    return { title: `${name} (skipped: not installed; run scripts/install-real-clis.sh)`, skip: true };
  return { title: name, skip: false };
}

/**
 * A suite of jaggers' tests on `cli`: its title (`<cli> <version> <label>`, with why it is skipped) and
 * whether it is: not named in JAGGERS_E2E_CLIS, or not installed (JAGGERS_REQUIRE_REAL_CLIS=1 makes that
 * fail instead, at the CLI's first start).
 */
export function cliSuite(cli: CliName, label: string): { title: string; skip: boolean } {
  const name = `${cli} ${CLIS[cli].version} ${label}`;
  if (!isChosen(cli)) return { title: `${name} (skipped: not in JAGGERS_E2E_CLIS)`, skip: true };
  if (!isCliInstalled(cli) && process.env.JAGGERS_REQUIRE_REAL_CLIS !== '1')
    return { title: `${name} (skipped: not installed; run scripts/install-real-clis.sh ${cli})`, skip: true };
  return { title: name, skip: false };
}

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
