// What a waiting agent asks, read off real screens, and which menu item a person's choice means.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeQuestion, pickChoice, readQuestion, rowHighlight, sameQuestion, type Question } from '../../src/detect/question.js';

const dir = path.join(import.meta.dirname, '..', 'fixtures', 'screens');
const screen = (name: string) => readFileSync(path.join(dir, name), 'utf8');

describe('readQuestion on every captured waiting screen', () => {
  const expected: Record<string, Question> = {
    'claude-2.1.197-waiting.txt': {
      text: 'Do you want to proceed?',
      choices: ['Yes', 'Yes, and always allow access to work/ from this project', 'No'],
      selected: 0,
    },
    'claude-2.1.330-waiting.txt': {
      text: 'Do you want to proceed?',
      choices: [
        'Yes',
        'Yes, and always allow access to /tmp/jaggers-screens/claude/work from this project',
        'Yes, and switch to auto mode · auto mode handles these prompts for you',
        'No',
      ],
      selected: 0,
    },
    'claude-2.1.331-waiting.txt': {
      text: 'Do you want to proceed?',
      choices: [
        'Yes',
        'Yes, and always allow access to /tmp/jaggers-screens/claude/work from this project',
        'Yes, and switch to auto mode · auto mode handles these prompts for you',
        'No',
      ],
      selected: 0,
    },
    'claude-2.1.330-waiting-trust.txt': {
      text: 'Quick safety check: Is this a project you created or one you trust?',
      choices: ['No, exit', 'Yes, I trust this folder'],
      selected: 0,
    },
    // Its last frame after an Enter that came right after the highlight moved (CI): drawn on "Yes", taken as "No".
    'claude-2.1.330-waiting-trust-enter-too-soon.txt': {
      text: 'Quick safety check: Is this a project you created or one you trust?',
      choices: ['No, exit', 'Yes, I trust this folder'],
      selected: 1,
    },
    'qwen-0.24.4-waiting.txt': {
      text: "Allow execution of: 'touch'?",
      choices: [
        'Yes, allow once',
        "Always allow run 'touch *' commands in this project",
        "Always allow run 'touch *' commands for this user",
        'No, suggest changes (esc)',
      ],
      selected: 0,
    },
    'codex-0.169.0-waiting.txt': {
      text: 'Would you like to run the following command?',
      choices: [
        'Yes, proceed (y)',
        "Yes, and don't ask again for commands that start with `touch approved.txt` (p)",
        'No, and tell Codex what to do differently (esc)',
      ],
      selected: 0,
    },
    'copilot-1.0.102-waiting.txt': {
      text: 'Do you want to run this command?',
      choices: [
        'Yes',
        "Yes, and don't ask again for `touch` in this directory (/tmp/jaggers-screens/copilot/work)",
        'No, and tell Copilot what to do differently (Esc to stop)',
      ],
      selected: 0,
    },
    // Its first-run dialog in a folder it was not told to trust.
    'copilot-1.0.102-waiting-trust.txt': {
      text: 'Do you trust the files in this folder?',
      choices: ['Yes', 'Yes, and remember this folder for future sessions', 'No (Esc)'],
      selected: 0,
    },
    // Reading a handover file outside its folder (an agent in a worktree), before jaggers opened the shared folders to it.
    'claude-2.1.330-waiting-read-outside.txt': {
      text: 'Do you want to proceed?',
      choices: ['Yes', 'Yes, allow reading from /tmp/jgt-pbQf6s/project/.jaggers/handover during this session', 'No'],
      selected: 0,
    },
    // `--add-dir` in a git repository: claude asks to trust the whole repository (so jaggers does not use it).
    // Captured in the frame before its highlight was drawn: no item is marked, so none is read.
    'claude-2.1.330-waiting-add-dir-trust.txt': {
      text: "This session hasn't worked here before. Is this a directory you created or one you trust?",
      choices: [],
    },
    'copilot-1.0.102-waiting-read-outside.txt': {
      text: 'Do you want to allow this?',
      choices: [
        'Yes',
        'Yes, and remember this path for this session',
        'Yes, allow file-tool read-only access to the listed directory for this session',
        'No (Esc)',
      ],
      selected: 0,
    },
    // Resumed a moment after its process was killed (CI): it takes the session for one another client holds.
    'copilot-1.0.102-waiting-session-in-use.txt': {
      text: 'This session was last active just now and appears to be in use by another CLI or application. Resuming it here may cause conflicts.',
      choices: ['Resume anyway', 'Go back (Esc)'],
      selected: 0,
    },
    'opencode-1.18.33-waiting-read-outside.txt': { text: '△ Permission required', choices: ['Allow once', 'Allow always', 'Reject'], layout: 'row' },
    'qwen-0.24.4-waiting-read-outside.txt': {
      text: 'Do you want to proceed?',
      choices: [
        'Yes, allow once',
        'Always allow read files in /tmp/jgt-pbQf6s/project/.jaggers/handover/ in this project',
        'Always allow read files in /tmp/jgt-pbQf6s/project/.jaggers/handover/ for this user',
        'No, suggest changes (esc)',
      ],
      selected: 0,
    },
    // A row menu: the highlight is drawn in colour only (rowHighlight reads it from a capture with escapes).
    'opencode-1.18.33-waiting.txt': { text: '△ Permission required', choices: ['Allow once', 'Allow always', 'Reject'], layout: 'row' },
    'fake-agent-1.0.0-waiting.txt': { text: 'Allow execution of [Shell]: touch approved.txt?', choices: ['Allow once', 'Deny'], selected: 0 },
    'gemini-0.61.0-waiting.txt': {
      text: 'Allow execution of [Shell]?',
      choices: ['Allow once', 'Allow for this session', 'No, suggest changes (esc)'],
      selected: 0,
    },
    'qwen-0.15.10-waiting.txt': {
      text: "Allow execution of: 'touch'?",
      choices: [
        'Yes, allow once',
        "Always allow run 'touch *' commands in this project",
        "Always allow run 'touch *' commands for this user",
        'No, suggest changes (esc)',
      ],
      selected: 0,
    },
  };
  const files = readdirSync(dir).filter((f) => /-waiting(-[\w-]+)?\.txt$/.test(f));

  it('has an expectation for each waiting fixture (a new capture must be added here)', () => {
    expect(files.filter((f) => !(f in expected))).toEqual([]);
  });
  for (const [file, q] of Object.entries(expected)) {
    it(file, () => expect(readQuestion(screen(file))).toEqual(q));
  }

  it('a menu without numbers: the highlighted item and its neighbours at the same indentation (claude 2.1.330 dialogs)', () => {
    const nudge = [
      ' ▐▛███▛█   Claude Code v2.1.330',
      '',
      '─'.repeat(40),
      '  Make auto mode your default permission mode?',
      '',
      '  Auto mode lets Claude handle permission prompts automatically. Claude checks each tool call for risky actions and prompt injection before executing, runs the ones it assesses as lower-risk, and',
      '  blocks the rest.',
      '',
      '  ❯ Yes, set auto mode as my default permission mode',
      '    No, keep manual mode',
      '',
      '',
    ].join('\n');
    expect(readQuestion(nudge)).toEqual({
      text: 'Make auto mode your default permission mode?',
      choices: ['Yes, set auto mode as my default permission mode', 'No, keep manual mode'],
      selected: 0,
    });
    const moved = nudge.replace('  ❯ Yes, set', '    Yes, set').replace('    No, keep', '  ❯ No, keep');
    expect(readQuestion(moved)?.selected).toBe(1);
  });

  it('a prompt echo with a wrapped line is not a menu; neither is a lone highlighted line', () => {
    const echo = [
      '❯ Read ../../.jaggers/handover/turn_1_ab.md and do what',
      '  it asks. [jg:0123]',
      '',
      '● Sure.',
      '',
      '  Do you want to proceed?',
      '  ❯ 1. Yes',
      '    2. No',
    ].join('\n');
    expect(readQuestion(echo)).toEqual({ text: 'Do you want to proceed?', choices: ['Yes', 'No'], selected: 0 });
    expect(readQuestion(['  Pick one?', '', '  ❯ Only this', '', '  Enter to confirm'].join('\n'))).toEqual({ text: 'Pick one?', choices: [] });
  });

  it('a scrollbar at the right edge is not part of the question or its choices (qwen 0.24.4)', () => {
    const bar = ' '.repeat(30) + '█';
    const screen = [`  Allow execution of: 'touch'?${bar}`, `  ● 1. Yes, allow once${bar}`, `    2. No, suggest changes (esc)${bar}`].join('\n');
    expect(readQuestion(screen)).toEqual({ text: "Allow execution of: 'touch'?", choices: ['Yes, allow once', 'No, suggest changes (esc)'], selected: 0 });
  });

  it('no menu and no question: null', () => {
    expect(readQuestion('\n\n   \n')).toBeNull();
  });
});

describe('pickChoice', () => {
  const q: Question = { text: 'Allow execution of [Shell]?', choices: ['Allow once', 'Allow for this session', 'No, suggest changes (esc)'] };

  it('by number, 1-based as the menu shows', () => {
    expect(pickChoice(q, '1')).toEqual({ number: 1, label: 'Allow once' });
    expect(pickChoice(q, ' 3 ')).toEqual({ number: 3, label: 'No, suggest changes (esc)' });
  });

  it('by label: an exact one wins over parts of others, case does not matter', () => {
    expect(pickChoice(q, 'allow ONCE')).toEqual({ number: 1, label: 'Allow once' });
    expect(pickChoice(q, 'session')).toEqual({ number: 2, label: 'Allow for this session' });
    expect(pickChoice({ text: '?', choices: ['Yes', 'Yes, always'] }, 'yes')).toEqual({ number: 1, label: 'Yes' });
  });

  it('says why nothing was picked: out of range, no match, several matches', () => {
    expect(pickChoice(q, '0')).toBe('there is no choice 0: the menu offers 1. Allow once, 2. Allow for this session, 3. No, suggest changes (esc)');
    expect(pickChoice(q, '4')).toMatch(/^there is no choice 4: /);
    expect(pickChoice(q, 'maybe')).toMatch(/^no choice matches "maybe": the menu offers 1\. Allow once/);
    expect(pickChoice(q, 'allow')).toBe('"allow" matches 2 choices (1. Allow once, 2. Allow for this session): give its number');
  });
});

describe('sameQuestion and describeQuestion', () => {
  const a: Question = { text: 'Do you want to proceed?', choices: ['Yes', 'No'] };
  it('the same text and the same choices in order', () => {
    expect(sameQuestion(a, { text: 'Do you want to proceed?', choices: ['Yes', 'No'] })).toBe(true);
    expect(sameQuestion(a, { text: 'Do you want to proceed?', choices: ['No', 'Yes'] })).toBe(false);
    expect(sameQuestion(a, { text: 'Do you want to proceed?', choices: ['Yes'] })).toBe(false);
    expect(sameQuestion(a, { text: 'Proceed?', choices: ['Yes', 'No'] })).toBe(false);
  });
  it('one line with numbered choices; a question without a menu has none', () => {
    expect(describeQuestion(a)).toBe('"Do you want to proceed?" [1. Yes / 2. No]');
    expect(describeQuestion({ text: 'Anything else?', choices: [] })).toBe('"Anything else?"');
  });
});

describe('rowHighlight: which item of a row menu is highlighted, from a capture with escapes', () => {
  const ansi = (name: string) => readFileSync(path.join(dir, '..', 'ansi', name), 'utf8');
  const choices = ['Allow once', 'Allow always', 'Reject'];

  it("reads opencode 1.18.33's permission dialog, before and after Right", () => {
    expect(rowHighlight(ansi('opencode-1.18.33-waiting-allow-once.ansi'), choices)).toBe(0);
    expect(rowHighlight(ansi('opencode-1.18.33-waiting-allow-always.ansi'), choices)).toBe(1);
  });

  it('says nothing when no single item stands out, or an item is missing', () => {
    const plain = '  Allow once   Allow always   Reject   ⇆ select  enter confirm';
    expect(rowHighlight(plain, choices)).toBeUndefined();
    const allDifferent = '\x1b[41mAllow once\x1b[42m Allow always\x1b[43m Reject\x1b[0m';
    expect(rowHighlight(allDifferent, choices)).toBeUndefined();
    expect(rowHighlight('\x1b[7mAllow once\x1b[27m  Allow always', choices)).toBeUndefined();
  });

  it('counts reverse video and 256-colour backgrounds as a highlight', () => {
    expect(rowHighlight('  Allow once  \x1b[7mAllow always\x1b[0m  Reject', choices)).toBe(1);
    expect(rowHighlight('  Allow once  Allow always  \x1b[48;5;33mReject\x1b[49m', choices)).toBe(2);
  });

  it('reads a row menu only beside a select or confirm hint', () => {
    expect(readQuestion('Pick one\n  Red   Green   Blue   ←→ select  enter confirm\n')).toEqual({
      text: 'Pick one',
      choices: ['Red', 'Green', 'Blue'],
      layout: 'row',
    });
    expect(readQuestion('Some text\n  Red   Green   Blue\n')?.layout).toBeUndefined();
  });
});
