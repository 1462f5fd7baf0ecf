// Reading a reply and a finished turn off captured screens of the real CLIs (and the fake agent), and
// judging whether a typed prompt was taken: pure functions over screen text.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inputAreaLines, promptEvidence, sightPrompt, splitAtInputArea } from '../../src/delivery/evidence.js';
import { classify, doneEvidence } from '../../src/detect/classify.js';
import { replyFromScreen, screenShowsTurnEnd } from '../../src/handover/reply.js';
import { parseProfile } from '../../src/profiles/load.js';
import { builtinProfilesDir } from '../../src/package-root.js';

const fixture = (name: string) => readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'screens', `${name}.txt`), 'utf8');
const load = (name: string) => parseProfile(JSON.parse(readFileSync(path.join(builtinProfilesDir, `${name}.json`), 'utf8')), `${name}.json`);
const FOXES = 'Foxes are small omnivores of the dog family. They hunt alone at dusk and dawn, and they cache food for later.';
/** The fixture's prompt as jaggers would have typed it, with a nonce tag. */
const tagged = (screen: string, prompt: string) => screen.replace(prompt, `${prompt} [jg:fx01]`);

describe('replies read off the screen', () => {
  it.each([
    ['gemini', 'gemini-0.61.0-done'],
    ['qwen', 'qwen-0.15.10-done'],
    ['claude', 'claude-2.1.197-done'],
    ['opencode', 'opencode-1.18.33-done'],
    ['copilot', 'copilot-1.0.102-done'],
  ])('%s: only the answer, without marker, hint line, rules or turn summary', (profile, file) => {
    const screen = tagged(fixture(file), 'Tell me about foxes');
    expect(replyFromScreen(screen, 'fx01', load(profile))).toBe(FOXES);
  });

  it('copilot: the folder line above its input box is furniture; after a tool call, the answer that ends the turn', () => {
    const profile = load('copilot');
    const afterTool = replyFromScreen(tagged(fixture('copilot-1.0.102-done-after-tool'), 'Run the command that needs-approval'), 'fx01', profile);
    expect(afterTool).toBe('stub: the command ran.');
    const owls = 'Owls turn their heads up to 270 degrees. Their feathers are built for silent flight through the night.';
    expect(replyFromScreen(tagged(fixture('copilot-1.0.102-done-after-tool'), 'Now tell me about owls'), 'fx01', profile)).toContain(owls);
  });

  it("opencode: no marker; the prompt box's last bar, the reply's shared indent and the `▣ Build · model · 7.5s` line go", () => {
    const profile = load('opencode');
    const owls = 'Owls turn their heads up to 270 degrees. Their feathers are built for silent flight through the night.';
    expect(replyFromScreen(tagged(fixture('opencode-1.18.33-waiting'), 'Now tell me about owls'), 'fx01', profile)).toContain(owls);
    const afterTool = replyFromScreen(tagged(fixture('opencode-1.18.33-done-after-tool'), 'Run the command that needs-approval'), 'fx01', profile);
    // The tool's box (`┃  $ touch approved.txt`, `┃  (no output)`) is part of what the turn showed; the answer ends it.
    expect(afterTool.split('\n').at(-1)?.trim()).toBe('stub: the command ran.');
    expect(afterTool).toContain('$ touch approved.txt');
    // A reply of several paragraphs keeps its blank lines and loses only the indent all its lines share.
    const screen = fixture('opencode-1.18.33-done')
      .replace('Tell me about foxes', 'Tell me about foxes [jg:fx01]')
      .replace(`     ${FOXES}`, '     One.\n\n       - two\n     Three.');
    expect(replyFromScreen(screen, 'fx01', profile)).toBe('One.\n\n  - two\nThree.');
    expect(screenShowsTurnEnd(screen, 'fx01', profile)).toBe(true);
  });

  it('opencode: its turn summary drawn under the prompt before the reply (e2e, hooks off, a loaded machine): the end shows, the reply is empty', () => {
    // The screen of that CI run's failure with the reply's line not drawn yet (the wait took it; the
    // pane's screen a moment later had the line).
    const screen = fixture('opencode-1.18.33-trap-done-before-text');
    const profile = load('opencode');
    expect(screenShowsTurnEnd(screen, '94999d20d7d27540', profile)).toBe(true);
    expect(replyFromScreen(screen, '94999d20d7d27540', profile)).toBe('');
    const drawn = screen.replace('\n\n\n     ▣', '\n\n     answer: job for opencode, at once\n\n     ▣');
    expect(replyFromScreen(drawn, '94999d20d7d27540', profile)).toBe('answer: job for opencode, at once');
  });

  it('the fake agent: a multi-line reply loses its marker and its indent, keeps its lines', () => {
    const screen = tagged(fixture('fake-agent-1.0.0-done'), 'first prompt');
    const reply = replyFromScreen(screen, 'fx01', load('demo')).split('\n');
    expect(reply[0]).toMatch(/^turn 1 of session 1c18870f$/);
    expect(reply[1]).toBe('You said: first prompt');
    expect(reply).toHaveLength(3);
  });

  it('codex: a tip it shows under the reply (`└ Tip: ...`, seen in the e2e jobs run) is not part of the reply', () => {
    const profile = load('codex');
    const screen = fixture('codex-0.169.0-done-with-tip');
    expect(replyFromScreen(screen, 'ad822da634c5283f', profile)).toBe('answer: job for codex from claude, at once');
    const afterTool = replyFromScreen(tagged(fixture('codex-0.169.0-done-after-tool'), 'Run the command that needs-approval'), 'fx01', profile);
    expect(afterTool).not.toContain('Tip:');
    expect(afterTool.endsWith('stub: the command ran.')).toBe(true);
  });

  it('gemini: the status line of its hooks (`Executing Hooks: jaggers-...`, left under the reply; seen in the e2e jobs run) is not part of the reply', () => {
    const profile = load('gemini');
    expect(replyFromScreen(fixture('gemini-0.61.0-done-with-hooks'), 'd974c67923763ddd', profile)).toBe('answer: job for gemini, at once');
    const one = fixture('gemini-0.61.0-done-with-hooks').replace(
      'Executing Hooks: jaggers-BeforeAgent, jaggers-AfterAgent',
      'Executing Hook: jaggers-AfterAgent',
    );
    expect(replyFromScreen(one, 'd974c67923763ddd', profile)).toBe('answer: job for gemini, at once');
  });

  it("keeps lines in the middle of a reply that look like chrome, and a second block's text", () => {
    const profile = load('gemini');
    const screen = tagged(fixture('gemini-0.61.0-done'), 'Tell me about foxes').replace(`✦ ${FOXES}`, '✦ one\n  ──────\n  ? for shortcuts\n  two');
    expect(replyFromScreen(screen, 'fx01', profile)).toBe('one\n──────\n? for shortcuts\ntwo');
  });
});

describe('a finished turn is confirmed only below its own prompt', () => {
  it('gemini: the echo above the input area and nothing busy after it', () => {
    const profile = load('gemini');
    expect(screenShowsTurnEnd(tagged(fixture('gemini-0.61.0-done'), 'Tell me about foxes'), 'fx01', profile)).toBe(true);
    expect(screenShowsTurnEnd(tagged(fixture('gemini-0.61.0-busy'), 'Tell me about foxes'), 'fx01', profile)).toBe(false);
    expect(screenShowsTurnEnd(fixture('gemini-0.61.0-done'), 'fx01', profile), 'no echo of this nonce').toBe(false);
  });

  it('claude: an old turn summary above the new prompt does not count; one after it does', () => {
    const profile = load('claude');
    const done = fixture('claude-2.1.197-done');
    expect(screenShowsTurnEnd(tagged(done, 'Tell me about foxes'), 'fx01', profile)).toBe(true);
    // After a resume: the old turn and its summary, then the new prompt's echo with nothing after it yet.
    const [head, input] = [done.slice(0, done.lastIndexOf('\n\n────')), done.slice(done.lastIndexOf('\n\n────'))];
    const justTyped = `${head}\n\n❯ Read next.md [jg:fx02]${input}`;
    expect(screenShowsTurnEnd(justTyped, 'fx02', profile)).toBe(false);
  });
});

describe('was the prompt taken', () => {
  const profile = load('gemini');
  const n = inputAreaLines(profile);
  const idle = fixture('gemini-0.61.0-idle');
  const typed = idle.replace('>   Type your message or @path/to/file', '> Read a.md and do what it asks. [jg:ab12]');

  it('splits the screen above the input area', () => {
    const { input } = splitAtInputArea(typed, n);
    expect(input.filter((l) => l.trim() !== '')).toHaveLength(n);
    expect(input.some((l) => l.includes('[jg:ab12]'))).toBe(true);
  });

  it('in the input box: not taken; echoed above it: taken; neither: unknown', () => {
    const before = sightPrompt(idle, '[jg:ab12]', n);
    expect(before).toEqual({ echoes: 0, inInput: false });
    expect(promptEvidence(before, sightPrompt(typed, '[jg:ab12]', n))).toBe('in-input');
    const echoed = tagged(fixture('gemini-0.61.0-busy'), 'Tell me about foxes').replace('[jg:fx01]', '[jg:ab12]');
    expect(promptEvidence(before, sightPrompt(echoed, '[jg:ab12]', n))).toBe('taken');
    expect(promptEvidence(before, sightPrompt(idle, '[jg:ab12]', n))).toBe('unknown');
  });

  it('without a nonce, an older echo of the same text is not proof: one more echo is', () => {
    const once = tagged(fixture('gemini-0.61.0-done'), 'Tell me about foxes');
    const before = sightPrompt(once, 'about foxes [jg:fx01]', n);
    expect(before.echoes).toBe(1);
    expect(promptEvidence(before, sightPrompt(once, 'about foxes [jg:fx01]', n))).toBe('unknown');
    const twice = once.replace('> Tell me about foxes [jg:fx01]', '> Tell me about foxes [jg:fx01]\n> Tell me about foxes [jg:fx01]');
    expect(promptEvidence(before, sightPrompt(twice, 'about foxes [jg:fx01]', n))).toBe('taken');
  });

  it("opencode: `/compact` typed shows in its command menu above the box, and the menu pushes the last turn's summary out of its rule's reach", () => {
    // Captured after pasting `/compact` into opencode 1.18.33 (no submit key yet). In CI its Enter was lost:
    // the menu's line counted as the echo (delivery now says in-input while the text is in the box), and
    // the summary hidden at the next prompt's paste read as new when it showed again.
    const menu = fixture('opencode-1.18.33-idle-command-menu');
    const oc = load('opencode');
    const seen = sightPrompt(menu, '/compact', inputAreaLines(oc));
    expect(seen).toEqual({ echoes: 1, inInput: true });
    expect(classify({ screen: menu, raw: '', rules: oc.detect.rules }).status).toBe('idle');
    expect(doneEvidence({ screen: menu, raw: '', rules: oc.detect.rules })).toBeNull();
    const closed = menu.replace(/^ {2}┃ \/(compact|review) .*\n/gm, '').replace('┃  /compact', '┃');
    expect(doneEvidence({ screen: closed, raw: '', rules: oc.detect.rules })).toMatch(/▣ {2}Build · Stub Model · 8\.4s/);
  });
});
