// GitHub Copilot CLI: its session events.
import { readText } from '../shared/read-text.js';
import type { CliFolder } from '../types.js';
import { copilotReply, copilotTranscriptFile } from './transcript.js';

export const copilot = {
  transcripts: {
    async copilot(home, _cwd, sessionId, tag) {
      const text = await readText(copilotTranscriptFile(home, sessionId));
      return text === null ? null : copilotReply(text, tag);
    },
  },
} satisfies CliFolder;
