// Gemini CLI: its resume flags and its hooks (./hooks.ts); `session.discover: list-sessions` is named
// (./list-sessions.ts reads the listing) but pins nothing yet.
import { flagRewriter } from '../shared/resume-flags.js';
import type { CliFolder } from '../types.js';
import { geminiHooks } from './hooks.js';
import { geminiUsage } from './usage.js';

export const gemini = {
  discoverers: { 'list-sessions': null },
  hooks: { gemini: geminiHooks },
  usage: { gemini: geminiUsage },
  execCommands: { gemini: flagRewriter({ cli: 'gemini', resume: (id) => ['-r', id], continueFlags: [] }) },
} satisfies CliFolder;
