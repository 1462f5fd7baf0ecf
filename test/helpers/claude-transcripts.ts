// The real claude transcripts kept as fixtures (test/fixtures/transcripts): their names, and the nonce
// tags of the prompts in them. test/e2e/capture-transcripts.test.ts makes them; the unit tests read them.

import { readFileSync } from 'node:fs';
import path from 'node:path';

export const CLAUDE_VERSION = '2.1.197';

/** Fixed tags, so that a recapture gives the same prompts (the stub's replies are fixed too). */
export const TAG = {
  simple: '[jg:00000000000000a1]',
  fast: '[jg:00000000000000b1]',
  first: '[jg:00000000000000c1]',
  second: '[jg:00000000000000c2]',
  interrupted: '[jg:00000000000000c3]',
  tool: '[jg:00000000000000d1]',
  queuedFirst: '[jg:00000000000000d2]',
  queuedSecond: '[jg:00000000000000d3]',
  approval: '[jg:00000000000000e1]',
  headless: '[jg:00000000000000f1]',
} as const;

export const PROMPT = {
  simple: `Read .jaggers/handover/turn_1_ab.md and do what it asks. ${TAG.simple}`,
  fast: `Read .jaggers/handover/turn_1_ab.md and do what it asks. ${TAG.fast}`,
  first: `Say something about foxes. ${TAG.first}`,
  second: `Now something about owls. ${TAG.second}`,
  interrupted: `Give me a slow answer. ${TAG.interrupted}`,
  tool: `Run the slow command. ${TAG.tool}`,
  queuedFirst: `Run another slow command. ${TAG.queuedFirst}`,
  queuedSecond: `Queued while busy. ${TAG.queuedSecond}`,
  approval: `Run the command that needs-approval ${TAG.approval}`,
  headless: `A headless question. ${TAG.headless}`,
} as const;

/** What the handover file asks; the stub answers `answer: <its first body line>`. */
export const HANDOVER = '---\nfrom: lead\nturn: 1\n---\n\nthe secret word is pelican\n';

/** The absolute temp folder of the capture, replaced in the fixtures. */
export const ROOT_PLACEHOLDER = '<root>';

export type TranscriptFixture =
  | 'simple'
  | 'streaming'
  | 'reply-above-prompt'
  | 'two-turns'
  | 'torn-last-line'
  | 'interrupted'
  | 'tool-running'
  | 'tool'
  | 'queued-prompt'
  | 'tool-approval-pending'
  | 'headless';

export const transcriptsDir = path.join(import.meta.dirname, '..', 'fixtures', 'transcripts');

export const fixtureFile = (name: TranscriptFixture): string => path.join(transcriptsDir, `claude-${CLAUDE_VERSION}-${name}.jsonl`);

export const readFixture = (name: TranscriptFixture): string => readFileSync(fixtureFile(name), 'utf8');
