// A `limit: <words>` line in a prompt, or in the file it names: the turn ends at a usage limit instead of
// a reply, drawn the way the real CLIs draw theirs (`✕ Usage limit reached · <words>`), so tests can
// show an agent `limited`, its queue held and going on at the reset (docs/limits.md). The words say
// when it resets, as a CLI would: `try again in 3 seconds`, `resets 10:14pm (UTC)`.
const LINE = /^[ \t]*limit:[ \t]*(.*?)[ \t]*$/m;

/** The limit screen's line for the first `limit:` line in `text`, or undefined when it has none. */
export function limitIn(text: string): string | undefined {
  const m = LINE.exec(text.slice(0, 65_536));
  if (!m) return undefined;
  return m[1] ? `✕ Usage limit reached · ${m[1]}` : '✕ Usage limit reached';
}
