// The rough edges a newcomer hit (issue 26, items 12 to 15), each run as a person runs the commands: the
// CLI on a private tmux server with the fake agent (the demo profile's), from the project folder or one
// below it, or from a folder that is no project at all.
import { execa } from 'execa';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/commands/doctor.js';
import { socketNameFor } from '../../src/tmux/server.js';
import { writeFakeProfile, writeProfile, writeProject } from '../helpers/profiles.js';
import { Rig, type RunResult } from '../helpers/rig.js';

/** stderr is one line, starting `jaggers: `. */
function oneLine(r: RunResult): string {
  expect(r.stderr.split('\n').filter(Boolean), r.stderr).toHaveLength(1);
  expect(r.stderr).toMatch(/^jaggers: /);
  return r.stderr.trim();
}

describe('newcomer paths on real tmux', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '100']);
  });
  afterEach(async () => rig.cleanup());

  describe('12: options, arguments and files given wrongly', () => {
    it('--verbose works after the command as before it', async () => {
      await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
      expect((await rig.run(['up'])).code).toBe(0);
      const h = await rig.run(['handoff', 'alpha', '-m', 'be verbose', '--task', 'loud', '--verbose']);
      expect(h.code, h.stderr).toBe(0);
      expect(h.stderr).toMatch(/ info {2}prompt delivered task=loud .*agent=alpha/);
      const st = await rig.run(['status', '-v', '--json']);
      expect(st.code, st.stderr).toBe(0);
      expect(JSON.parse(st.stdout)[0]).toMatchObject({ agent: 'alpha' });
      // A global option after the command counts as before it: --project names the project.
      const elsewhere = path.join(rig.root, '..', 'home');
      const ls = await rig.run(['ls', '--json', '--project', rig.root], { cwd: elsewhere });
      expect(ls.code, ls.stderr).toBe(0);
      expect(JSON.parse(ls.stdout)[0]).toMatchObject({ agent: 'alpha' });
    });

    it('init refuses a name given twice (or a profile that does not exist), naming it, and writes nothing', async () => {
      const twice = await rig.run(['init', '--agents', 'demo,demo']);
      expect(twice.code).toBe(1);
      expect(oneLine(twice)).toMatch(/^jaggers: init --agents: "demo" is named twice in "demo,demo"; each agent needs a name of its own/);
      const unknown = await rig.run(['init', '--agents', 'demo,nosuchcli']);
      expect(unknown.code).toBe(1);
      expect(oneLine(unknown)).toMatch(/^jaggers: init --agents: unknown profile "nosuchcli": known profiles are .*demo/);
      expect(existsSync(path.join(rig.root, 'jaggers.json'))).toBe(false);
      const ok = await rig.run(['init', '--agents', 'demo,fake']);
      expect(ok.code, ok.stderr).toBe(0);
      const up = await rig.run(['up']);
      expect(up.code, up.stdout + up.stderr).toBe(0);
    });

    it('send with empty text is a one-line usage error, not the API talking', async () => {
      await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
      expect((await rig.run(['up'])).code).toBe(0);
      const r = await rig.run(['send', 'alpha', '']);
      expect(r.code).toBe(1);
      expect(oneLine(r)).toBe('jaggers: send: the text to type is empty (""); e.g. `jaggers send <agent> "explain src/cli.ts"`');
    });

    it('a name every object has (toString, constructor, __proto__) is one usage line naming the command, and makes nothing', async () => {
      await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
      expect((await rig.run(['up'])).code).toBe(0);
      for (const [args, shown] of [
        [['assign', 'toString', '-m', 'hi'], 'assign: "toString" is not a valid agent or profile name'],
        [['message', 'constructor', '-m', 'hi'], 'message: "constructor" is not a valid agent name'],
        [['send', '__proto__', 'hi'], 'send: "__proto__" is not a valid agent name'],
        [['handoff', 'hasOwnProperty', '-m', 'hi'], 'handoff: "hasOwnProperty" is not a valid agent name'],
      ] as const) {
        const r = await rig.run([...args]);
        expect(r.code, r.stderr).toBe(1);
        expect(oneLine(r)).toMatch(new RegExp(`^jaggers: ${shown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: must be `));
      }
      const jobs = JSON.parse((await rig.run(['jobs', '--json'])).stdout) as unknown[];
      expect(jobs).toEqual([]);
      expect(readdirSync(path.join(rig.root, '.jaggers')).filter((f) => f === 'inbox' || f === 'jobs')).toEqual([]);
    });

    it('a missing required option or argument, or an unknown option, is one line naming the help to read', async () => {
      const flow = await rig.run(['flow', 'add', 'nightly']);
      expect(flow.code).toBe(1);
      expect(oneLine(flow)).toBe("jaggers: required option '--schedule <cron>' not specified (see `jaggers flow add --help`)");
      const assign = await rig.run(['assign']);
      expect(oneLine(assign)).toBe("jaggers: missing required argument 'agent-or-profile' (see `jaggers assign --help`)");
      const unknown = await rig.run(['status', '--jsn']);
      expect(oneLine(unknown)).toBe("jaggers: unknown option '--jsn'; did you mean --json? (see `jaggers status --help`)");
      const command = await rig.run(['stauts']);
      expect(oneLine(command)).toBe("jaggers: unknown command 'stauts'; did you mean status? (see `jaggers --help`)");
      expect(flow.stdout + assign.stdout + unknown.stdout + command.stdout).toBe('');
    });

    it('a --file that does not exist is named, with what is wrong in words', async () => {
      await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
      const r = await rig.run(['flow', 'add', 'nightly', '--schedule', '0 3 * * *', '--agent', 'alpha', '--file', 'missing.md']);
      expect(r.code).toBe(1);
      expect(oneLine(r)).toBe(`jaggers: flow add --file: "missing.md" (${path.join(rig.root, 'missing.md')}) does not exist`);
      await mkdir(path.join(rig.root, 'notes'));
      const dir = await rig.run(['assign', 'alpha', '-f', 'notes']);
      expect(oneLine(dir)).toBe(`jaggers: assign --file: "notes" (${path.join(rig.root, 'notes')}) is a folder, not a file`);
    });

    it("run --help's examples name workflows that exist", async () => {
      const help = await rig.run(['run', '--help']);
      const listed = (await rig.run(['workflows', '--json'])).stdout;
      const names = new Set((JSON.parse(listed) as { name: string }[]).map((w) => w.name));
      const used = [...help.stdout.matchAll(/^ {2}\$ jaggers run (\S+)/gm)].map((m) => m[1]!);
      expect(used.length).toBeGreaterThan(0);
      for (const w of used) expect(names, `run --help names ${w}`).toContain(w);
    });
  });

  describe('13: where the project is', () => {
    // The socket and session come from the project's folder here, as for a person (no JAGGERS_SOCKET).
    let env: NodeJS.ProcessEnv;
    beforeEach(() => {
      env = { ...rig.env };
      delete env.JAGGERS_SOCKET;
      delete env.JAGGERS_SESSION_NAME;
    });
    afterEach(async () => {
      await execa('tmux', ['-L', socketNameFor(rig.root), 'kill-server'], { env: rig.env, reject: false });
    });

    it('read commands in a folder that is no project say so, exit 1 and create nothing', async () => {
      // Beside the project (which holds .jaggers/profiles/), in a folder no project is at or above.
      const elsewhere = path.join(rig.root, '..', 'elsewhere');
      const src = path.join(elsewhere, 'src');
      await mkdir(src, { recursive: true });
      for (const args of [['ls'], ['status'], ['jobs'], ['tasks'], ['inbox', 'alpha'], ['sessions'], ['show', 't-1']]) {
        const r = await rig.run(args, { cwd: src, env });
        expect(r.code, args.join(' ')).toBe(1);
        expect(oneLine(r)).toBe(
          `jaggers: no jaggers project in ${src} or any folder above it (none has a jaggers.json or a .jaggers/): ` +
            'run `jaggers demo` to try the demo agents here, or `jaggers init` and then `jaggers up`; or name one with --project DIR',
        );
      }
      expect(await readdir(elsewhere)).toEqual(['src']);
      expect(await readdir(src)).toEqual([]);
    });

    it('a project made by demo (no jaggers.json) is found from a folder below it', async () => {
      const demo = await rig.run(['demo', '--no-run'], { env });
      expect(demo.code, demo.stderr).toBe(0);
      expect(existsSync(path.join(rig.root, 'jaggers.json'))).toBe(false);
      const deep = path.join(rig.root, 'src', 'lib');
      await mkdir(deep, { recursive: true });
      const st = await rig.run(['status', '--json'], { cwd: deep, env });
      expect(st.code, st.stderr).toBe(0);
      expect((JSON.parse(st.stdout) as { agent: string }[]).map((a) => a.agent).sort()).toEqual(['coder', 'planner', 'reviewer']);
      expect(existsSync(path.join(deep, '.jaggers'))).toBe(false);
      expect(existsSync(path.join(rig.root, 'src', '.jaggers'))).toBe(false);
    });

    it('an empty .jaggers/ (left by older versions) is no project: the search goes on upward', async () => {
      await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
      expect((await rig.run(['up'], { env })).code).toBe(0);
      const sub = path.join(rig.root, 'src');
      await mkdir(path.join(sub, '.jaggers'), { recursive: true });
      const st = await rig.run(['status', '--json'], { cwd: sub, env });
      expect(st.code, st.stderr).toBe(0);
      expect(JSON.parse(st.stdout)[0]).toMatchObject({ agent: 'alpha' });
    });
  });

  describe('14: up, down, doctor and demo say what is so', () => {
    it('down stops the supervisor first (SIGTERM: its connections leave tmux without subscriptions), then removes the tmux socket file', async () => {
      await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
      expect((await rig.run(['up'])).code).toBe(0);
      const socket = path.join(rig.tmuxTmpDir, `tmux-${process.getuid!()}`, rig.socket);
      expect(existsSync(socket)).toBe(true);
      const down = await rig.run(['down']);
      expect(down.stdout).toBe(`stopped tmux -L ${rig.socket}\n`);
      expect(existsSync(socket)).toBe(false);
      // Stopped by its signal, before its server went (else: SIGHUP, or its tmux connection closed).
      const log = await readFile(path.join(rig.root, '.jaggers', 'logs', 'current.log'), 'utf8');
      const stops = log
        .split('\n')
        .filter((l) => l.includes('"supervisor stopping"'))
        .map((l) => (JSON.parse(l) as { why: string }).why);
      expect(stops).toEqual(['SIGTERM']);
      expect((await rig.run(['down'])).stdout).toBe(`nothing running on tmux -L ${rig.socket}\n`);
    });

    it('up with no CLI installed names the missing CLIs and how to get them, and claims no agent runs', async () => {
      const rule = { detect: { rules: [{ name: 'prompt', status: 'idle', pattern: '>' }] } };
      await writeProfile(rig.root, 'ghostcli', { command: 'no-such-cli-xyz', ...rule });
      await writeProfile(rig.root, 'shadecli', { command: 'no-such-cli-abc', ...rule });
      await writeProject(rig.root, {
        agents: [
          { name: 'ghost', profile: 'ghostcli' },
          { name: 'shade', profile: 'shadecli' },
        ],
      });
      const up = await rig.run(['up']);
      expect(up.code).toBe(1);
      expect(up.stdout).toMatch(/ghost\s+not started: command "no-such-cli-xyz" not found on its PATH \(.*\)\n/);
      expect(up.stdout).not.toMatch(/watch them/);
      expect(up.stdout).toMatch(
        /\nno agent is running: no-such-cli-xyz, no-such-cli-abc are not installed; install them, or try the built-in demo agents, which need no CLI: `jaggers up --agents demo` or `jaggers demo`\n$/,
      );
      // A profile that says how to install its CLI: up says it too.
      await writeProfile(rig.root, 'ghostcli', { command: 'no-such-cli-xyz', install: 'npm install -g ghost-cli', ...rule });
      await writeProject(rig.root, { agents: [{ name: 'ghost', profile: 'ghostcli' }] });
      const one = await rig.run(['up']);
      expect(one.stdout).toMatch(/ghost\s+not started: command "no-such-cli-xyz" not found on its PATH \(.*\); install it: npm install -g ghost-cli\n/);
      expect(one.stdout).toMatch(/\nno agent is running: no-such-cli-xyz is not installed; install it as shown above, or try the built-in demo agents/);
      // With one agent that runs, the usual hint.
      await writeProject(rig.root, {
        agents: [
          { name: 'alpha', profile: 'fake' },
          { name: 'ghost', profile: 'ghostcli' },
        ],
      });
      expect((await rig.run(['up'])).stdout).toMatch(/\nwatch them: jaggers attach\n$/);
    });

    it("doctor marks a profile whose command is not found `miss` (with how to install it), not `ok`; the team's agent FAIL", async () => {
      const rule = { detect: { rules: [{ name: 'prompt', status: 'idle', pattern: '>' }] } };
      await writeProfile(rig.root, 'ghostcli', { command: 'no-such-cli-xyz', ...rule });
      const alone = await rig.run(['doctor']);
      expect(alone.stdout).toMatch(/^miss profile ghostcli: .*ghostcli\.json \(command no-such-cli-xyz: not found on PATH\)$/m);
      expect(alone.stdout).not.toMatch(/^ok {3}profile ghostcli/m);
      // A CLI nobody in the team uses is no failure.
      expect(alone.code, alone.stdout).toBe(0);
      await writeProfile(rig.root, 'ghostcli', { command: 'no-such-cli-xyz', install: 'npm install -g ghost-cli', ...rule });
      expect((await rig.run(['doctor'])).stdout).toMatch(
        /^miss profile ghostcli: .*ghostcli\.json \(command no-such-cli-xyz: not found on PATH; install it: npm install -g ghost-cli\)$/m,
      );
      await writeProject(rig.root, { agents: [{ name: 'ghost', profile: 'ghostcli' }] });
      const team = await rig.run(['doctor']);
      expect(team.code).toBe(1);
      expect(team.stdout).toMatch(
        /^FAIL agent ghost: command "no-such-cli-xyz" not found on its PATH: install it \(npm install -g ghost-cli\), or fix the profile's command$/m,
      );
      const report = JSON.parse((await rig.run(['doctor', '--json'])).stdout) as DoctorReport;
      expect(report.profiles.find((p) => p.name === 'ghostcli')).toMatchObject({ found: null, install: 'npm install -g ghost-cli' });
    });

    it('demo --no-run on a running session says it is already running', async () => {
      const first = await rig.run(['demo', '--no-run']);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^session jgtest on tmux -L \S+: planner \(idle\), coder \(idle\), reviewer \(idle\)\n$/);
      const again = await rig.run(['demo', '--no-run']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe(`session jgtest on tmux -L ${rig.socket} is already running: planner, coder, reviewer\n`);
    });
  });

  describe('15: one id format, one meaning of --task', () => {
    it('a job has the same id format from assign, handoff and a flow run', async () => {
      await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
      expect((await rig.run(['up'])).code).toBe(0);
      const a = await rig.run(['assign', 'alpha', '-m', 'a job']);
      expect(a.stdout).toMatch(/^j-[0-9a-f]{12}\n$/);
      const h = JSON.parse((await rig.run(['handoff', 'alpha', '-m', 'a handoff', '--json'])).stdout) as { job: string };
      expect(h.job).toMatch(/^j-[0-9a-f]{12}$/);
      expect((await rig.run(['flow', 'add', 'nightly', '--schedule', '0 3 * * *', '--agent', 'alpha', '--prompt', 'a flow run'])).code).toBe(0);
      const f = await rig.run(['flow', 'run', 'nightly']);
      expect(f.code, f.stderr).toBe(0);
      expect(f.stdout).toMatch(/^j-[0-9a-f]{12}\n$/);
    });

    it('run takes its text with -m (or -f); --task names a task id; the old `run --task TEXT` still works, with a warning', async () => {
      await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
      const m = await rig.run(['run', 'handoff', '-m', 'count the words', '--agents', 'alpha', '--dry-run']);
      expect(m.code, m.stderr).toBe(0);
      expect(m.stdout).toContain('count the words');
      expect(m.stderr).toBe('');
      const old = await rig.run(['run', 'handoff', '--task', 'count the words', '--agents', 'alpha', '--dry-run']);
      expect(old.code, old.stderr).toBe(0);
      expect(old.stdout).toBe(m.stdout);
      expect(old.stderr).toBe('jaggers: warning: `run --task TEXT` is now `run -m TEXT` (`--task` names a task id in up, handoff and sessions)\n');
      const help = (await rig.run(['run', '--help'])).stdout;
      expect(help).toMatch(/-m, --message <text>/);
      expect(help).not.toMatch(/--task/);
      for (const cmd of ['up', 'handoff', 'sessions', 'exec']) expect((await rig.run([cmd, '--help'])).stdout, cmd).toMatch(/--task <id>/);
      const neither = await rig.run(['run', 'handoff', '--agents', 'alpha']);
      expect(oneLine(neither)).toBe('jaggers: run: give exactly one of --message TEXT or --file PATH');
    });
  });
});
