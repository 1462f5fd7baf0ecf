// Files that move with the work (docs/hosts.md): a workflow's turn for an agent on another host names
// the earlier turns' reply files of this project in its prompt. The sender reads them and sends them
// with the item; the host's supervisor writes them into its own project, beside its handover files
// (`.jaggers/handover/carried/<id>/`), and points the prompt at them there.
import path from 'node:path';
import { JaggersError } from '../errors.js';
import { readConfinedText } from '../fs/confine.js';
import { writeDurable } from './files.js';
import type { Dirs } from './ports.js';

/** A file of the sender's project (its path as the prompt names it) and its text. */
export interface CarriedFile {
  path: string;
  text: string;
}

/** The files of `candidates` (project-relative paths) that the prompt names, each once, in the prompt's order. */
export function namedFiles(prompt: string, candidates: Iterable<string>): string[] {
  const named = [...new Set(candidates)].filter((f) => f !== '' && prompt.includes(f));
  return named.sort((a, b) => prompt.indexOf(a) - prompt.indexOf(b));
}

/** The sender's side: each file read (from the project's shared folders only). */
export async function readCarried(dirs: Dirs, files: readonly string[], what: string): Promise<CarriedFile[]> {
  return Promise.all(files.map(async (f) => ({ path: f, text: await readConfinedText(dirs, f, `${what}: a file it carries`) })));
}

/** Where the host keeps an item's carried files. */
export function carriedDir(jaggersDir: string, id: string): string {
  return path.join(jaggersDir, 'handover', 'carried', id);
}

/**
 * The host's side: the files written under `carriedDir` (by their base names; two of one name get a
 * number), and the text with each sender's path replaced by the file's path here.
 */
export async function placeCarried(jaggersDir: string, id: string, files: readonly CarriedFile[], text: string): Promise<string> {
  const dir = carriedDir(jaggersDir, id);
  const used = new Set<string>();
  let out = text;
  for (const f of files) {
    const base = path.basename(f.path);
    if (base === '' || base === '.' || base === '..' || !/^[\w.+-]{1,200}$/.test(base))
      throw new JaggersError('E_USAGE', `handoff ${id}: a carried file's name must be a plain file name, got ${JSON.stringify(f.path)}`);
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${n}-${base}`;
    used.add(name);
    const file = path.join(dir, name);
    await writeDurable(file, f.text);
    out = out.split(f.path).join(file);
  }
  return out;
}
