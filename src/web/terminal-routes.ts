// The API routes the dashboard adds (issue 29), on every listener: an agent's live terminal, typing into
// it as a person at the keyboard would, and a workflow turn's prompt and reply files.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { TaskView } from '../api/types.js';
import { JaggersError } from '../errors.js';
import { readConfined, type ConfineDirs } from '../fs/confine.js';
import { AgentParams, KeysBody, TaskQuery, TurnParams } from '../supervisor/schemas.js';
import type { PaneTaps } from './pane-taps.js';
import { TerminalStream } from './terminal-stream.js';
import { openEventStream } from '../supervisor/event-hub.js';

/** What the routes need of the supervisor. */
export interface TerminalPorts {
  /** The agent's pane (E_AGENT_UNKNOWN naming the agents when there is none); `dead`: its program exited. */
  pane(agent: string, task: string | undefined): Promise<{ agent: string; paneId: string; dead: boolean }>;
  taps: Pick<PaneTaps, 'tap'>;
  /** The bytes into the pane, as typed. */
  type(paneId: string, bytes: Uint8Array): Promise<void>;
  task(id: string): Promise<TaskView>;
  dirs: ConfineDirs;
}

/** Typed bytes in one request at most (a paste of more is split by the page). */
export const KEYS_MAX_BYTES = 16 * 1024;
/** A turn's file is read up to this many bytes (`truncated` says when there is more). */
export const TURN_FILE_MAX = 1024 * 1024;

export interface TurnFileView {
  task: string;
  turn: number;
  /** The file, relative to the project. */
  file: string;
  text: string;
  /** The file's size, and whether `text` is only its first TURN_FILE_MAX bytes. */
  bytes: number;
  truncated: boolean;
}

export async function readTurnFile(p: Pick<TerminalPorts, 'task' | 'dirs'>, id: string, seq: number, which: 'prompt' | 'reply'): Promise<TurnFileView> {
  const t = await p.task(id);
  const turn = t.turns.find((x) => x.seq === seq);
  if (!turn) {
    const have = t.turns.length ? `its turns are ${t.turns[0]!.seq} to ${t.turns.at(-1)!.seq}` : 'it has no turns yet';
    throw new JaggersError('E_NOT_FOUND', `task ${id} has no turn ${seq}: ${have}`);
  }
  const file = turn[which];
  if (!file) throw new JaggersError('E_NOT_FOUND', `task ${id}: turn ${seq} has no ${which} file (yet): the turn is ${turn.state}`);
  const r = await readConfined(p.dirs, file, { what: `task ${id}: turn ${seq}'s ${which}`, limit: TURN_FILE_MAX });
  // A cut in the middle of a character shows as U+FFFD at the end.
  return { task: id, turn: seq, file, text: r.data.toString('utf8'), bytes: r.size, truncated: r.size > r.data.length };
}

export function registerTerminalRoutes(app: FastifyInstance, p: TerminalPorts): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get('/v1/terminals/:agent/stream', { schema: { params: AgentParams, querystring: TaskQuery } }, async (req, reply) => {
    const e = await p.pane((req.params as { agent: string }).agent, req.query.task);
    const res = reply.raw;
    // Events that come before the stream's head is written wait for it (none should: output is passed on later).
    const early: string[] = [];
    let live = false;
    const out = {
      write: (chunk: string) => (live ? res.write(chunk) : early.push(chunk)),
      get writableLength() {
        return res.writableLength;
      },
      once: (event: 'drain', fn: () => void) => res.once(event, fn),
      end: () => (live ? res.end() : early.push('')),
    };
    // What the tap passes on before the stream is made (output after the capture's reply, before the
    // snapshot's other half came) is kept for it, in order.
    let stream: TerminalStream | null = null;
    const before: ((s: TerminalStream) => void)[] = [];
    const to = (f: (s: TerminalStream) => void) => (stream ? f(stream) : before.push(f));
    const tap = await p.taps.tap(e.paneId, {
      output: (t) => to((s) => s.output(t)),
      size: (c, rows) => to((s) => s.size(c, rows)),
      exit: (why) => to((s) => s.exit(why)),
    });
    res.on('close', () => tap.close());
    if (req.raw.destroyed || res.destroyed) {
      tap.close();
      return reply.hijack();
    }
    let snap;
    try {
      snap = await tap.snapshot();
    } catch (err) {
      tap.close();
      throw err;
    }
    const made = new TerminalStream(out, () => tap.snapshot());
    reply.hijack();
    openEventStream(res);
    res.write(`: terminal of ${e.agent}, pane ${e.paneId}\n\n`);
    made.start(snap);
    stream = made;
    for (const f of before.splice(0)) f(made);
    live = true;
    for (const chunk of early.splice(0)) {
      if (chunk === '') res.end();
      else res.write(chunk);
    }
    if (res.writableEnded) tap.close();
  });

  r.post('/v1/terminals/:agent/keys', { schema: { params: AgentParams, body: KeysBody } }, async (req) => {
    const e = await p.pane((req.params as { agent: string }).agent, req.body.task);
    const bytes = Buffer.from(req.body.data, 'utf8');
    if (bytes.length > KEYS_MAX_BYTES)
      throw new JaggersError(
        'E_PAYLOAD_TOO_LARGE',
        `POST /v1/terminals/${e.agent}/keys: \`data\` is ${bytes.length} bytes, over the ${KEYS_MAX_BYTES} typed at once`,
      );
    if (e.dead)
      throw new JaggersError('E_PANE_GONE', `agent ${e.agent}'s pane ${e.paneId} is dead: nothing can be typed into it; run \`jaggers up\` to restart it`);
    await p.type(e.paneId, bytes);
    return { agent: e.agent, pane: e.paneId, bytes: bytes.length };
  });

  const turnRoute = (which: 'prompt' | 'reply') =>
    r.get(`/v1/tasks/:id/turns/:n/${which}`, { schema: { params: TurnParams } }, async (req) => {
      const { id, n } = req.params as { id: string; n: number };
      return readTurnFile(p, id, n, which);
    });
  turnRoute('prompt');
  turnRoute('reply');
}
