// Captures the real CLIs' own records of two headless turns, with token counts, into
// test/fixtures/usage/<cli>-<version>-two-turns.jsonl (see the README there). Not part of the normal run:
// skipped unless JAGGERS_CAPTURE_USAGE=1:
//
//   JAGGERS_CAPTURE_USAGE=1 npx vitest run test/e2e/capture-usage.test.ts
//
// The stub answers each turn with its own token counts (cache reads and writes too, where the API has
// them), so the usage readers are tested on figures that differ per turn. The temp folder's path is
// replaced by `<root>`.

import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { opencodeRunJson } from '../../src/clis/opencode/headless.js';
import { cliBinary, CLIS, isCliInstalled, type CliName } from './clis.js';
import { killGroup } from './private-tmux.js';
import { createRig, type CliRig } from './rig.js';
import { codexSessionIds, sessionFile } from './session-files.js';
import type { StubUsage } from './stub-wire.js';

const enabled = process.env.JAGGERS_CAPTURE_USAGE === '1';
const OUT = join(import.meta.dirname, '..', 'fixtures', 'usage');

/** What the stub reports for the n-th turn request (n from 0). */
const USAGE: StubUsage[] = [
  { input: 1234, output: 56, cacheRead: 0, cacheWrite: 2048 },
  { input: 78, output: 910, cacheRead: 3072, cacheWrite: 111 },
  { input: 5, output: 7, cacheRead: 4000, cacheWrite: 0 },
];

const FIRST: Record<Exclude<CliName, 'opencode'>, (id: string, prompt: string) => string[]> = {
  claude: (id, p) => ['--session-id', id, '--dangerously-skip-permissions', '-p', p],
  qwen: (id, p) => ['--session-id', id, '-p', p],
  gemini: (id, p) => ['--session-id', id, '-p', p],
  codex: (_id, p) => ['exec', '--json', '--skip-git-repo-check', p],
  copilot: (id, p) => ['--session-id', id, '-p', p, '-s'],
};
const LATER: Record<Exclude<CliName, 'opencode'>, (id: string, prompt: string) => string[]> = {
  claude: (id, p) => ['--resume', id, '-p', p],
  qwen: (id, p) => ['-r', id, '-p', p],
  gemini: (id, p) => ['-r', id, '-p', p],
  codex: (id, p) => ['exec', '--skip-git-repo-check', 'resume', id, p],
  copilot: (id, p) => [`--resume=${id}`, '-p', p, '-s'],
};

async function headless(r: CliRig, args: string[]): Promise<string> {
  const child = execa(cliBinary(r.cli), args, { cwd: r.cwd, env: r.env, extendEnv: false, stdin: 'ignore', reject: false, detached: true, timeout: 90_000 });
  try {
    const res = await child;
    if (res.exitCode !== 0) throw new Error(`${r.cli} ${args.join(' ')}: exit ${res.exitCode}\n${String(res.stderr)}`);
    return String(res.stdout);
  } finally {
    if (child.pid !== undefined) await killGroup(child.pid, 500);
  }
}

let rig: CliRig | undefined;
afterEach(async () => {
  await rig?.dispose();
  rig = undefined;
});

describe.skipIf(!enabled)('capture usage records', () => {
  for (const cli of Object.keys(FIRST) as (keyof typeof FIRST)[]) {
    it.skipIf(!isCliInstalled(cli))(`${cli}: two headless turns`, { timeout: 240_000 }, async () => {
      const r = (rig = await createRig(cli));
      let n = 0;
      // claude's first answer is a text and a tool call: one API message that claude writes as two
      // entries with the same message and request ids (what ccusage's dedupe is for).
      r.stub.setScript(() => {
        const usage = USAGE[Math.min(n, USAGE.length - 1)];
        return cli === 'claude' && n++ === 0
          ? { kind: 'tool', command: 'echo usage-fixture', text: 'Running it.', usage }
          : (n++, { kind: 'text', text: `stub reply ${n}`, usage });
      });
      if (cli === 'claude') r.env.IS_SANDBOX = '1';
      let id: string = randomUUID();
      await headless(r, FIRST[cli](id, 'Say hello.'));
      if (cli === 'codex') id = codexSessionIds(r.home)[0]!;
      await headless(r, LATER[cli](id, 'Say goodbye.'));
      const file = sessionFile(cli, r.home, r.cwd, id);
      expect(file, `${cli}'s session file`).toBeDefined();
      mkdirSync(OUT, { recursive: true });
      const text = readFileSync(file!, 'utf8').split(r.root).join('<root>');
      writeFileSync(join(OUT, `${cli}-${CLIS[cli].version}-two-turns.jsonl`), text);
    });
  }

  // opencode keeps its sessions in a SQLite database: the file and its write-ahead log are copied as they
  // are once opencode has exited (the log not checkpointed: most of the two turns are in it), and
  // `opencode export` of the session beside them (its paths replaced), to show what the rows hold.
  it.skipIf(!isCliInstalled('opencode'))('opencode: two headless turns', { timeout: 240_000 }, async () => {
    const r = (rig = await createRig('opencode'));
    let n = 0;
    r.stub.setScript(() => {
      const usage = USAGE[Math.min(n, USAGE.length - 1)];
      n++;
      return { kind: 'text', text: `stub reply ${n}`, usage };
    });
    const first = await headless(r, ['run', '--format', 'json', 'Say hello.']);
    const id = opencodeRunJson(first).sessionId;
    expect(id, "opencode's session id").toBeTruthy();
    await headless(r, ['run', '--format', 'json', '--session', id!, 'Say goodbye.']);
    const db = join(r.home, '.local', 'share', 'opencode', 'opencode.db');
    const base = join(OUT, `opencode-${CLIS.opencode.version}-two-turns`);
    mkdirSync(OUT, { recursive: true });
    copyFileSync(db, `${base}.db`);
    if (existsSync(`${db}-wal`)) copyFileSync(`${db}-wal`, `${base}.db-wal`);
    const exported = await headless(r, ['export', id!]);
    writeFileSync(`${base}.export.json`, exported.split(r.root).join('<root>'));
    writeFileSync(`${base}.session`, `${id}\n`);
  });
});
