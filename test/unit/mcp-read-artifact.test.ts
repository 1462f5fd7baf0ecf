// read_artifact, the MCP tool that reads a file for an agent: a handover file, a reply, a message, paged;
// never the token, a hard link, a FIFO (answered at once), a path out of .jaggers/, even with a folder
// swapped for a link out while it reads.
import { link, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool } from '../../src/mcp/server.js';
import { ARTIFACT_CHUNK, type ToolDeps } from '../../src/mcp/tools.js';
import { confineFixture, INSIDE, mkfifo, swapInbox, tally, type ConfineFixture } from '../helpers/confine-fixture.js';
import { tempDirs } from '../helpers/temp-dir.js';

const temp = tempDirs('jg-mcp-read-');

function deps(f: ConfineFixture): ToolDeps {
  return {
    call: () => Promise.reject(new Error('read_artifact asks the API nothing')),
    caller: { terminalId: null, agent: null, task: null },
    projectRoot: f.projectRoot,
    jaggersDir: f.jaggersDir,
  };
}

async function read(d: ToolDeps, args: Record<string, unknown>) {
  const r = await callTool(d, 'read_artifact', args);
  const json = JSON.parse((r.content[0] as { text: string }).text) as Record<string, unknown> & { error?: { code: string; message: string } };
  return { isError: r.isError === true, json };
}

describe('read_artifact', () => {
  it('reads a message in chunks that end on whole characters; `next` reads on', async () => {
    const f = await confineFixture(await temp());
    const d = deps(f);
    expect(await read(d, { path: '.jaggers/inbox/m.md' })).toEqual({
      isError: false,
      json: { path: '.jaggers/inbox/m.md', size: INSIDE.length, offset: 0, next: null, text: INSIDE },
    });
    const text = `${'a'.repeat(ARTIFACT_CHUNK - 1)}é and on`;
    await writeFile(path.join(f.jaggersDir, 'handover', 'turn_2_abc.md'), text);
    const first = await read(d, { path: path.join(f.jaggersDir, 'handover', 'turn_2_abc.md') });
    expect([first.json.next, (first.json.text as string).length]).toEqual([ARTIFACT_CHUNK - 1, ARTIFACT_CHUNK - 1]);
    const second = await read(d, { path: '.jaggers/handover/turn_2_abc.md', offset: first.json.next });
    expect([second.json.text, second.json.next]).toEqual(['é and on', null]);
  });

  it('answers a FIFO at once: refused, not read (which would block until something writes to it)', async () => {
    const f = await confineFixture(await temp());
    mkfifo(path.join(f.jaggersDir, 'handover', 'turn_8_fff.md'));
    const r = await read(deps(f), { path: '.jaggers/handover/turn_8_fff.md' });
    expect(r).toEqual({
      isError: true,
      json: { error: { code: 'E_FILE_REFUSED', message: 'read_artifact: ".jaggers/handover/turn_8_fff.md" is a FIFO, not a regular file' } },
    });
  }, 10_000);

  it('refuses the token, a hard link to it, a folder and a path out of .jaggers/, naming the path', async () => {
    const f = await confineFixture(await temp());
    const d = deps(f);
    await link(path.join(f.jaggersDir, 'token'), path.join(f.jaggersDir, 'handover', 'turn_9_aaa.md'));
    const cases: [string, RegExp][] = [
      ['.jaggers/token', /^read_artifact: "\.jaggers\/token" is private to the supervisor/],
      ['.jaggers/handover/turn_9_aaa.md', /^read_artifact: "\.jaggers\/handover\/turn_9_aaa\.md" has 2 hard links/],
      ['../outside/secret.txt', /^read_artifact: "\.\.\/outside\/secret\.txt" is outside \.jaggers\//],
      ['.jaggers', /is a folder, not a regular file/],
    ];
    for (const [p, message] of cases) {
      const r = await read(d, { path: p });
      expect(r.isError, p).toBe(true);
      expect(r.json.error, p).toEqual({ code: 'E_FILE_REFUSED', message: expect.stringMatching(message) });
      expect(JSON.stringify(r.json)).not.toContain('tok-');
    }
    expect((await read(d, { path: '.jaggers/handover/nope.md' })).json.error!.code).toBe('E_NOT_FOUND');
  });

  it('3,000 reads while .jaggers/inbox/ is swapped for a link out: not one returns the secret', async () => {
    const f = await confineFixture(await temp());
    const d = deps(f);
    const swapper = await swapInbox(f);
    let counts: Record<string, number>;
    try {
      counts = await tally(3000, 8, async () => {
        const r = await read(d, { path: '.jaggers/inbox/m.md' });
        if (r.isError) throw Object.assign(new Error(r.json.error!.message), { code: r.json.error!.code });
        return r.json.text as string;
      });
    } finally {
      await swapper.stop();
    }
    expect(counts.SECRET ?? 0, JSON.stringify(counts)).toBe(0);
    expect(counts.inside ?? 0, JSON.stringify(counts)).toBeGreaterThan(0);
    expect(counts.E_FILE_REFUSED ?? 0, JSON.stringify(counts)).toBeGreaterThan(0);
  });
});
