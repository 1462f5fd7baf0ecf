// A workflow turn's prompt and reply files for the dashboard: read from the task's own turn record, only
// inside .jaggers/'s shared folders, bounded in size; a turn or a file that is not there is a clear 404.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TaskTurnView, TaskView } from '../../src/api/types.js';
import { readTurnFile, TURN_FILE_MAX } from '../../src/web/terminal-routes.js';
import { tempDirs } from '../helpers/temp-dir.js';

const temp = tempDirs('jg-turns-');

const turn = (seq: number, prompt: string | null, reply: string | null): TaskTurnView => ({
  seq,
  step: 'write',
  agent: 'alpha',
  round: 1,
  job: null,
  attempts: 1,
  state: reply ? 'done' : 'running',
  reason: null,
  prompt,
  reply,
  sessionId: null,
  started: null,
  ended: null,
  ms: null,
});

async function setup(turns: TaskTurnView[]) {
  const root = await temp();
  await mkdir(path.join(root, '.jaggers', 'handover'), { recursive: true });
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const task = async (id: string) => ({ id, turns }) as unknown as TaskView;
  return { root, p: { task, dirs } };
}

describe('readTurnFile', () => {
  it("reads a turn's prompt and reply", async () => {
    const { root, p } = await setup([turn(1, '.jaggers/handover/turn_1.md', '.jaggers/handover/turn_1_reply.md')]);
    await writeFile(path.join(root, '.jaggers/handover/turn_1.md'), 'the prompt');
    await writeFile(path.join(root, '.jaggers/handover/turn_1_reply.md'), 'the reply');
    expect(await readTurnFile(p, 't-1', 1, 'prompt')).toEqual({
      task: 't-1',
      turn: 1,
      file: '.jaggers/handover/turn_1.md',
      text: 'the prompt',
      bytes: 10,
      truncated: false,
    });
    expect((await readTurnFile(p, 't-1', 1, 'reply')).text).toBe('the reply');
  });

  it('a file over the bound is cut, and says so', async () => {
    const { root, p } = await setup([turn(1, '.jaggers/handover/big.md', null)]);
    await writeFile(path.join(root, '.jaggers/handover/big.md'), 'x'.repeat(TURN_FILE_MAX + 10));
    const v = await readTurnFile(p, 't-1', 1, 'prompt');
    expect(v).toMatchObject({ bytes: TURN_FILE_MAX + 10, truncated: true });
    expect(v.text.length).toBe(TURN_FILE_MAX);
  });

  it('no such turn, no file yet, a file outside .jaggers/: errors naming them', async () => {
    const { p } = await setup([turn(1, '.jaggers/handover/turn_1.md', null), turn(2, 'jaggers.json', null)]);
    await expect(readTurnFile(p, 't-1', 3, 'prompt')).rejects.toMatchObject({ code: 'E_NOT_FOUND', message: 'task t-1 has no turn 3: its turns are 1 to 2' });
    await expect(readTurnFile(p, 't-1', 1, 'reply')).rejects.toMatchObject({
      code: 'E_NOT_FOUND',
      message: 'task t-1: turn 1 has no reply file (yet): the turn is running',
    });
    await expect(readTurnFile(p, 't-1', 2, 'prompt')).rejects.toMatchObject({ code: 'E_FILE_REFUSED' });
  });
});
