// The kinds a profile names (`session.transcript: "claude"`, `detect.stateFile`, `detect.hooks`, `session.discover`,
// `session.headlessIdFrom`, `session.headlessReply`, `mcp.via`, `sharedFolders.via`, `session.usage`) mapped to the CLI folders' functions,
// gathered from every folder in ./index.ts; the profile schema accepts exactly these names.
import * as folders from './index.js';
import type { CliFolder, McpFormat } from './types.js';

type Folder = (typeof folders)[keyof typeof folders];
type Field = keyof CliFolder;
/** The kind names a field has across the folders. */
type KindOf<K extends Field, F = Folder> = F extends { readonly [P in K]: infer M } ? keyof M & string : never;
type Fn<K extends Field> = NonNullable<CliFolder[K]>[string];

/** Every folder's entries of one field, in one map; a kind two folders both claim is a bug. */
function gather<K extends Field>(field: K): Record<KindOf<K>, Fn<K>> {
  const out: Record<string, Fn<K>> = {};
  for (const [name, folder] of Object.entries(folders) as [string, CliFolder][]) {
    for (const [kind, fn] of Object.entries(folder[field] ?? {})) {
      if (Object.hasOwn(out, kind)) throw new Error(`src/clis/${name}: ${field} kind "${kind}" is claimed by another CLI folder too`);
      out[kind] = fn as Fn<K>;
    }
  }
  return out as Record<KindOf<K>, Fn<K>>;
}

/** The names as a tuple, for `z.enum`. */
const namesOf = <T extends string>(map: Record<T, unknown>) => Object.keys(map) as [T, ...T[]];

export const TRANSCRIPTS = gather('transcripts');
export const STATE_FILES = gather('stateFiles');
export const DISCOVERERS = gather('discoverers');
export const HEADLESS_IDS = gather('headlessIds');
/** `text`: what the CLI printed is the reply. */
export const HEADLESS_REPLIES = { text: (stdout: string) => stdout, ...gather('headlessReplies') };
/** `config-file`: `{"mcpServers": {"jaggers": {...}}}`, the format most CLIs read. */
export const MCP_FORMATS = { 'config-file': { config: (entry) => ({ mcpServers: { jaggers: entry } }) } satisfies McpFormat, ...gather('mcpFormats') };
/** `jaggers exec <command>`, by the command's file name (lower case). */
export const EXEC_COMMANDS = gather('execCommands');
/** `detect.hooks`: how a CLI is made to call jaggers' hook bridge, and what its calls say (issue 27). */
export const HOOKS = gather('hooks');
/** `sharedFolders.via`: a CLI's own way to let its file tools read folders outside its own. */
export const FOLDER_ACCESS = gather('folderAccess');
/** `session.usage`: a session's tokens so far, from the CLI's own records (docs/usage.md). */
export const USAGE_READERS = gather('usage');

export type TranscriptKind = keyof typeof TRANSCRIPTS;
export type StateFileKind = keyof typeof STATE_FILES;
export type HookKind = keyof typeof HOOKS;
export type UsageKind = keyof typeof USAGE_READERS;

export const TRANSCRIPT_KINDS = namesOf(TRANSCRIPTS);
export const STATE_FILE_KINDS = namesOf(STATE_FILES);
export const DISCOVER_KINDS = namesOf(DISCOVERERS);
export const HEADLESS_ID_KINDS = namesOf(HEADLESS_IDS);
export const HEADLESS_REPLY_KINDS = namesOf(HEADLESS_REPLIES);
export const MCP_VIA_KINDS = namesOf(MCP_FORMATS);
export const HOOK_KINDS = namesOf(HOOKS);
export const FOLDER_ACCESS_KINDS = namesOf(FOLDER_ACCESS);
export const USAGE_KINDS = namesOf(USAGE_READERS);
