// The spellings of a working folder a CLI may have recorded: as given, resolved, and its real path.
import { realpath } from 'node:fs/promises';
import path from 'node:path';

export async function cwdForms(cwd: string): Promise<Set<string>> {
  const forms = new Set([path.resolve(cwd)]);
  try {
    forms.add(await realpath(cwd));
  } catch {
    // a folder that no longer exists can still match by name
  }
  return forms;
}
