// Which session a run starts with: --session-id pins a new one, --resume loads one, else a fresh uuid.
// Failures are values carrying the message the real CLIs print (claude's wording).
import type { FakeAgentOptions } from './args.js';
import type { SessionRecord } from './session-store.js';
import { isUuid, latestSession, listSessions, newSession, readSession, sessionExists } from './session-store.js';

export type OpenResult = { ok: true; session: SessionRecord; resumed: boolean } | { ok: false; message: string };

export interface OpenContext {
  home: string;
  cwd: string;
  now: Date;
  newId: () => string;
}

export function openSession(options: Pick<FakeAgentOptions, 'sessionId' | 'resume'>, ctx: OpenContext): OpenResult {
  const { sessionId, resume } = options;
  if (sessionId !== undefined) {
    if (!isUuid(sessionId)) return { ok: false, message: `Error: Invalid session ID. Must be a valid UUID.` };
    if (sessionExists(ctx.home, sessionId)) return { ok: false, message: `Error: Session ID ${sessionId} is already in use.` };
    return { ok: true, session: newSession(sessionId, ctx.cwd, ctx.now), resumed: false };
  }
  if (resume !== undefined) {
    let found: SessionRecord | undefined;
    try {
      found = resume === 'latest' ? latestSession(listSessions(ctx.home)) : readSession(ctx.home, resume);
    } catch (e) {
      return { ok: false, message: `Error: cannot resume session ${resume}: ${(e as Error).message}` };
    }
    if (!found) return { ok: false, message: `Error: No conversation found with session ID: ${resume}` };
    return { ok: true, session: found, resumed: true };
  }
  return { ok: true, session: newSession(ctx.newId(), ctx.cwd, ctx.now), resumed: false };
}
