// The page's files: names checked before any file is looked at, the .gz beside a file for a browser that
// takes gzip, the content type by extension, caching (immutable assets, index.html checked each time).
import { describe, expect, it } from 'vitest';
import { assetParts, findAsset, takesGzip, type ReadFile } from '../../src/web/assets.js';

describe('assetParts', () => {
  it.each(['app-1a2b.js', 'fonts/x.woff2', 'app.js.map'])('takes %s', (n) => expect(assetParts(n)).not.toBeNull());
  it.each(['', '../token', 'a/../../b', '.hidden', '-x', 'a//b', '%2e%2e/x', 'a\\b', 'a/b/c/d/e'])('refuses %s', (n) => expect(assetParts(n)).toBeNull());
});

describe('takesGzip', () => {
  it.each([
    ['gzip, deflate, br', true],
    ['br;q=1.0, gzip;q=0.8', true],
    ['gzip;q=0', false],
    ['*', true],
    ['identity', false],
    [undefined, false],
  ] as const)('%s -> %s', (h, v) => expect(takesGzip(h)).toBe(v));
});

describe('findAsset', () => {
  const files: Record<string, string> = { '/w/assets/app.js': 'plain', '/w/assets/app.js.gz': 'zipped', '/w/index.html': '<html>' };
  const read: ReadFile = async (f) => (f in files ? Buffer.from(files[f]!) : null);

  it('sends the .gz to a browser that takes gzip, the file itself otherwise', async () => {
    const z = await findAsset('/w', ['assets', 'app.js'], true, read, true);
    expect(z?.body.toString()).toBe('zipped');
    expect(z?.headers).toMatchObject({
      'content-encoding': 'gzip',
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
    });
    const p = await findAsset('/w', ['assets', 'app.js'], false, read, true);
    expect(p?.body.toString()).toBe('plain');
    expect(p?.headers['content-encoding']).toBeUndefined();
  });

  it('index.html without a .gz, checked again on each load; a missing file is null', async () => {
    const i = await findAsset('/w', ['index.html'], true, read, false);
    expect(i?.headers).toMatchObject({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
    expect(await findAsset('/w', ['assets', 'x.js'], true, read, true)).toBeNull();
  });
});
