// A turn cut by a usage limit (docs/limits.md): the CLI printed its limit instead of a reply, so the item
// did not end. It goes back to wait in its agent's queue, journaled with why and the limit's reset (the
// record's `limited`), and runs again once the reset passes, or moves to the agent's fallback like any
// waiting job (src/work/fallback.ts). Its prompt file stays: the next run prepares a new turn from it.
import type { JobRecord, MessageRecord } from '../sessions/registry.js';
import type { Store } from './ports.js';
import type { WorkJournal } from './journal.js';

/** A limit as the pane's machine read it: when it resets (null: not shown), when the queue is tried again, what said so. */
export interface LimitNow {
  resetAt: number | null;
  until: number;
  said: string | null;
}

/** An item cut this many times stops waiting (a limit that never lifts, or a reply misread as one): it fails, E_LIMITED. */
export const MAX_LIMIT_CUTS = 5;

/**
 * Record that `j`'s turn was cut by `agent`'s usage limit (`lines`, `limit` as the machine read it): the
 * item is queued again (its next run is a new turn), or fails once it was cut MAX_LIMIT_CUTS times.
 */
export async function cutByLimit(
  journal: Pick<WorkJournal, 'change'>,
  j: JobRecord,
  agent: string,
  lines: string[],
  limit: LimitNow | null,
): Promise<JobRecord | null> {
  const { line, said, resetAt, when } = describeCut(lines, limit);
  const cuts = (j.limited?.cuts ?? 0) + 1;
  if (cuts >= MAX_LIMIT_CUTS)
    return journal.change(j.id, 'failed', `its turn was cut by ${agent}'s usage limit ${cuts} times (the last: ${line}); it no longer waits for a reset`, {
      code: 'E_LIMITED',
      limit: { resetAt, said },
    });
  return journal.change(j.id, 'queued', `its turn was cut by ${agent}'s usage limit (${line}): ${when}`, {
    limit: { resetAt, said },
  });
}

/** A cut in words: the limit's line (a box's borders, as gemini draws, and padding left out), its reset, when the item runs again. */
function describeCut(lines: string[], limit: LimitNow | null): { line: string; said: string | null; resetAt: string | null; when: string } {
  const line = lines.map((l) => l.replace(/^[\s│┃║|]+|[\s│┃║|]+$/gu, '').replace(/\s+/g, ' ')).find((l) => l !== '') ?? 'a usage limit';
  const resetAt = limit?.resetAt ? new Date(limit.resetAt).toISOString() : null;
  const when = resetAt
    ? `it runs again when the limit resets at ${resetAt}`
    : `it runs again at ${new Date(limit?.until ?? Date.now()).toISOString()} (the limit showed no reset time)`;
  return { line, said: limit?.said ?? null, resetAt, when };
}

/**
 * Record that the turn delivered message `m` started was cut by `agent`'s usage limit: the message waits
 * again (pending) and is delivered anew after the reset. A message cut MAX_LIMIT_CUTS times stays
 * delivered (returns false): a limit that never lifts must not deliver it for ever.
 */
export async function cutMessage(
  store: Pick<Store, 'update'>,
  m: MessageRecord,
  agent: string,
  lines: string[],
  limit: LimitNow | null,
): Promise<MessageRecord | null> {
  const { line, said, resetAt, when } = describeCut(lines, limit);
  return store.update((d) => {
    const cur = Object.hasOwn(d.messages, m.id) ? d.messages[m.id] : undefined;
    if (!cur || cur.state !== 'delivered' || (cur.limited?.cuts ?? 0) + 1 >= MAX_LIMIT_CUTS) return { events: [], result: null };
    const reason = `its turn was cut by ${agent}'s usage limit (${line}): ${when.replace('it runs again', 'it is delivered again')}`;
    return { events: [{ type: 'message-cut', messageId: m.id, reason, limit: { resetAt, said } }], result: cur };
  });
}
