import { readFile } from 'node:fs/promises';

/** A file's text; null when it cannot be read (not written yet, say). */
export async function readText(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return null;
  }
}
