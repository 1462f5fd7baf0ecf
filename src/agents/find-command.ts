// Whether a profile's command can be started: found on the PATH the agent's pane will get.
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The file `command` runs (a path, or the first executable of that name on `pathVar`), or null. */
export function findCommand(command: string, pathVar: string, cwd: string): string | null {
  if (command.includes('/')) {
    const file = path.resolve(cwd, command);
    return executable(file) ? file : null;
  }
  for (const dir of pathVar.split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, command);
    if (executable(file)) return file;
  }
  return null;
}
