import type { Context } from '../context.js';
import type { Terminal } from '../output.js';
import { handoff, newTaskId } from './handoff.js';
import { up, type UpResult } from './up.js';

/** The task the demo hands the planner; its agents (`--replies work`) answer with a plan, a diff, a review. */
export const DEMO_BRIEF = `Plan a small command-line tool that counts the words in a file.
Write the plan as three numbered steps.`;

/**
 * The main job on the built-in demo agents: open the session, then hand a task from the planner to
 * the coder to the reviewer, each reply handed on as the next agent's handover file.
 */
export async function demo(ctx: Context, io: Terminal, opts: { size?: string; run: boolean }): Promise<UpResult> {
  const r = await up(ctx, { demo: true, size: opts.size });
  io.writeOut(renderDemoUp(r));
  if (!opts.run) return r;
  const task = newTaskId();
  io.writeOut(`task ${task}: planner -> coder -> reviewer\n`);
  let next: { message?: string; file?: string } = { message: DEMO_BRIEF };
  let from: string | undefined;
  for (const agent of ['planner', 'coder', 'reviewer']) {
    const h = await handoff(ctx, agent, { ...next, from, task, wait: true, workflow: 'demo' }, io);
    io.writeOut(`\n[${agent}] turn ${h.turn}, ${Math.round(h.timings.totalMs)} ms, handover ${h.artifact}\n${h.reply!.text.replace(/^/gm, '  ')}\n`);
    next = { file: h.reply!.artifact };
    from = agent;
  }
  io.writeOut(`\nwatch the agents: jaggers attach    stop them: jaggers down    bring them back later: jaggers up\n`);
  return r;
}

/** What `demo` opened: each agent as it started, or the session as it already ran (a second `demo` starts nothing). */
export function renderDemoUp(r: UpResult): string {
  const where = `session ${r.session} on tmux ${r.socket}`;
  if (r.windows.every((w) => w.action === 'keep')) return `${where} is already running: ${r.windows.map((w) => w.agent).join(', ')}\n`;
  const how = (w: UpResult['windows'][number]) =>
    w.action === 'keep' ? 'already running' : w.action === 'respawn' ? `restarted, ${w.state ?? 'starting'}` : (w.state ?? 'started');
  return `${where}: ${r.windows.map((w) => `${w.agent} (${how(w)})`).join(', ')}\n`;
}
