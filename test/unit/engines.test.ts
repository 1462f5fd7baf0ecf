// `npm install` on the oldest Node the README and package.json promise warns of no package (EBADENGINE):
// every package the lock file installs admits that version in its `engines.node`.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.js';

const semver = createRequire(import.meta.url)('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};

const read = (f: string) => JSON.parse(readFileSync(path.join(packageRoot, f), 'utf8')) as Record<string, unknown>;

describe('engines', () => {
  const pkg = read('package.json') as { engines: { node: string } };
  const oldest = semver.minVersion(pkg.engines.node)!.version;

  it('every installed package admits the oldest Node that package.json names', () => {
    const lock = read('package-lock.json') as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };
    const refusing = Object.entries(lock.packages)
      .filter(([where, p]) => where !== '' && p.engines && !Array.isArray(p.engines) && p.engines.node)
      .filter(([, p]) => !semver.satisfies(oldest, (p.engines as { node: string }).node))
      .map(([where, p]) => `${where.replace(/^.*node_modules\//, '')}@${p.version}: node ${(p.engines as { node: string }).node}`);
    expect(refusing, `packages that refuse Node ${oldest}`).toEqual([]);
  });

  it('the README names the same oldest Node', () => {
    const readme = readFileSync(path.join(packageRoot, 'README.md'), 'utf8');
    const [major, minor] = oldest.split('.');
    expect(readme).toContain(`Node ${major}.${minor} or newer`);
  });
});
