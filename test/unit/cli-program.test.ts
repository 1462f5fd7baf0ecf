// The program as a whole: --version, every command group in --help, and the fast path of the built CLI
// (--version and --help load commander and no other library).
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildProgram, main } from '../../src/program.js';
import { cliEntry, packageRoot } from '../../src/package-root.js';
import { tempDirs } from '../helpers/temp-dir.js';

const tempDir = tempDirs('jg-cli-');
const RECORD = fileURLToPath(new URL('../fixtures/record-imports.mjs', import.meta.url));

async function run(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { io: { writeOut: (s) => void (stdout += s), writeErr: (s) => void (stderr += s) }, env: {}, cwd: await tempDir() });
  return { code, stdout, stderr };
}

const version = async () => (JSON.parse(await readFile(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;

// Each group's commands, as a person reads them in `jaggers --help` (and the README).
const GROUPS = {
  agents: ['up', 'down', 'demo', 'attach', 'ls', 'status', 'why', 'capture', 'send', 'answer'],
  work: ['assign', 'jobs', 'wait', 'result', 'cancel', 'message', 'inbox', 'handoff', 'usage', 'budget'],
  worktrees: ['worktrees', 'diff', 'merge', 'discard', 'gc'],
  workflows: ['run', 'tasks', 'show', 'resume', 'workflows', 'workflow'],
  flows: ['flow'],
  sessions: ['sessions', 'exec'],
  setup: ['init', 'doctor', 'profile', 'skill', 'mcp', 'serve', 'web', 'logs'],
  hosts: ['host'],
};
const SUBCOMMANDS = {
  profile: ['check'],
  host: ['list', 'check'],
  skill: ['install', 'show'],
  workflow: ['show'],
  flow: ['add', 'ls', 'show', 'run', 'enable', 'disable', 'rm'],
};

/** The command names in the Commands: section of a help text. */
const listed = (help: string) => [...(help.split('\nCommands:\n')[1] ?? '').matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]);

describe('jaggers --version', () => {
  it.each([['--version'], ['-V']])('%s prints the version in package.json and exits 0', async (flag) => {
    expect(await run([flag])).toEqual({ code: 0, stdout: `${await version()}\n`, stderr: '' });
  });
});

describe('jaggers --help', () => {
  it("lists every group's commands", async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    const names = listed(r.stdout);
    for (const name of Object.values(GROUPS).flat()) expect(names, `${name} in jaggers --help`).toContain(name);
    expect(r.stdout).toMatch(/^ {2}-V, --version /m);
  });

  it.each(Object.entries(SUBCOMMANDS))('jaggers %s --help lists its subcommands', async (group, subs) => {
    const r = await run([group, '--help']);
    expect(r.code).toBe(0);
    const names = listed(r.stdout);
    for (const name of subs) expect(names, `${name} in jaggers ${group} --help`).toContain(name);
  });

  it('the list above is the whole program (a new command is added to a group here too)', () => {
    const program = buildProgram({ io: { writeOut: () => {}, writeErr: () => {} }, env: {}, cwd: '/' }, () => {});
    const all = program.commands.map((c) => c.name());
    expect(all.sort()).toEqual(Object.values(GROUPS).flat().sort());
    for (const [group, subs] of Object.entries(SUBCOMMANDS))
      expect(
        program.commands
          .find((c) => c.name() === group)
          ?.commands.map((c) => c.name())
          .sort(),
      ).toEqual([...subs].sort());
  });
});

// The built CLI (dist/bundle/, as `npm test` builds it first), as a person runs it. The bundle's
// meta.json says which sources went into each of its files.
interface Meta {
  inputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }>;
  outputs: Record<string, { inputs: Record<string, unknown> }>;
}
const meta = async () => JSON.parse(await readFile(path.join(packageRoot, 'dist', 'bundle', 'meta.json'), 'utf8')) as Meta;
const library = (file: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];
/** The program's own wiring: no command module, no tmux, supervisor or sessions code. */
const WIRING = /^src\/(cli|program|context|errors|ids|states|output|package-root|cli\/[a-z-]+|tmux\/server)\.ts$/;

describe('the fast path', () => {
  it.each([['--version'], ['--help']])('jaggers %s loads commander and no other library', async (flag) => {
    const out = path.join(await tempDir(), 'imports.txt');
    const r = await execa(process.execPath, ['--import', pathToFileURL(RECORD).href, cliEntry, flag], {
      env: { ...process.env, JAGGERS_IMPORTS_OUT: out },
      reject: false,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    if (flag === '--version') expect(r.stdout).toBe(await version());
    const loaded = (await readFile(out, 'utf8')).trim().split('\n');
    const { outputs } = await meta();
    const files = loaded.filter((u) => u.includes('/dist/bundle/')).map((u) => u.replace(/.*\/(dist\/bundle\/)/, '$1'));
    expect(files).toContain('dist/bundle/cli.js');
    const sources = files.flatMap((f) => Object.keys(outputs[f]?.inputs ?? {}));
    expect(new Set([...loaded, ...sources].map(library).filter(Boolean))).toEqual(new Set(['commander']));
    expect(sources.filter((f) => f.startsWith('src/') && !WIRING.test(f))).toEqual([]);
  });

  it.each(['status', 'ls', 'pane', 'jobs', 'inbox', 'tasks', 'sessions'])(
    'the module of the read commands in commands/%s.ts loads no heavy library and no supervisor, tmux or registry code',
    async (name) => {
      const { inputs } = await meta();
      const seen = new Set([`src/commands/${name}.ts`]);
      for (const f of seen) for (const i of inputs[f]?.imports ?? []) if (i.kind === 'import-statement' && !i.external) seen.add(i.path);
      const heavy = [...seen].filter((f) => library(f) || /^src\/(supervisor|panes|sessions|profiles|workflows|flows|tmux\/con)/.test(f));
      expect(heavy).toEqual([]);
    },
  );
});
