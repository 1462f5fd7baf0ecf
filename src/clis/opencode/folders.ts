// opencode asks a person before any tool touches a path outside its project (`permission.external_directory`,
// "ask" by default; 1.18.33 shows `△ Permission required` / `← Access external directory <folder>` with
// the pattern `<folder>/*`). It reads the environment variable OPENCODE_PERMISSION (JSON) over its
// config's `permission`, and of the rules that match a path the last one decides: jaggers' folders are
// allowed there, after whatever the agent's own OPENCODE_PERMISSION says.
import type { FolderAccess } from '../types.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The person's OPENCODE_PERMISSION, when it is a JSON object (opencode itself skips one that is not). */
function given(raw: string | undefined): Json {
  if (!raw) return {};
  try {
    const v: unknown = JSON.parse(raw);
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

export const opencodePermission: FolderAccess = (folders, env) => {
  const permission = given(env.OPENCODE_PERMISSION);
  const theirs = permission.external_directory;
  // A single action ("ask", "deny") is the rule for every path: kept as `*`, before ours.
  const rules: Json = typeof theirs === 'string' ? { '*': theirs } : isObject(theirs) ? { ...theirs } : {};
  for (const f of folders) {
    // Moved to the end: the last matching rule decides.
    delete rules[`${f}/*`];
    rules[`${f}/*`] = 'allow';
  }
  return { args: [], env: { OPENCODE_PERMISSION: JSON.stringify({ ...permission, external_directory: rules }) } };
};
