// Claude Code's resume flags (`--resume <id>`, `-c`/`--continue`), which the fake agent shares.
import type { ResumeFlags } from '../shared/resume-flags.js';

export const claudeFlags: ResumeFlags = { cli: 'claude', resume: (id) => ['--resume', id], continueFlags: ['-c', '--continue'] };
