// The files a launch needs before its CLI starts: its MCP registration and its hook files (or, with
// hooks turned off, an earlier install removed so that no stale settings remain).
import { writeLaunchFiles as writeMcpFiles } from '../mcp/register.js';
import { writeHookFiles } from './hooks-install.js';
import type { Launch } from './plan.js';

export async function writeLaunchFiles(launch: Pick<Launch, 'mcp' | 'hooks' | 'hooksDir'>): Promise<void> {
  await writeMcpFiles(launch);
  await writeHookFiles(launch.hooks, launch.hooks ? null : { dir: launch.hooksDir });
}
