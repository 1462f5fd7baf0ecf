// The page's files, served from the package (dist/web/, built by `npm run build`): `index.html` at `/`,
// everything else under `/assets/`. A name is checked before any file is looked at (no `..`, no hidden
// file); a `.gz` beside a file is sent as it is to a browser that takes gzip.
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export interface Asset {
  body: Buffer;
  headers: Record<string, string>;
}

/** Reads a file, or null when there is none (a folder, a missing file). */
export type ReadFile = (file: string) => Promise<Buffer | null>;

export const readIfFile: ReadFile = (file) =>
  readFile(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT' || e.code === 'EISDIR' || e.code === 'ENOTDIR') return null;
    throw e;
  });

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

/** Each part of an asset's path: letters, digits, `.`, `_`, `-`, not starting with a dot or dash. */
const PART = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/;

/** The asset's path parts, or null when the name is not one an asset can have. */
export function assetParts(name: string): string[] | null {
  const parts = name.split('/');
  return parts.length <= 4 && parts.every((p) => PART.test(p)) ? parts : null;
}

/** The browser takes gzip (`Accept-Encoding`, not at q=0). */
export function takesGzip(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((p) => {
    const [coding, ...params] = p.trim().toLowerCase().split(';');
    if (coding?.trim() !== 'gzip' && coding?.trim() !== '*') return false;
    const q = params.map((x) => /^\s*q=([\d.]+)\s*$/.exec(x)?.[1]).find((x) => x !== undefined);
    return q === undefined || Number(q) > 0;
  });
}

/** The page's file `parts` under `root` (its `.gz` when the browser takes it), or null when there is none. */
export async function findAsset(root: string, parts: readonly string[], gzip: boolean, read: ReadFile, immutable: boolean): Promise<Asset | null> {
  const file = path.join(root, ...parts);
  const type = TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
  const cache = immutable ? 'public, max-age=31536000, immutable' : 'no-cache';
  const zipped = gzip ? await read(`${file}.gz`) : null;
  if (zipped) return { body: zipped, headers: { 'content-type': type, 'content-encoding': 'gzip', vary: 'accept-encoding', 'cache-control': cache } };
  const body = await read(file);
  return body ? { body, headers: { 'content-type': type, vary: 'accept-encoding', 'cache-control': cache } } : null;
}
