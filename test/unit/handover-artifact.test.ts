import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nextTurn, parseArtifact, renderArtifact, writeArtifact, type HandoverMeta } from '../../src/handover/artifact.js';
import { replyFromScreen } from '../../src/handover/reply.js';
import { ProfileSchema } from '../../src/profiles/schema.js';
import { mkfifo } from '../helpers/confine-fixture.js';
import { tempDirs } from '../helpers/temp-dir.js';

const tempDir = tempDirs('jg-art-');

const meta = (task: string, turn: number): HandoverMeta => ({
  task,
  workflow: 'handoff',
  turn,
  sourceAgent: 'planner',
  sourceSession: null,
  targetAgent: 'coder',
  targetSession: '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b',
  created: '2026-11-21T10:00:00.000Z',
});

describe('handover artifacts', () => {
  it('nextTurn counts per task, and sees files another process wrote after it looked', async () => {
    const dir = await tempDir();
    expect(await nextTurn(dir, 'a')).toBe(1);
    await writeArtifact(dir, meta('a', 1), 'x');
    await writeArtifact(dir, meta('b', 1), 'x');
    expect(await nextTurn(dir, 'a')).toBe(2);
    // Written behind its back (as a second process would): found on the next call.
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path.join(dir, 'handover', 'turn_7_abcdef.md'), renderArtifact(meta('a', 7), 'y'));
    await writeFile(path.join(dir, 'handover', 'turn_9_fedcba.md'), renderArtifact(meta('task: "q"', 9), 'y'));
    expect(await nextTurn(dir, 'a')).toBe(8);
    expect(await nextTurn(dir, 'b')).toBe(2);
    expect(await nextTurn(dir, 'task: "q"')).toBe(10);
  });

  it('a FIFO, or a link out, in the handover folder (agents can write there) is passed over, not read', async () => {
    const dir = await tempDir();
    await writeArtifact(dir, meta('a', 1), 'x');
    const { symlink, writeFile } = await import('node:fs/promises');
    mkfifo(path.join(dir, 'handover', 'turn_5_abcdef.md'));
    await writeFile(path.join(dir, 'outside.md'), renderArtifact(meta('a', 6), 'y'));
    await symlink(path.join(dir, 'outside.md'), path.join(dir, 'handover', 'turn_6_abcdef.md'));
    expect(await nextTurn(dir, 'a')).toBe(2);
  }, 10_000);

  it('render and parse round-trip, quoting values that need it', () => {
    const text = renderArtifact({ ...meta('task: with "quotes"', 2), replyTo: 'turn_1_abc123.md' }, 'the body\n---\nstill body');
    expect(text.startsWith('---\ntask: "task: with \\"quotes\\""\nworkflow: handoff\nturn: 2\n')).toBe(true);
    expect(parseArtifact(text)).toEqual({
      meta: {
        task: 'task: with "quotes"',
        workflow: 'handoff',
        turn: 2,
        source_agent: 'planner',
        source_session: null,
        target_agent: 'coder',
        target_session: '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b',
        created: '2026-11-21T10:00:00.000Z',
        reply_to: 'turn_1_abc123.md',
      },
      body: 'the body\n---\nstill body\n',
    });
  });

  it('numbers turns per task from the artifacts on disk', async () => {
    const dir = await tempDir();
    expect(await nextTurn(dir, 'a')).toBe(1);
    const f1 = await writeArtifact(dir, meta('a', 1), 'x'.repeat(100_000));
    await writeArtifact(dir, meta('b', 7), 'y');
    expect(path.basename(f1)).toMatch(/^turn_1_[0-9a-f]{6}\.md$/);
    expect(await nextTurn(dir, 'a')).toBe(2);
    expect(await nextTurn(dir, 'b')).toBe(8);
    expect(parseArtifact(await readFile(f1, 'utf8')).body).toBe('x'.repeat(100_000) + '\n');
  });

  it('takes a reply from the screen after the prompt echo, without the input area', () => {
    const profile = ProfileSchema.parse({
      name: 'p',
      command: 'c',
      detect: { replyMarker: '^✦ ', rules: [{ name: 'box', status: 'idle', pattern: '^> ', lines: 2 }] },
    });
    const screen = ['old stuff', '> Read x.md and do what it asks. [jg:ab12]', '✦ the answer', '  second line', '', '> ', '? for shortcuts'].join('\n');
    expect(replyFromScreen(screen, 'ab12', profile)).toBe('the answer\nsecond line');
  });
});
