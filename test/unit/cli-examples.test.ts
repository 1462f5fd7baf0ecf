// Every example a person may copy is a command that parses: each `--help`'s examples, and each `jaggers`
// line in the README's and docs' shell blocks, through the real program (its actions replaced by a
// recorder): the command exists, every option is one it takes, required ones are there; a workflow an
// example runs exists. And the README writes jaggers as `jaggers` (on the PATH), as jaggers' own hints do.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CommanderError, type Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.js';
import { buildProgram } from '../../src/program.js';
import { listWorkflows } from '../../src/workflows/load.js';

function leaves(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => (c.commands.length ? leaves(c) : [c]));
}

function pathOf(cmd: Command): string[] {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names;
}

function makeProgram() {
  let out = '';
  const io = { writeOut: (s: string) => void (out += s), writeErr: (s: string) => void (out += s) };
  const program = buildProgram({ io, env: {}, cwd: '/nonexistent' }, () => {});
  return { program, output: () => out };
}

/** Parse `argv` as the CLI would; the action only records what it was given. Returns an error message or the call. */
async function parse(argv: string[]): Promise<{ error: string } | { command: string; args: unknown[] }> {
  const { program, output } = makeProgram();
  let call: { command: string; args: unknown[] } | null = null;
  for (const leaf of leaves(program))
    leaf.action((...args: unknown[]) => {
      call = { command: pathOf(leaf).join(' '), args: args.slice(0, -2) };
    });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return { error: output().trim() || e.message };
    return { error: (e as Error).message };
  }
  return call ?? { error: `no command ran for ${JSON.stringify(argv)}` };
}

/** Shell words, with '…' and "…" quoting (enough for the examples). */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /'([^']*)'|"((?:\\.|[^"\\])*)"|(\S+)/g;
  for (const m of line.matchAll(re)) out.push(m[1] ?? m[2]?.replace(/\\(.)/g, '$1') ?? m[3]!);
  return out;
}

/** The `jaggers ...` invocations in one shell line: comments cut, `$(...)` opened, `&&`, `||`, `|`, `;` split. */
function invocations(line: string): string[][] {
  const code = line.replace(/(^|\s)#.*$/, '');
  const inner = [...code.matchAll(/\$\(([^)]*)\)/g)].map((m) => m[1]!);
  const outer = code.replace(/\$\([^)]*\)/g, 'X');
  return [outer, ...inner]
    .flatMap((part) => part.split(/&&|\|\||[|;]/))
    .map((seg) => seg.trim().replace(/^(?:[A-Z_]+=\S*\s+)+/, ''))
    .filter((seg) => /^jaggers\s/.test(seg))
    .map((seg) => words(seg.replace(/\s>\s*\S+$/, '')).slice(1));
}

async function helpExamples(): Promise<{ where: string; argv: string[] }[]> {
  const found: { where: string; argv: string[] }[] = [];
  const { program } = makeProgram();
  const all = (c: Command): Command[] => c.commands.flatMap((x) => [x, ...all(x)]);
  for (const cmd of all(program)) {
    const { program: p, output } = makeProgram();
    await p.parseAsync([...pathOf(cmd), '--help'], { from: 'user' }).catch(() => {});
    for (const m of output().matchAll(/^ {2}\$ (.*)$/gm))
      for (const argv of invocations(m[1]!)) found.push({ where: `jaggers ${pathOf(cmd).join(' ')} --help: ${m[1]}`, argv });
  }
  return found;
}

/**
 * For a command named in running text (`jaggers handoff --file`), often without its arguments: the
 * command exists and takes every option named. Null when it does; else what is wrong.
 */
function namedWrongly(argv: string[]): string | null {
  let cmd: Command = makeProgram().program;
  let i = 0;
  for (; i < argv.length && !argv[i]!.startsWith('-'); i++) {
    const sub = cmd.commands.find((c) => c.name() === argv[i]);
    if (!sub) break;
    cmd = sub;
  }
  if (cmd.parent === null && i < argv.length && !argv[i]!.startsWith('-') && argv[i] !== '...') return `no command ${JSON.stringify(argv[i])}`;
  const known = (c: Command, flag: string) =>
    flag === '--help' || flag === '-h' || c.options.some((o) => o.long === flag || o.short === flag || (o.negate && o.long === flag));
  for (const w of argv.slice(i).filter((x) => /^--?[a-zA-Z]/.test(x))) {
    const flag = w.split('=')[0]!;
    if (!known(cmd, flag) && !(cmd.parent === null && (flag === '--version' || flag === '-V'))) return `${pathOf(cmd).join(' ') || 'jaggers'} takes no ${flag}`;
  }
  return null;
}

const docFiles = () => ['README.md', ...readdirSync(path.join(packageRoot, 'docs')).map((f) => path.join('docs', f))].filter((f) => f.endsWith('.md'));

function docExamples(): { where: string; argv: string[] }[] {
  const found: { where: string; argv: string[] }[] = [];
  for (const f of docFiles()) {
    const text = readFileSync(path.join(packageRoot, f), 'utf8');
    for (const block of text.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm))
      for (const line of block[1]!.split('\n')) for (const argv of invocations(line)) found.push({ where: `${f}: ${line}`, argv });
  }
  return found;
}

/** Commands in running text (`jaggers up --agents demo`, `jaggers run <workflow> -m TEXT [--json]`), brackets and all. */
function docMentions(): { where: string; argv: string[] }[] {
  const found: { where: string; argv: string[] }[] = [];
  for (const f of docFiles()) {
    const text = readFileSync(path.join(packageRoot, f), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
    for (const m of text.matchAll(/`(jaggers [^`]+)`/g)) {
      const plain = m[1]!.replace(/\\\|/g, ' ').replace(/[[\](){}|]/g, ' ');
      for (const argv of invocations(plain)) found.push({ where: `${f}: ${m[1]}`, argv });
    }
  }
  return found;
}

/** What an example names that must exist beyond the parse: the workflow of `run` and `workflow show`. */
const builtins = new Set((await listWorkflows('/nonexistent/.jaggers')).filter((w) => w.source === 'built-in').map((w) => w.name));

function problemOf(call: { command: string; args: unknown[] }): string | null {
  if ((call.command === 'run' || call.command === 'workflow show') && !builtins.has(String(call.args[0])))
    return `no built-in workflow ${JSON.stringify(call.args[0])}`;
  return null;
}

describe('examples', () => {
  it('every --help example parses, and the workflows they run exist', async () => {
    const examples = await helpExamples();
    expect(examples.length).toBeGreaterThan(40);
    const bad: string[] = [];
    for (const ex of examples) {
      const r = await parse(ex.argv);
      const why = 'error' in r ? r.error : problemOf(r);
      if (why) bad.push(`${ex.where}\n    ${why}`);
    }
    expect(bad).toEqual([]);
  });

  it("every jaggers line of the README's and docs' shell blocks parses", async () => {
    const examples = docExamples();
    expect(examples.length).toBeGreaterThan(10);
    const bad: string[] = [];
    for (const ex of examples) {
      const r = await parse(ex.argv);
      const why = 'error' in r ? r.error : problemOf(r);
      if (why) bad.push(`${ex.where}\n    ${why}`);
    }
    expect(bad).toEqual([]);
  });

  it('every command named in the README and docs exists and takes the options named with it', () => {
    const mentions = docMentions();
    expect(mentions.length).toBeGreaterThan(100);
    const bad = mentions.flatMap((m) => {
      const why = namedWrongly(m.argv);
      return why ? [`${m.where}\n    ${why}`] : [];
    });
    expect(bad).toEqual([]);
  });

  it('the README runs jaggers from the PATH (after npm link), as its hints do; npx only as the alternative', () => {
    const readme = readFileSync(path.join(packageRoot, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].map((m) => m[1]!).join('\n');
    expect(blocks).not.toMatch(/npx jaggers/);
    expect(readme.split('\n').filter((l) => l.includes('npx jaggers'))).toHaveLength(1);
    expect(blocks.split('\n')[0]).toMatch(/^npm install && npm link && jaggers demo /);
  });
});
