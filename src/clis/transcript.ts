// The reply to a prompt, from the CLI's own transcript of the pinned session (a profile's
// `session.transcript` names whose reader).
import { TRANSCRIPTS, type TranscriptKind } from './kinds.js';
import type { TranscriptReply } from './types.js';

export type { TranscriptReply } from './types.js';

/**
 * The reply to the prompt that carried `nonce`, from the CLI's own transcript of the pinned session:
 * null when there is no transcript (yet) or no prompt with the nonce in it; while the turn runs, the
 * text so far with `finished: false`.
 */
export async function readTranscriptReply(
  kind: TranscriptKind | undefined,
  home: string,
  cwd: string,
  sessionId: string,
  nonce: string,
): Promise<TranscriptReply | null> {
  const read = kind === undefined ? undefined : TRANSCRIPTS[kind];
  return read ? read(home, cwd, sessionId, `[jg:${nonce}]`) : null;
}

/** The reply in the CLI's own transcript, once its turn has finished; null before that. */
export async function replyFromTranscript(
  kind: TranscriptKind | undefined,
  home: string,
  cwd: string,
  sessionId: string,
  nonce: string,
): Promise<string | null> {
  const r = await readTranscriptReply(kind, home, cwd, sessionId, nonce);
  return r?.finished ? r.text : null;
}
