// One real CLI with a HookKit installed and the capture script as its bridge, driven through the turns
// whose hook calls the kit must read: the start, a text turn, a turn with an approval, and a resume with
// one more turn. Returns every call with the phase it came in and the end-of-turn latencies.

import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HookKit } from '../../src/clis/types.js';
import { resumeArgs, startArgs } from './cli-env.js';
import { CLIS, type CliName } from './clis.js';
import { waitUntil } from './drive.js';
import { createHookCapture, saveFixture, writeInstall, type HookCall } from './hook-capture.js';
import type { CliRig } from './rig.js';

export type Phase = 'start' | 'text' | 'tool' | 'resume' | 'resumed-text';

export interface PhasedCall extends HookCall {
  phase: Phase;
}

export interface HookScenario {
  calls: PhasedCall[];
  sessionId: string;
  /** Per turn that ended with a hook call named `endEvent`: ms from the stub's last byte to that call. */
  latenciesMs: number[];
  /** The same, to the moment the CLI closed the hook's stdin (a bridge reading its payload waits for that). */
  payloadLatenciesMs: number[];
  /** The files and folders in the CLI's working folder at the end, other than `.jaggers` and the tool's `approved.txt`. */
  strayInCwd: string[];
}

/** The calls' fixture names: `<cli>-<version>-<event>-<phase>`, `-2`... for a repeat in one phase. */
export function fixtureNames(cli: CliName, calls: readonly PhasedCall[]): string[] {
  const seen = new Map<string, number>();
  return calls.map((c) => {
    const base = `${cli}-${CLIS[cli].version}-${c.event}-${c.phase}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base}-${n}`;
  });
}

export async function runHookScenario(
  r: CliRig,
  kit: HookKit,
  opts: { hookDir: string; endEvent: string; resumeInAnotherMinute?: boolean },
): Promise<HookScenario> {
  const { cli } = r;
  const capture = createHookCapture(r.root);
  const install = kit.install(capture.context({ dir: opts.hookDir, cwd: r.cwd, version: CLIS[cli].version, env: r.env }));
  if (install.unavailable !== undefined) throw new Error(`${cli}: hooks unavailable here: ${install.unavailable}`);
  writeInstall(install);
  Object.assign(r.env, install.env);

  const calls: PhasedCall[] = [];
  let phase: Phase = 'start';
  // A call belongs to the phase it started in (qwen may hold a hook's stdin open until it exits).
  const phases: { phase: Phase; from: number }[] = [{ phase, from: 0 }];
  const enter = (p: Phase): void => {
    phase = p;
    phases.push({ phase: p, from: Date.now() });
  };
  const collect = (): PhasedCall[] => {
    const seen = new Set(calls.map((c) => c.id));
    for (const c of capture.calls().filter((x) => !seen.has(x.id))) calls.push({ ...c, phase: phases.filter((p) => p.from <= c.atMs).at(-1)!.phase });
    calls.sort((a, b) => a.atMs - b.atMs);
    return calls;
  };
  // Before the next phase: calls that come a moment after a turn's end (qwen's idle_prompt) belong to it.
  const quiet = async (ms = 1_000): Promise<void> => {
    let n = collect().length;
    let since = Date.now();
    await waitUntil(() => {
      if (collect().length !== n) {
        n = calls.length;
        since = Date.now();
      }
      return Date.now() - since >= ms;
    }, 'the hook calls to stop coming');
  };
  const waitCall = async (event: string, what: string, timeoutMs = 20_000): Promise<void> => {
    await waitUntil(() => collect().some((c) => c.phase === phase && c.event === event), `${cli}'s ${event} hook (${what})`, timeoutMs);
  };

  const sessionId = randomUUID();
  await r.start([...startArgs(cli, sessionId), ...install.args]);
  await r.waitFor('idle', { timeoutMs: 45_000 });
  await waitCall('SessionStart', 'at start');
  await r.settle();
  await quiet();

  enter('text');
  await r.type('Say hello to the hooks');
  await r.waitFor('idle', { also: /stub reply to: Say hello to the hooks/ });
  await waitCall(opts.endEvent, 'end of the text turn');
  await r.settle();
  await quiet();

  enter('tool');
  await r.type('Run the command that needs-approval');
  await r.waitFor('waiting', { timeoutMs: 45_000 });
  await r.settle(1_500);
  collect();
  await r.tmux().run(['send-keys', '-t', 'e2e', 'Enter']);
  await r.waitFor('idle', { also: /stub: the command ran/ });
  await waitCall(opts.endEvent, 'end of the tool turn');
  await r.settle();
  await quiet();

  await r.stop();
  if (opts.resumeInAnotherMinute === true) {
    // gemini names its chat file by the minute it opened: a resume in another minute shows its stray file.
    const minute = new Date().getUTCMinutes();
    await waitUntil(() => new Date().getUTCMinutes() !== minute, 'the next minute', 65_000);
  }
  enter('resume');
  await r.start([...resumeArgs(cli, sessionId), ...install.args]);
  await r.waitFor('idle', { timeoutMs: 45_000 });
  await waitCall('SessionStart', 'at resume');
  await r.settle();
  await quiet();

  enter('resumed-text');
  await r.type('Say hello after the resume');
  await r.waitFor('idle', { also: /stub reply to: Say hello after the resume/ });
  await waitCall(opts.endEvent, 'end of the turn after the resume');
  await r.settle();
  await quiet();

  const names = fixtureNames(cli, calls);
  calls.forEach((c, i) => saveFixture(names[i]!, c.payload));

  if (process.env.JAGGERS_HOOKS_DEBUG === '1') {
    for (const q of r.stub.requests) console.log(`req ${q.seq} ${q.purpose} ${q.path} at ${q.at} ended ${q.endedAt ?? '-'}`);
    for (const c of calls) console.log(`call ${c.phase} ${c.event} at ${c.atMs.toFixed(1)} stdin closed +${(c.stdinClosedMs - c.atMs).toFixed(1)}`);
  }
  const turns = r.stub.turns();
  const ends = calls.filter((c) => c.event === opts.endEvent);
  const lastByte = (c: HookCall): number => turns.filter((t) => t.endedAt !== undefined && t.endedAt <= c.atMs).at(-1)?.endedAt ?? Number.NaN;
  const latenciesMs = ends.map((c) => c.atMs - lastByte(c));
  const payloadLatenciesMs = ends.map((c) => c.stdinClosedMs - lastByte(c));
  const strayInCwd = readdirSync(r.cwd).filter((n) => n !== '.jaggers' && n !== 'approved.txt');
  return { calls, sessionId, latenciesMs, payloadLatenciesMs, strayInCwd: strayInCwd.map((n) => join(r.cwd, n)) };
}
