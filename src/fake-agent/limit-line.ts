// A `limit: <words>` line in a prompt, or in the file it names: the turn ends at a usage limit instead of
// a reply, drawn the way the real CLIs draw theirs (`✕ Usage limit reached · <words>`), so tests can
// show an agent `limited`, its queue held and going on at the reset (docs/limits.md). The words say
// when it resets, as a CLI would: `try again in 3 seconds`, `resets 10:14pm (UTC)`. An agent shows each limit
// line once: the same prompt after the reset (a cut turn run again) gets its reply.
const LINE = /^[ \t]*limit(?:\(([\w.-]+)\))?:[ \t]*(.*?)[ \t]*$/m;

/**
 * The limit screen's line for the first `limit:` line in `text`, or undefined when it has none.
 * `limit(<agent>): <words>` is a limit of that agent only (JAGGERS_AGENT): a fallback agent gets the same
 * handover and answers it.
 */
export function limitIn(text: string, agent?: string): string | undefined {
  const m = LINE.exec(text.slice(0, 65_536));
  if (!m || (m[1] !== undefined && m[1] !== agent)) return undefined;
  return m[2] ? `✕ Usage limit reached · ${m[2]}` : '✕ Usage limit reached';
}
