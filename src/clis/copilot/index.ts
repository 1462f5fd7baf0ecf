// GitHub Copilot CLI: its session events, and its hooks (a plugin folder of jaggers' own).
import { readText } from '../shared/read-text.js';
import type { CliFolder } from '../types.js';
import { copilotHooks } from './hooks.js';
import { copilotReply, copilotTranscriptFile } from './transcript.js';
import { copilotUsage } from './usage.js';

export const copilot = {
  transcripts: {
    async copilot(home, _cwd, sessionId, tag) {
      const text = await readText(copilotTranscriptFile(home, sessionId));
      return text === null ? null : copilotReply(text, tag);
    },
  },
  hooks: { copilot: copilotHooks },
  usage: { copilot: copilotUsage },
} satisfies CliFolder;
