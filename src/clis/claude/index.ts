// Claude Code: its transcript, its state file (`~/.claude/sessions/<pid>.json`), its resume flags and its hooks.
import path from 'node:path';
import { flagRewriter } from '../shared/resume-flags.js';
import { parseStateFile } from '../shared/status-json.js';
import type { CliFolder } from '../types.js';
import { claudeFlags } from './flags.js';
import { readClaudeEntries } from './entries-cache.js';
import { claudeHooks } from './hooks.js';
import { claudeTranscriptFile, replyInTranscript } from './transcript.js';
import { claudeUsage } from './usage.js';

export { claudeFlags };

export const claude = {
  transcripts: {
    async claude(home, cwd, sessionId, tag) {
      const entries = await readClaudeEntries(claudeTranscriptFile(home, cwd, sessionId));
      const reply = entries === null ? null : replyInTranscript(entries, tag);
      return reply && { text: reply.text, finished: reply.finished };
    },
  },
  stateFiles: { 'claude-sessions': { path: (home, pid) => path.join(home, '.claude', 'sessions', `${pid}.json`), parse: parseStateFile } },
  execCommands: { claude: flagRewriter(claudeFlags) },
  hooks: { claude: claudeHooks },
  usage: { claude: claudeUsage },
} satisfies CliFolder;
