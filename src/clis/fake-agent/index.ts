// The built-in fake agent (src/fake-agent/): its session file, its state file (claude's format) and
// claude's resume flags, its hooks (claude's way: a settings file of commands), so tests and the demo exercise the same paths as the real CLIs.
import path from 'node:path';
import { claudeFlags } from '../claude/flags.js';
import { flagRewriter } from '../shared/resume-flags.js';
import { parseStateFile } from '../shared/status-json.js';
import type { CliFolder } from '../types.js';
import { fakeAgentHooks } from './hooks.js';
import { fakeAgentReply } from './transcript.js';

export const fakeAgent = {
  transcripts: { 'fake-agent': fakeAgentReply },
  stateFiles: { 'fake-agent': { path: (home, pid) => path.join(home, '.fake-agent', 'state', `${pid}.json`), parse: parseStateFile } },
  execCommands: { 'jaggers-fake-agent': flagRewriter(claudeFlags) },
  hooks: { 'fake-agent': fakeAgentHooks },
} satisfies CliFolder;
