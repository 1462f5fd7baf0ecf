// The files a launch needs before its CLI starts: its MCP registration, its hook files (or, with hooks
// turned off, an earlier install removed so that no stale settings remain), and the shared folders it is
// told it may read.
import { writeLaunchFiles as writeMcpFiles } from '../mcp/register.js';
import { writeHookFiles } from './hooks-install.js';
import type { Launch } from './plan.js';
import { makeSharedFolders } from './shared-folders.js';

export async function writeLaunchFiles(launch: Pick<Launch, 'mcp' | 'hooks' | 'hooksDir' | 'folders'>): Promise<void> {
  await makeSharedFolders(launch.folders);
  await writeMcpFiles(launch);
  await writeHookFiles(launch.hooks, launch.hooks ? null : { dir: launch.hooksDir });
}
