// What a newcomer hits, each on real tmux with fake agents: a CLI that is not installed, an agent that
// dies at start, an invalid jaggers.json, `up` after `down` without one, the JSON of read commands,
// a registry rebuilt after a crash, the temp files and damaged journal lines a crash or a disk leaves,
// the supervisor's log shown live, and its reader going away.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HealthView, ScreenView, TerminalDetail } from '../../src/api/types.js';
import type { DoctorReport } from '../../src/commands/doctor.js';
import { cliEntry, packageVersion } from '../../src/package-root.js';
import { api, waitPidGone } from '../helpers/api.js';
import { writeFakeProfile, writeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

describe('a newcomer on real tmux', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '100']);
  });
  afterEach(async () => rig.cleanup());

  it('a CLI that is not installed: up starts the others and names it; doctor fails on it', async () => {
    await writeProfile(rig.root, 'ghostcli', { command: 'no-such-cli-xyz', detect: { rules: [{ name: 'prompt', status: 'idle', pattern: '>' }] } });
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'ghost', profile: 'ghostcli' },
      ],
    });
    const up = await rig.run(['up']);
    expect(up.code).toBe(1);
    expect(up.stdout).toMatch(/alpha\s+jg-\w+\s+@\d+\s+started\s+idle/);
    expect(up.stdout).toMatch(/ghost\s+not started: command "no-such-cli-xyz" not found on its PATH \(.*\)/);
    const doctor = await rig.run(['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/^FAIL agent ghost: command "no-such-cli-xyz" not found on its PATH/m);
    expect(doctor.stdout).toMatch(/^ok {3}agent alpha: jaggers-fake-agent is \/.*bin\/jaggers-fake-agent/m);
    const report = JSON.parse((await rig.run(['doctor', '--json'])).stdout) as DoctorReport;
    expect(report.agents.find((a) => a.agent === 'ghost')).toMatchObject({ command: 'no-such-cli-xyz', found: null });
    expect(report.supervisor?.pid).toBeGreaterThan(1);
  });

  it('an agent whose pane dies at start: up reports it with the last lines the pane showed', async () => {
    await writeProfile(rig.root, 'broken', {
      command: 'sh',
      // A moment between its words and its exit, as a real CLI's teardown takes: on a loaded machine
      // tmux 3.3a lost the output and the exit status of a program that exited at once (5 of 15 runs).
      args: ['-c', 'echo "broken-cli: cannot find its config"; sleep 0.3; exit 3'],
      detect: { rules: [{ name: 'prompt', status: 'idle', pattern: '^> ' }] },
    });
    await writeProfile(rig.root, 'mute', {
      command: 'sh',
      args: ['-c', 'sleep 0.3; exit 4'],
      detect: { rules: [{ name: 'prompt', status: 'idle', pattern: '^> ' }] },
    });
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'crashy', profile: 'broken' },
        { name: 'silent', profile: 'mute' },
      ],
    });
    const up = await rig.run(['up']);
    expect(up.code).toBe(1);
    expect(up.stdout).toMatch(
      /crashy\s+jg-\w+\s+@\d+\s+started\s+exited\n\s+its pane died at start \(exit status 3\); last lines:\n\s+\| broken-cli: cannot find its config\n/,
    );
    // Beside two busy loops tmux 3.3a sometimes never reaps such a pane's process (4 of 8 runs): the
    // status is then read from the zombie itself.
    expect(up.stdout).toMatch(/silent\s+jg-\w+\s+@\d+\s+started\s+exited\n\s+its pane died at start \(exit status 4\), printing nothing\n/);
    const why = await rig.run(['why', 'crashy']);
    expect(why.stdout).toMatch(/crashy is exited/);
    expect(why.stdout).toMatch(/waiting for: `jaggers up` to restart it/);
  });

  it('doctor: each installed CLI version beside the newest one its profile was checked against', async () => {
    // A CLI newer than its profile's checks, one that prints no version, and the demo agent (checked).
    const bin = path.join(rig.root, 'bin');
    const { mkdir, chmod } = await import('node:fs/promises');
    await mkdir(bin);
    await writeFile(path.join(bin, 'newcli'), '#!/bin/sh\necho "newcli 2.4.0 (build 7)"\n');
    await writeFile(path.join(bin, 'mutecli'), '#!/bin/sh\necho "no version here"\n');
    await chmod(path.join(bin, 'newcli'), 0o755);
    await chmod(path.join(bin, 'mutecli'), 0o755);
    await writeProfile(rig.root, 'newcli', { command: path.join(bin, 'newcli'), versions: ['1.0.0', '2.3.1'] });
    await writeProfile(rig.root, 'mutecli', { command: path.join(bin, 'mutecli'), versions: ['1.0.0'] });
    const doctor = await rig.run(['doctor']);
    expect(doctor.stdout).toMatch(
      /^warn profile newcli: .*, version 2\.4\.0, newer than the newest checked \(2\.3\.1\): `npm run canary` shows what changed; reads screen \(0 rules\)$/m,
    );
    expect(doctor.stdout).toMatch(/^warn profile mutecli: .*, version unknown \(`.*mutecli --version` printed "no version here"\); reads screen \(0 rules\)$/m);
    expect(doctor.stdout).toMatch(
      /^ok {3}profile demo: .*jaggers-fake-agent\), version 1\.0\.0, the newest one checked; reads hooks \(fake-agent\), then state file \(fake-agent\), then screen \(6 rules\)$/m,
    );
    const report = JSON.parse((await rig.run(['doctor', '--json'])).stdout) as DoctorReport;
    expect(report.profiles.find((p) => p.name === 'newcli')?.version).toMatchObject({ installed: '2.4.0', checked: ['1.0.0', '2.3.1'], fit: 'newer' });
    // A version the checks do not cover is worth a look, not a failure.
    expect(report.ok).toBe(true);
  });

  it('an invalid jaggers.json: ls and status still answer; doctor fails on it with the line and column', async () => {
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    expect((await rig.run(['up'])).code).toBe(0);
    const file = await writeProject(rig.root, '{\n  "agents": [\n    { "name": "alpha", "profile": "fake" },\n  ]\n}\n');
    expect((await rig.run(['ls'])).code).toBe(0);
    const st = await rig.run(['status', '--json']);
    expect(st.code, st.stderr).toBe(0);
    expect(JSON.parse(st.stdout)[0]).toMatchObject({ agent: 'alpha', state: 'idle' });
    const doctor = await rig.run(['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`FAIL project file: ${file}: not valid JSON: line 4, column 3: value expected`);
    const up = await rig.run(['up']);
    expect(up.stderr).toContain(`${file}: not valid JSON: line 4, column 3`);
  });

  it('after down, status leads to `jaggers up`, which reopens the team without a jaggers.json', async () => {
    expect((await rig.run(['up', '--agents', 'fake'])).code).toBe(0);
    expect((await rig.run(['handoff', 'fake', '-m', 'remember me'])).code).toBe(0);
    const pins = JSON.parse((await rig.run(['sessions', '--json'])).stdout) as { agent: string; sessionId: string }[];
    expect((await rig.run(['down'])).code).toBe(0);
    const st = await rig.run(['status']);
    expect(st.code).toBe(1);
    expect(st.stderr).toMatch(/no jaggers session "jgtest" on tmux -L \S+: run `jaggers up` to reopen fake in their pinned conversations/);
    const up = await rig.run(['up']);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toMatch(new RegExp(`fake\\s+jg-\\w+\\s+@\\d+\\s+started\\s+idle\\s+session ${pins[0]!.sessionId}`));
    const h = await rig.run(['handoff', 'fake', '-m', 'back again']);
    expect(h.stdout).toMatch(/turn 2 of session/);
  });

  it('why and capture print JSON; capture takes scrollback', async () => {
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    expect((await rig.run(['up'])).code).toBe(0);
    const why = JSON.parse((await rig.run(['why', 'alpha', '--json'])).stdout) as TerminalDetail;
    expect(why).toMatchObject({ agent: 'alpha', state: 'idle', now: { status: 'idle' } });
    expect(why.waitingFor).toMatch(/a prompt/);
    const cap = JSON.parse((await rig.run(['capture', 'alpha', '--json', '--history', '50'])).stdout) as ScreenView;
    expect(cap).toMatchObject({ agent: 'alpha', ansi: false });
    expect(cap.screen).toMatch(/Type your message/);
  });

  it('a registry rebuilt after a crash is told once on stderr by the command that brought the supervisor back', async () => {
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    expect((await rig.run(['up'])).code).toBe(0);
    const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
    process.kill(pid, 'SIGKILL');
    await waitPidGone(pid);
    const snapshot = path.join(rig.root, '.jaggers', 'sessions.json');
    await writeFile(snapshot, '{"version": 1, "terminals": {"cut short by a cra');
    const st = await rig.run(['status']);
    expect(st.code, st.stderr).toBe(0);
    const warnings = st.stderr.split('\n').filter((l) => l.startsWith('jaggers: warning:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/sessions\.json.*not valid JSON.*moved it to .*sessions\.json\.corrupt-.*rebuilt it from .*events\.jsonl/);
    expect((await rig.run(['status'])).stderr).toBe('');
    expect(JSON.parse(await readFile(snapshot, 'utf8')).terminals).toBeTruthy();
  });

  it('what a kill -9 and a damaged disk leave: temp files of dead writers swept at the next start; a damaged middle line of the journal told, the snapshot kept', async () => {
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    expect((await rig.run(['up'])).code).toBe(0);
    expect((await rig.run(['message', 'alpha', '-m', 'one'])).code).toBe(0);
    expect((await rig.run(['handoff', 'alpha', '-m', 'two'])).code).toBe(0);
    const dir = path.join(rig.root, '.jaggers');
    // The registry's snapshot is written a second after its last change (the journal has everything
    // before that): the damage below must be well before where the snapshot ends, so wait for it.
    const deadline = Date.now() + 20_000;
    while (!existsSync(path.join(dir, 'sessions.json')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await rig.run(['down'])).code).toBe(0);
    // A writer killed between its write and its rename leaves `<file>.tmp-<pid>-<hex>` beside its file.
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const stale = [`inbox/m-0a1b2c3d.md.tmp-${dead}-0a1b2c3d`, `jobs/j-0a1b2c3d.md.tmp-${dead}-4e5f6a7b`, `sessions.json.tmp-${dead}-8c9d0e1f`];
    const live = `jobs/j-1a2b3c4d.md.tmp-${process.pid}-0a1b2c3d`;
    for (const f of [...stale, live]) await writeFile(path.join(dir, f), 'half a fil');
    // Line 2 of the journal damaged in place (the file keeps its length), well before where the snapshot ends.
    const journal = path.join(dir, 'events.jsonl');
    const snapshot = path.join(dir, 'sessions.json');
    expect((JSON.parse(await readFile(snapshot, 'utf8')) as { journal: { lines: number } }).journal.lines).toBeGreaterThan(3);
    const rows = (await readFile(journal, 'utf8')).split('\n');
    rows[1] = rows[1]!.slice(0, 10) + '\0'.repeat(rows[1]!.length - 10);
    await writeFile(journal, rows.join('\n'));

    const up = await rig.run(['up']);
    expect(up.code, up.stderr).toBe(0);
    const warnings = up.stderr.split('\n').filter((l) => l.startsWith('jaggers: warning:'));
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^jaggers: warning: ${journal} line 2: not valid JSON .*; the journal is damaged before the point ${snapshot} was built from .*: kept ${snapshot}, `,
        ),
      ),
    ]);
    expect(await readdir(path.join(dir, 'inbox'))).not.toContain(path.basename(stale[0]!));
    expect((await readdir(path.join(dir, 'jobs'))).filter((n) => n.includes('.tmp-'))).toEqual([path.basename(live)]);
    expect((await readdir(dir)).filter((n) => n.includes('.tmp-'))).toEqual([]);
    expect((await rig.run(['logs'])).stdout).toMatch(/removed 3 temp file\(s\) left by writers killed mid-write/);
    // The registry is whole: the agent is back in its conversation, and work goes on.
    expect((await rig.run(['handoff', 'alpha', '-m', 'three'])).stdout).toMatch(/turn 3 of session/);
  });

  it('--verbose shows the supervisor log live; jaggers logs prints it', async () => {
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    expect((await rig.run(['up'])).code).toBe(0);
    const h = await rig.run(['--verbose', 'handoff', 'alpha', '-m', 'be verbose', '--task', 'loud']);
    expect(h.code, h.stderr).toBe(0);
    expect(h.stderr).toMatch(/^\d\d:\d\d:\d\d\.\d{3} info {2}prompt delivered task=loud terminal=jg-\w+ agent=alpha turn=1 session=[0-9a-f-]{36} submits=1/m);
    expect(h.stderr).toMatch(/turn finished task=loud .* by=hook from=hook/);
    const logs = await rig.run(['logs', '--json']);
    const lines = logs.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; level: number; task?: string; time: string });
    expect(lines.find((l) => l.msg === 'turn finished')).toMatchObject({ level: 30, task: 'loud', time: expect.stringMatching(/^\d{4}-/) });
    expect(lines.some((l) => l.msg === 'supervisor serving')).toBe(true);
  });

  it('`jaggers logs | head -1`: the reader going away ends the command quietly, status 0; --version prints the version', async () => {
    // A log far longer than a pipe holds (64 KiB), so the CLI still writes when its reader has gone.
    const logs = path.join(rig.root, '.jaggers', 'logs');
    await mkdir(logs, { recursive: true });
    const line = (i: number) => JSON.stringify({ level: 30, time: '2026-01-01T00:00:00.000Z', msg: `line ${i}`, pad: 'x'.repeat(80) });
    await writeFile(path.join(logs, 'current.log'), Array.from({ length: 20_000 }, (_, i) => line(i)).join('\n') + '\n');
    // As the shell runs it: the built CLI, its stdout a pipe that `head -1` closes after one line.
    const child = spawn(process.execPath, [cliEntry, 'logs'], { cwd: rig.root, env: rig.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const first = await new Promise<string>((resolve) => {
      let got = '';
      child.stdout.on('data', (b: Buffer) => {
        got += b.toString();
        if (got.includes('\n')) {
          child.stdout.destroy();
          resolve(got.split('\n')[0]!);
        }
      });
    });
    expect(first).toMatch(/^00:00:00\.000 info {2}line 0 pad=x+$/);
    expect(await exited).toBe(0);
    expect(stderr).toBe('');

    const v = await rig.run(['--version']);
    expect(v).toEqual({ code: 0, stdout: `${packageVersion()}\n`, stderr: '' });
  });
});
