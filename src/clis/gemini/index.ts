// Gemini CLI: its resume flags; `session.discover: list-sessions` is named (./list-sessions.ts reads
// the listing) but pins nothing yet.
import { flagRewriter } from '../shared/resume-flags.js';
import type { CliFolder } from '../types.js';

export const gemini = {
  discoverers: { 'list-sessions': null },
  execCommands: { gemini: flagRewriter({ cli: 'gemini', resume: (id) => ['-r', id], continueFlags: [] }) },
} satisfies CliFolder;
