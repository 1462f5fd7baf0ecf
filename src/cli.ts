import { processOutput } from './output.js';
import { main } from './program.js';

/** Ctrl-C: a command that follows work hears it (and says how to follow it on); any other ends as usual. */
function onInterrupt(fn: () => void): () => void {
  const handler = () => {
    process.removeListener('SIGINT', handler);
    fn();
  };
  process.on('SIGINT', handler);
  return () => process.removeListener('SIGINT', handler);
}

// A reader that went away (`jaggers logs | head -1`) is no failure of the command: it ends quietly, with
// status 0, as `head` asked for no more. Any other write error is one and is thrown as before.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(0);
  });
}

let leaving = false;
process.exitCode = await main(process.argv.slice(2), { io: processOutput, env: process.env, cwd: process.cwd(), onInterrupt, leave: () => (leaving = true) });
// A command whose client has gone (the MCP server after its stdin closed) ends even if a call it served is stuck.
if (leaving) setTimeout(() => process.exit(), 500).unref();
