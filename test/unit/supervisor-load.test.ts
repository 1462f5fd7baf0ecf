// The supervisor's code as `supervise` loads it when built: a CommonJS bundle run with V8's code cache.
import { execa } from 'execa';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packageRoot, SUPERVISOR_NODE_FLAGS } from '../../src/package-root.js';
import { asciiOnlySource, requireWithCodeCache } from '../../src/supervisor/load.js';
import { tempDirs } from '../helpers/temp-dir.js';

const tempDir = tempDirs('jg-load-');

describe('requireWithCodeCache', () => {
  it('runs a CommonJS file as require would, with its cache once one is made, and without a cache made from other source', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'm.cjs');
    const cache = path.join(dir, 'm.cjs.cache');
    await writeFile(
      file,
      "const os = require('node:os');\nexports.where = () => [__filename, __dirname, typeof os.cpus];\nexports.line = () => new Error('here').stack;\n",
    );
    const plain = requireWithCodeCache(file, cache);
    expect(plain.cache).toBe('none');
    expect((plain.module as { where(): string[] }).where()).toEqual([file, dir, 'function']);
    // Line numbers in stack traces are the file's own.
    expect((plain.module as { line(): string }).line()).toContain(`${file}:3:`);

    expect(requireWithCodeCache(file, cache, { produce: true }).cache).toBe('written');
    const cached = requireWithCodeCache(file, cache);
    expect(cached.cache).toBe('used');
    expect((cached.module as { where(): string[] }).where()).toEqual([file, dir, 'function']);

    await writeFile(file, 'exports.where = () => ["changed, and longer than it was before"];\n');
    const changed = requireWithCodeCache(file, cache);
    expect(changed.cache).toBe('rejected');
    expect((changed.module as { where(): string[] }).where()).toEqual(['changed, and longer than it was before']);
  });

  it("the built supervisor bundle loads with the cache the build made, in a node of its own run with the supervisor's flags", async () => {
    const load = pathToFileURL(path.join(packageRoot, 'dist', 'src', 'supervisor', 'load.js')).href;
    const r = await execa(
      process.execPath,
      [
        ...SUPERVISOR_NODE_FLAGS,
        '--input-type=module',
        '-e',
        `const l = await import(${JSON.stringify(load)}); const r = l.requireWithCodeCache(l.supervisorBundle, l.supervisorCodeCache); console.log(r.cache, typeof r.module.runSupervisor); process.exit(0);`,
      ],
      // As the build made it: V8 takes a cache only from a node run with the same flags.
      { env: { ...process.env, NODE_OPTIONS: '' } },
    );
    expect(r.stdout).toBe('used function');
  });
});

describe('asciiOnlySource', () => {
  // Each case: JavaScript source, then what it must evaluate to the same as before the escape.
  const same = (src: string) => {
    const out = asciiOnlySource(src);
    expect(out).toMatch(/^[\x00-\x7f]*$/);
    return { before: (0, eval)(src) as unknown, after: (0, eval)(out) as unknown, out };
  };

  it('writes every character beyond ASCII as an escape that means the same, in patterns, strings and comments', () => {
    const screen = '❯ 1. Yes   ✦ done 😀 \\✦';
    for (const src of ['/^\\s*[❯›>▶]\\s+/u', '/[█▐▌░▒▓▕▏┃│║]/gu', '/[😀]/u', '/😀+/', '/\\✦/', '/\\\\✦/', '/[⠀-⣿]/u']) {
      const { before, after } = same(src);
      const [b, a] = [before as RegExp, after as RegExp];
      expect(a.flags).toBe(b.flags);
      expect(screen.match(new RegExp(a.source, a.flags.replace('g', '') + 'g'))).toEqual(screen.match(new RegExp(b.source, b.flags.replace('g', '') + 'g')));
    }
    for (const src of ['"✦ 😀 é"', '`❯ ${1 + 1} ─`', '"\\✦"', '"a\\\\✦"']) {
      const { before, after } = same(src);
      expect(after).toBe(before);
    }
    const { before, after, out } = same('// actor’s snapshot —\n1');
    expect(after).toBe(before);
    expect(out).toBe('// actor\\u2019s snapshot \\u2014\n1');
  });

  it('leaves ASCII as it is', () => {
    const src = 'const a = /^\\s*[>*]\\s+/u; // \\u276f already escaped\n';
    expect(asciiOnlySource(src)).toBe(src);
  });

  it('the built bundles are ASCII-only: V8 holds a file with one character beyond as two-byte source', async () => {
    const dir = path.join(packageRoot, 'dist', 'bundle');
    const files = [
      'cli.js',
      'supervisor.cjs',
      ...(await readdir(path.join(dir, 'chunks'))).filter((f) => f.endsWith('.js')).map((f) => path.join('chunks', f)),
    ];
    expect(files.length).toBeGreaterThan(3);
    const beyond: string[] = [];
    for (const f of files) if (/[^\x00-\x7f]/.test(await readFile(path.join(dir, f), 'utf8'))) beyond.push(f);
    expect(beyond).toEqual([]);
  });
});
