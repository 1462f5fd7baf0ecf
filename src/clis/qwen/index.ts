// Qwen Code: its chat recording, its resume flags and its hooks (./hooks.ts).
import { readText } from '../shared/read-text.js';
import { flagRewriter } from '../shared/resume-flags.js';
import type { CliFolder } from '../types.js';
import { qwenHooks } from './hooks.js';
import { qwenReply, qwenTranscriptFile } from './transcript.js';
import { qwenUsage } from './usage.js';

export const qwen = {
  transcripts: {
    async qwen(home, cwd, sessionId, tag) {
      const text = await readText(qwenTranscriptFile(home, cwd, sessionId));
      return text === null ? null : qwenReply(text, tag);
    },
  },
  hooks: { qwen: qwenHooks },
  usage: { qwen: qwenUsage },
  execCommands: { qwen: flagRewriter({ cli: 'qwen', resume: (id) => ['-r', id], continueFlags: ['-c', '--continue'] }) },
} satisfies CliFolder;
