import { describe, expect, it } from 'vitest';
import { rewriteResumeArgs } from '../../../src/clis/exec-rewrite.js';

const ID = '0f6b8c1e-5d2a-4c3b-9e8f-7a6b5c4d3e2f';
const OTHER = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

// [cli, args in, args out (null: unchanged)]
const rows: [string, string[], string[] | null][] = [
  // claude: latest-style forms become --resume <id>
  ['claude', ['-r'], ['--resume', ID]],
  ['claude', ['--resume'], ['--resume', ID]],
  ['claude', ['-r', 'latest'], ['--resume', ID]],
  ['claude', ['--resume', 'latest', '-p', 'hi'], ['--resume', ID, '-p', 'hi']],
  ['claude', ['--resume=latest'], ['--resume', ID]],
  ['claude', ['-c'], ['--resume', ID]],
  ['claude', ['--continue', '--model', 'opus'], ['--resume', ID, '--model', 'opus']],
  ['claude', ['-r', '--verbose'], ['--resume', ID, '--verbose']],
  ['claude', ['-c', '-r'], ['--resume', ID]],
  ['claude', ['-r', OTHER], null],
  ['claude', ['--resume', OTHER, '-p', 'go on'], null],
  ['claude', ['-p', 'hello'], null],
  ['claude', ['--', '-c'], null],
  ['/opt/bin/claude', ['-c'], ['--resume', ID]],
  // qwen: -r <id>
  ['qwen', ['-r'], ['-r', ID]],
  ['qwen', ['--resume', 'latest'], ['-r', ID]],
  ['qwen', ['-c'], ['-r', ID]],
  ['qwen', ['--continue', '-y'], ['-r', ID, '-y']],
  ['qwen', ['-r', OTHER], null],
  // gemini: -r <id>; -c is not a resume flag there
  ['gemini', ['-r', 'latest'], ['-r', ID]],
  ['gemini', ['--resume'], ['-r', ID]],
  ['gemini', ['-r', OTHER, '-p', 'x'], null],
  ['gemini', ['-r', '3'], null],
  ['gemini', ['-c'], null],
  ['gemini', ['--list-sessions'], null],
  // codex: resume <id>
  ['codex', ['resume', '--last'], ['resume', ID]],
  ['codex', ['resume'], ['resume', ID]],
  ['codex', ['resume', '--last', 'keep going'], ['resume', ID, 'keep going']],
  ['codex', ['-m', 'gpt-5', 'resume', '--last'], ['-m', 'gpt-5', 'resume', ID]],
  ['codex', ['exec', 'resume', '--last', 'fix it'], ['exec', 'resume', ID, 'fix it']],
  ['codex', ['exec', '--json', 'resume', '--last', 'x'], ['exec', '--json', 'resume', ID, 'x']],
  ['codex', ['resume', OTHER], null],
  ['codex', ['resume', OTHER, 'and then'], null],
  ['codex', ['exec', 'resume', OTHER, 'x'], null],
  ['codex', ['-c', 'model="x"', 'resume', OTHER], null],
  ['codex', ['exec', 'summarize resume --last'], null],
  ['codex', ['resume the work'], null],
  ['codex', ['-r', 'latest'], null],
  // unknown CLIs are left alone
  ['aider', ['-c', '-r', 'latest'], null],
  ['constructor', ['-c', '-r', 'latest'], null],
];

describe('rewriteResumeArgs', () => {
  it.each(rows)('%s %j', (cli, args, expected) => {
    const frozen = Object.freeze([...args]);
    const out = rewriteResumeArgs(cli, frozen, ID);
    expect(out).toEqual({ args: expected ?? args, rewritten: expected !== null });
  });

  it.each(rows.filter(([, , out]) => out === null))('%s %j needs no pinned session', (cli, args) => {
    expect(rewriteResumeArgs(cli, args, null)).toEqual({ args, rewritten: false });
  });

  it.each(rows.filter(([, , out]) => out !== null))('%s %j refuses when nothing is pinned', (cli, args) => {
    expect(() => rewriteResumeArgs(cli, args, null)).toThrow(expect.objectContaining({ code: 'E_NOT_PINNED' }));
  });

  it('says which cli, which argument, and whose session is missing', () => {
    expect(() => rewriteResumeArgs('gemini', ['-r', 'latest'], null, { agent: 'reviewer', task: 'fix-login' })).toThrow(
      'jaggers exec gemini: `-r latest` would resume whichever gemini session ran last, and no session is pinned for ' + 'agent "reviewer" in task "fix-login"',
    );
    expect(() => rewriteResumeArgs('codex', ['resume', '--last'], null, { agent: 'coder', task: null })).toThrow(
      /`resume --last` .* pinned for agent "coder" in the default team/,
    );
  });
});
