// Window 0's program: the supervisor, started without the CLI. The CLI's bundle, commander and every
// command's table cost a restart (`kill -9`, then any command) tens of milliseconds before the supervisor's
// code even loads; this entry reads the fixed argv `supervisorCommand` writes, loads the supervisor's
// bundle (src/supervisor/load.ts) and takes the context's code from it.
import { processOutput, reportFailure, terminal, warnOnce } from './output.js';
import { parseSuperviseArgs } from './supervise-args.js';
import { loadSupervisor } from './supervisor/load.js';

/** A JaggersError of this file's copy or of the supervisor bundle's (a class of its own: instanceof fails). */
const ours = (e: unknown): e is Error & { code: string } =>
  e instanceof Error && e.name === 'JaggersError' && typeof (e as { code?: unknown }).code === 'string';

async function supervise(): Promise<number> {
  const io = terminal(processOutput);
  try {
    const args = parseSuperviseArgs(process.argv.slice(2));
    const { runSupervisor, resolveContext } = await loadSupervisor();
    const ctx = await resolveContext(args, process.env, process.cwd(), warnOnce(io.writeErr));
    await runSupervisor(ctx, io);
    // Stopped and cleaned up: the process ends when nothing is left to run. A handle something left
    // open (a request cut off mid-way, a child) must not keep a stopped supervisor alive: 2 s, then exit.
    setTimeout(() => {
      io.writeErr(`jaggers: the supervisor stopped; still open after 2 s: ${process.getActiveResourcesInfo().join(', ')}\n`);
      process.exit(process.exitCode ?? 0);
    }, 2000).unref();
    return 0;
  } catch (err) {
    return reportFailure(err, ours, io.writeErr);
  }
}

process.exitCode = await supervise();
