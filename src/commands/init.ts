import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_FILE, type Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { loadProfile } from '../profiles/load.js';
import { adHocAgents, defaultProjectFile, parseProjectFile } from '../project/project-file.js';

/**
 * Write a jaggers.json naming the team (`--agents`, comma-separated profile names). Checked first as
 * `up` checks it (names, no name twice, every profile known), so `init` never writes a file `up` refuses.
 */
export async function init(ctx: Context, agents: string, force: boolean): Promise<{ file: string }> {
  const file = path.join(ctx.projectRoot, PROJECT_FILE);
  if (existsSync(file) && !force) {
    throw new JaggersError('E_USAGE', `${file} exists already: pass --force to overwrite it`);
  }
  const specs = adHocAgents(agents, 'init --agents');
  for (const a of specs)
    await loadProfile(a.profile, ctx.jaggersDir).catch((e: Error) => {
      throw new JaggersError('E_USAGE', `init --agents: ${e.message}`);
    });
  const text = JSON.stringify(defaultProjectFile(specs.map((a) => a.name)), null, 2) + '\n';
  await parseProjectFile(text, file);
  await writeFile(file, text);
  return { file };
}
