// The person's own gemini settings with jaggers' hooks joined in: read as gemini 0.61 reads them (JSON
// with `//` and `/* */` comments), each hook list of theirs kept with ours put before it, nothing of
// theirs replaced. First, because gemini runs an event's hooks in parallel unless one of them says
// `sequential: true`, and then in order: jaggers' bridge returns at once and prints nothing, so it
// neither waits for theirs nor changes what theirs get. A file that cannot be joined says why, naming
// the file and the key.

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

/** `text` without its comments (each replaced by spaces, newlines kept), strings left as they are. */
export function stripJsonComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      // A string, to its closing quote (a backslash escapes the next character).
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      let j = i;
      while (j < text.length && text[j] !== '\n') j++;
      out += ' '.repeat(j - i);
      i = j;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const j = end < 0 ? text.length : end + 2;
      out += text.slice(i, j).replace(/[^\n]/g, ' ');
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

export type Parsed = { ok: true; settings: Json } | { ok: false; why: string };

/** A settings file's text as an object; an empty file is `{}`. */
export function parseSettings(text: string, file: string): Parsed {
  const body = stripJsonComments(text.replace(/^\uFEFF/, ''));
  if (body.trim() === '') return { ok: true, settings: {} };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (e) {
    return { ok: false, why: `${file} is not valid JSON (${(e as Error).message}); gemini refuses to start with it too` };
  }
  if (!isObject(value)) return { ok: false, why: `${file} holds ${kindOf(value)}, not a JSON object; gemini refuses to start with it too` };
  return { ok: true, settings: value };
}

/**
 * `settings` with `hooks` (event -> definitions) joined in: per event, ours, then the person's. Their other keys, and keys of theirs under `hooks` that are no event (`enabled`,
 * `disabled`), stay as they are.
 */
export function joinHooks(settings: Json, hooks: Readonly<Record<string, readonly unknown[]>>, file: string): Parsed {
  const theirs = settings.hooks;
  if (theirs !== undefined && !isObject(theirs))
    return { ok: false, why: `"hooks" in ${file} is ${kindOf(theirs)}, not an object of hook lists: jaggers cannot join its hooks to it` };
  const joined: Json = { ...theirs };
  for (const [event, ours] of Object.entries(hooks)) {
    const list = joined[event];
    if (list !== undefined && !Array.isArray(list))
      return { ok: false, why: `"hooks.${event}" in ${file} is ${kindOf(list)}, not a list: jaggers cannot join its hook to it` };
    joined[event] = [...ours, ...(list ?? [])];
  }
  return { ok: true, settings: { ...settings, hooks: joined } };
}
