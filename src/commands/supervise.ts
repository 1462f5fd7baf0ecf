import type { Context } from '../context.js';
import type { Output } from '../output.js';
import { renderAgents, watchAgents } from './ls.js';

/** Window 0: shows the team live. Status detection (issue 3) runs here too. */
export async function supervise(ctx: Context, io: Output): Promise<void> {
  await watchAgents(ctx, (rows) => io.writeOut(`\x1b[H\x1b[2Jjaggers: session ${ctx.session}\n\n${renderAgents(rows)}`));
}
