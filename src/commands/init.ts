import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_FILE, type Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { defaultProjectFile } from '../project/project-file.js';

export async function init(ctx: Context, agents: string[], force: boolean): Promise<{ file: string }> {
  const file = path.join(ctx.projectRoot, PROJECT_FILE);
  if (existsSync(file) && !force) {
    throw new JaggersError('E_USAGE', `${file} exists already: pass --force to overwrite it`);
  }
  await writeFile(file, JSON.stringify(defaultProjectFile(agents), null, 2) + '\n');
  return { file };
}
