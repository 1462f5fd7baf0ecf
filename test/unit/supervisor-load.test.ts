// The supervisor's code as `supervise` loads it when built: a CommonJS bundle run with V8's code cache.
import { execa } from 'execa';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packageRoot, SUPERVISOR_NODE_FLAGS } from '../../src/package-root.js';
import { requireWithCodeCache } from '../../src/supervisor/load.js';
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
