// claude's native hooks (issue 27) on the real CLI, offline: the kit's `install` (a `--settings` file
// of ours) with a capture script standing in for jaggers' bridge; the events claude fires for a
// session start, a prompt, a reply, an approval, a resume and (2.1.330) a background agent, in order;
// what the kit's `read` makes of each payload; and the time from the stub's last byte to the Stop call.
// Other versions: JAGGERS_CLI_VERSIONS=claude=2.1.197 (install it first, see README.md).
// JAGGERS_CAPTURE_HOOK_FIXTURES=1 rewrites test/fixtures/hooks/claude-<version>-*.json from this run.

import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeHooks } from '../../src/clis/claude/hooks.js';
import type { HookInstall, HookSignal } from '../../src/clis/types.js';
import { startArgs, resumeArgs } from './cli-env.js';
import { cliSuite, CLIS } from './clis.js';
import { waitForScreen, waitUntil } from './drive.js';
import { createRig, type CliRig } from './rig.js';
import type { RecordedRequest, Reply } from './stub-server.js';
import { defaultScript } from './stub-script.js';

const { version } = CLIS.claude;
const capture = process.env.JAGGERS_CAPTURE_HOOK_FIXTURES === '1';
const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'hooks');

/** Stands in for bin/jaggers-hook: one file per call, `<ns>-<pid>.call`, the argv lines, a blank line, stdin. */
const CAPTURE_SCRIPT = `#!/bin/sh
out=$1
t=$(date +%s%N)
{ printf '%s\\n' "$@"; printf '\\n'; cat; } >"$out/.$t-$$.tmp" 2>/dev/null
mv "$out/.$t-$$.tmp" "$out/$t-$$.call"
exit 0
`;

interface Call {
  /** Nanoseconds since the epoch, as the capture script started. */
  ns: bigint;
  argv: string[];
  event: string;
  stdin: string;
  payload: unknown;
}

function readCalls(dir: string): Call[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.call'))
    .sort()
    .map((f) => {
      const raw = readFileSync(join(dir, f), 'utf8');
      const cut = raw.indexOf('\n\n');
      const argv = raw.slice(0, cut).split('\n');
      const stdin = raw.slice(cut + 2);
      let payload: unknown = stdin;
      try {
        payload = JSON.parse(stdin) as unknown;
      } catch {
        // kept as text
      }
      return { ns: BigInt(f.split('-')[0] ?? '0'), argv, event: argv.at(-1) ?? '', stdin, payload };
    });
}

const field = (c: Call | undefined, key: string): unknown => (c?.payload as Record<string, unknown> | undefined)?.[key];
const msSince = (fromMs: number, call: Call): number => Number(call.ns / 1_000_000n) - fromMs;
const lastMessage = (req: RecordedRequest): unknown => {
  const messages = (req.body as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? messages.at(-1) : undefined;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** The kit installed as the launcher would, with the capture script as the bridge. */
function installKit(r: CliRig): { calls: string; terminal: string; inst: HookInstall } {
  const calls = join(r.root, 'calls');
  mkdirSync(calls);
  const script = join(r.root, 'capture.sh');
  writeFileSync(script, CAPTURE_SCRIPT);
  chmodSync(script, 0o755);
  const terminal = 'term-1';
  const dir = join(r.root, 'project', '.jaggers', 'hooks', terminal);
  const inst = claudeHooks.install({
    bridge: ['sh', script, calls, terminal],
    bridgeShell: `sh '${script}' '${calls}' '${terminal}'`,
    dir,
    cwd: r.cwd,
    version,
  });
  for (const f of inst.files) {
    expect(relative(dir, f.path).startsWith('..'), `${f.path} is under ${dir}`).toBe(false);
    mkdirSync(dirname(f.path), { recursive: true });
    writeFileSync(f.path, f.text);
  }
  Object.assign(r.env, inst.env);
  return { calls, terminal, inst };
}

const suite = cliSuite('claude', 'native hooks');

describe.skipIf(suite.skip)(suite.title, () => {
  const fixtures = new Map<string, string>();
  const latencies: { what: string; fromStubMs: number; fromScreenMs: number }[] = [];

  afterAll(() => {
    if (latencies.length > 0) {
      const fmt = (xs: number[]): string => `median ${median(xs)} ms, all ${xs.join(', ')}`;
      console.log(
        `claude ${version}: stub's last byte -> Stop hook: ${fmt(latencies.map((l) => l.fromStubMs))}; ` +
          `reply on screen (20 ms polls) -> Stop hook: ${fmt(latencies.map((l) => l.fromScreenMs))}`,
      );
    }
    if (!capture) return;
    mkdirSync(FIXTURES, { recursive: true });
    for (const [name, text] of fixtures) writeFileSync(join(FIXTURES, `claude-${version}-${name}.json`), text);
  });

  it('fires SessionStart, UserPromptSubmit, Stop and PermissionRequest into the bridge, which read turns into signals', async () => {
    const r: CliRig = await createRig('claude');
    try {
      const { calls, terminal, inst } = installKit(r);

      // The user's own settings keep their hooks: claude runs theirs beside ours, and we write nothing there.
      const userSettings = join(r.home, '.claude', 'settings.json');
      const userMark = join(r.root, 'user-stop-hook-ran');
      const settings = JSON.parse(readFileSync(userSettings, 'utf8')) as Record<string, unknown>;
      settings.hooks = { Stop: [{ hooks: [{ type: 'command', command: `touch '${userMark}'` }] }] };
      writeFileSync(userSettings, `${JSON.stringify(settings, null, 2)}\n`);
      const userSettingsText = readFileSync(userSettings, 'utf8');

      const all = (): Call[] => readCalls(calls);
      const signals = (c: Call): HookSignal[] => claudeHooks.read(c.event, c.payload);
      const waitCall = async (event: string, after: number, what: string, timeoutMs = 30_000): Promise<Call> => {
        let found: Call | undefined;
        await waitUntil(
          () =>
            (found = all()
              .slice(after)
              .find((c) => c.event === event)) !== undefined,
          `${what} (${event} hook)`,
          timeoutMs,
        );
        return found as Call;
      };
      const keep = (name: string, c: Call): void => {
        fixtures.set(name, c.stdin);
      };
      /** claude's first screen; a start that never gets there says which hooks claude had run by then. */
      const started = (): Promise<string> =>
        r.waitFor('idle', { timeoutMs: 45_000 }).catch((err: unknown) => {
          const events = all().map((c) => c.event);
          if (err instanceof Error) err.message += `\nhook calls by then: ${events.join(' ') || 'none'}`;
          throw err;
        });

      const pinned = randomUUID();
      await r.start([...startArgs('claude', pinned), ...inst.args]);
      await started();
      const start = await waitCall('SessionStart', 0, 'the session start');
      keep('SessionStart-startup', start);
      expect(start.argv).toEqual([calls, terminal, 'SessionStart']);
      expect(field(start, 'source')).toBe('startup');
      expect(signals(start)).toEqual([{ kind: 'session', sessionId: pinned, transcriptPath: field(start, 'transcript_path') }]);

      // Three plain turns: UserPromptSubmit then Stop, with the reply exactly as the stub sent it.
      // Streamed in two pieces 400 ms apart, so that the reply shows on screen after the polling starts.
      r.stub.setScript((req): Reply => {
        const reply = defaultScript(req, r.cwd);
        return reply.kind === 'text' ? { ...reply, chunks: 2, delayMs: 400 } : reply;
      });
      for (const n of [1, 2, 3]) {
        const before = all().length;
        const prompt = `Say hello number ${n} for the hooks test`;
        const reply = `stub reply to: ${prompt}`;
        const turnsBefore = r.stub.turns().length;
        await r.type(prompt);
        const onScreen = await waitForScreen(r.tmux(), (s) => s.includes(reply), { intervalMs: 20, what: 'the reply' }).then(() => Date.now());
        const submit = await waitCall('UserPromptSubmit', before, 'the prompt');
        const stop = await waitCall('Stop', before, 'the end of the turn');
        await r.waitFor('idle', { also: (s) => s.includes(reply) });
        if (n === 1) {
          keep('UserPromptSubmit', submit);
          keep('Stop', stop);
        }
        expect(
          all()
            .slice(before)
            .map((c) => c.event),
        ).toEqual(['UserPromptSubmit', 'Stop']);
        expect(field(submit, 'prompt')).toBe(prompt);
        expect(signals(submit)).toEqual([{ kind: 'turn-start', sessionId: pinned }]);
        expect(signals(stop)).toEqual([{ kind: 'turn-end', sessionId: pinned, reply, transcriptPath: field(start, 'transcript_path') }]);
        // Nothing the hook did reached the model: the turn's request carries the prompt as typed.
        const turn = r.stub
          .turns()
          .slice(turnsBefore)
          .find((t) => t.lastUserText === prompt);
        expect(turn, 'the turn request').toBeDefined();
        const ended = (turn as RecordedRequest).endedAt ?? NaN;
        latencies.push({ what: `turn ${n}`, fromStubMs: msSince(ended, stop), fromScreenMs: msSince(onScreen, stop) });
        await r.settle();
      }
      expect(existsSync(userMark), "the user's own Stop hook ran beside ours").toBe(true);
      r.stub.setScript();

      // A tool call that needs approval: PermissionRequest at once; Notification only later, if at all.
      {
        const before = all().length;
        await r.type('Run the command that needs-approval');
        await r.waitFor('waiting', { timeoutMs: 45_000 });
        const asked = await waitCall('PermissionRequest', before, 'the approval menu');
        keep('PermissionRequest-bash', asked);
        expect(signals(asked)).toEqual([{ kind: 'waiting', sessionId: pinned, question: 'Bash: touch approved.txt' }]);
        // Give the later Notification its chance (seen ~6 s after the menu), then answer.
        const note = await waitCall('Notification', before, 'the permission notification', 10_000).catch(() => undefined);
        if (note !== undefined) {
          keep(`Notification-${String(field(note, 'notification_type'))}`, note);
          console.log(`claude ${version}: Notification ${Number((note.ns - asked.ns) / 1_000_000n)} ms after PermissionRequest`);
          expect(signals(note)).toEqual([{ kind: 'waiting', sessionId: pinned, question: field(note, 'message') }]);
        }
        await r.settle(1_500);
        await r.tmux().run(['send-keys', '-t', 'e2e', 'Enter']);
        const stop = await waitCall('Stop', before, 'the end of the tool turn');
        keep('Stop-after-tool', stop);
        await r.waitFor('idle', { also: /stub: the command ran/ });
        expect(existsSync(join(r.cwd, 'approved.txt'))).toBe(true);
        const events = all()
          .slice(before)
          .map((c) => c.event)
          .filter((e) => e !== 'Notification' && e !== 'PreToolUse');
        expect(events).toEqual(['UserPromptSubmit', 'PermissionRequest', 'Stop']);
        // The tool call, for the watchdog's loop check (docs/limits.md): PreToolUse names the tool and its input.
        const pre = all()
          .slice(before)
          .filter((c) => c.event === 'PreToolUse');
        expect(pre).toHaveLength(1);
        expect(signals(pre[0]!)).toEqual([expect.objectContaining({ kind: 'tool', sessionId: pinned, tool: 'Bash' })]);
        expect(JSON.stringify(signals(pre[0]!))).toContain('touch approved.txt');
        expect(signals(stop)).toEqual([
          { kind: 'turn-end', sessionId: pinned, reply: 'stub: the command ran.', transcriptPath: field(start, 'transcript_path') },
        ]);
        await r.settle();
      }

      // A background agent (2.1.330 runs Agent in the background): claude fires a second
      // UserPromptSubmit (`<task-notification>`) and a second Stop; read gives one turn-start and one turn-end.
      {
        const before = all().length;
        const agentTool = (req: RecordedRequest): string => (req.toolNames.includes('Agent') ? 'Agent' : 'Task');
        r.stub.setScript((req): Reply => {
          const text = req.lastUserText ?? '';
          // The stub's reading of user texts leaves the notification out: look in the raw request.
          if (JSON.stringify(lastMessage(req)).includes('<task-notification>')) return { kind: 'text', text: 'stub: the background agent finished.' };
          if (text.includes('background-agent') && !req.hasToolResult) {
            return {
              kind: 'tool',
              command: '',
              call: {
                name: agentTool(req),
                args: { description: 'stub background agent', prompt: 'subagent: say hi', subagent_type: 'general-purpose', run_in_background: true },
              },
            };
          }
          if (text.startsWith('subagent: say hi')) return { kind: 'text', text: 'the subagent says hi', chunks: 2, delayMs: 1_500 };
          if (req.hasToolResult) return { kind: 'text', text: 'stub: the agent runs in the background.' };
          return defaultScript(req, r.cwd);
        });
        await r.type('Start a background-agent please');
        const lastReply = /stub: the background agent finished|stub: the agent runs in the background/;
        await waitCall('Stop', before, 'the first Stop of the background-agent turn');
        await waitForScreen(r.tmux(), lastReply, { what: 'a reply to the background-agent prompt' });
        // The agent's end wakes the session (if it ran in the background): wait for what follows.
        await waitUntil(
          () =>
            all()
              .slice(before)
              .filter((c) => c.event === 'Stop').length >= 2 || r.stub.turns().every((t) => !(t.lastUserText ?? '').startsWith('subagent')),
          'the second Stop, after the task notification',
          30_000,
        ).catch(() => undefined);
        await r.settle(1_500);
        const seen = all().slice(before);
        const stops = seen.filter((c) => c.event === 'Stop');
        const submits = seen.filter((c) => c.event === 'UserPromptSubmit');
        console.log(`claude ${version} background agent: ${seen.map((c) => c.event).join(' ')}`);
        keep('UserPromptSubmit-background-agent', submits[0] as Call);
        if (stops.length >= 2) {
          keep('Stop-background-agent-launched', stops[0] as Call);
          keep('UserPromptSubmit-task-notification', submits[1] as Call);
          keep('Stop-background-agent-finished', stops.at(-1) as Call);
        } else if (stops[0] !== undefined) keep('Stop-background-agent', stops[0]);
        const read = seen.flatMap((c) => signals(c)).filter((s) => s.kind === 'turn-start' || s.kind === 'turn-end');
        expect(read.map((s) => s.kind)).toEqual(['turn-start', 'turn-end']);
        const end = read[1];
        expect(end?.kind === 'turn-end' ? end.reply : undefined).toBe(
          stops.length >= 2 ? 'stub: the background agent finished.' : String(field(stops[0], 'last_assistant_message')),
        );
        r.stub.setScript();
      }

      // Resumed: SessionStart again, source resume, the same id.
      {
        await r.stop();
        const before = all().length;
        await r.start([...resumeArgs('claude', pinned), ...inst.args]);
        await started();
        const resumed = await waitCall('SessionStart', before, 'the resumed session start');
        keep('SessionStart-resume', resumed);
        expect(field(resumed, 'source')).toBe('resume');
        expect(signals(resumed)).toEqual([{ kind: 'session', sessionId: pinned, transcriptPath: field(start, 'transcript_path') }]);
      }
      expect(readFileSync(userSettings, 'utf8'), "the user's settings file is left as it was").toBe(userSettingsText);
    } finally {
      await r.dispose();
    }
  }, 300_000);

  it('in a fresh repository not trusted yet: the trust question comes first, and no hook runs before it is answered', async () => {
    const r: CliRig = await createRig('claude');
    try {
      const { calls, inst } = installKit(r);
      await execa('git', ['init', '-q', r.cwd]);
      const state = join(r.home, '.claude.json');
      writeFileSync(state, JSON.stringify({ ...(JSON.parse(readFileSync(state, 'utf8')) as object), projects: {} }));
      await r.start([...startArgs('claude', randomUUID()), ...inst.args]);
      await waitForScreen(r.tmux(), /trust/i, { timeoutMs: 45_000, what: 'the trust question' });
      await r.settle(1_000);
      expect(readCalls(calls).map((c) => c.event)).toEqual([]);
      // Move to the choice that trusts the folder, then Enter.
      for (let i = 0; i < 3 && !/❯.*(Yes|trust)/i.test(await r.tmux().capture()); i++) {
        await r.tmux().run(['send-keys', '-t', 'e2e', 'Down']);
        await r.settle(300);
      }
      await r.tmux().run(['send-keys', '-t', 'e2e', 'Enter']);
      await r.waitFor('idle', { timeoutMs: 45_000 });
      await waitUntil(() => readCalls(calls).some((c) => c.event === 'SessionStart'), 'SessionStart once the folder is trusted', 15_000);
      console.log(
        `claude ${version} untrusted folder: ${readCalls(calls)
          .map((c) => c.event)
          .join(' ')} after the trust answer`,
      );
    } finally {
      await r.dispose();
    }
  }, 120_000);
});
