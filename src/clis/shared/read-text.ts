import { ChangedFileReader } from '../../fs/changed-file.js';

/** Transcripts are read on every state change while a turn runs: unchanged, they cost one stat. */
const reader = new ChangedFileReader();

/** A file's text; null when it cannot be read (not written yet, say). The same string while the file is unchanged. */
export function readText(file: string): Promise<string | null> {
  return reader.read(file);
}
