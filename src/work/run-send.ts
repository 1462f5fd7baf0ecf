// A `send`: text typed into the agent's pane as it is (no handover file, no nonce) and Enter, when the
// agent is ready and everything before it in the queue has ended. Journaled `starting` before anything
// is typed; after a crash in between, the text's echo on screen says it went in, text still in the
// input box is cleared, and only then is it typed again.
import type { DeliveryEvidence } from '../api/types.js';
import { deliverNow, inputTail } from '../delivery/deliver.js';
import { inputAreaLines, sightPrompt } from '../delivery/evidence.js';
import { sanitizeText } from '../delivery/sanitize.js';
import { JaggersError } from '../errors.js';
import { readConfinedText } from '../fs/confine.js';
import { isFinal, type JobRecord } from '../sessions/registry.js';
import type { TurnEnv } from '../turns/turn.js';
import type { WorkJournal } from './journal.js';
import type { Outcomes } from './outcomes.js';
import type { Agents, TerminalEntry } from './ports.js';
import { compactionOver } from './compact-wait.js';
import { labelOf } from './run-turn.js';

export interface SendRunPorts {
  env: Pick<TurnEnv, 'io' | 'watch' | 'projectRoot' | 'jaggersDir' | 'log'>;
  journal: WorkJournal;
  agents: Pick<Agents, 'target'>;
  outcomes: Outcomes;
}

export async function runSend(p: SendRunPorts, given: JobRecord, e: TerminalEntry | undefined, signal: AbortSignal): Promise<void> {
  const { env, journal } = p;
  let j = journal.data.jobs[given.id] ?? given;
  if (isFinal(j.state)) return;
  const label = labelOf(j);
  const outcome = p.outcomes.get(j.id) ?? p.outcomes.start(j.id);
  try {
    if (!e) throw new JaggersError('E_PANE_GONE', `send: ${j.agent ?? j.target} has no window open`);
    const target = p.agents.target(e, 'send');
    const text = await readConfinedText(env, j.prompt, `${label}: its text`);
    if (j.state === 'starting') {
      const screen = await env.io.capture(target.paneId).catch(() => '');
      const seen = sightPrompt(screen, inputTail(sanitizeText(text)), inputAreaLines(target.profile) || 6);
      if (seen.echoes > 0) {
        await journal.change(j.id, 'done', `${target.agent} had taken the text before the supervisor restarted (found-on-screen)`);
        return;
      }
      if (seen.inInput && target.profile.delivery.clearKeys.length) await env.io.sendKeys(target.paneId, target.profile.delivery.clearKeys);
    } else {
      const started = await journal.change(j.id, 'starting', `typing the text into ${target.agent}`, {
        terminalId: target.terminalId ?? undefined,
        agent: target.agent,
      });
      if (!started) return;
      j = started;
    }
    if (signal.aborted) return;
    const d = await deliverNow(env.io, env.watch, target, text, { acceptCleared: true });
    if (d.kind === 'delivered') {
      outcome.delivery = { kind: 'delivered', submits: d.submits, evidence: d.evidence as DeliveryEvidence, ms: d.ms };
      outcome.bytes = d.bytes;
      env.log.info({ agent: target.agent, terminal: target.terminalId, bytes: d.bytes, evidence: d.evidence }, 'input delivered');
      // A compaction ends when the CLI is done with it: the agent's next item goes in after it, not into it.
      const over =
        j.work === 'compact'
          ? await compactionOver(env.watch, { paneId: target.paneId, agent: target.agent, ready: target.profile.delivery.ready, signal })
          : null;
      if (signal.aborted) return;
      await journal.change(j.id, 'done', `${target.agent} took the text (${d.evidence})${over ? `; compaction over (${over})` : ''}`);
      return;
    }
    if (d.kind === 'pane-gone') throw new JaggersError('E_PANE_GONE', `send: ${target.agent}'s pane went away: ${d.error}`);
    if (d.kind === 'not-ready')
      throw new JaggersError(d.status.startsWith('waiting_input') ? 'E_AGENT_WAITING' : 'E_TIMEOUT', `send: ${target.agent} never became ready (${d.status})`);
    throw new JaggersError(
      'E_TIMEOUT',
      `send: ${target.agent} did not show that it took the text within ${target.profile.delivery.verifyTimeoutMs} ms${d.stillInInput ? ' (it is still in the input box)' : ' (it was submitted; nothing on screen confirms it)'}`,
    );
  } catch (err) {
    if (signal.aborted) return;
    const x = err as JaggersError;
    env.log.warn({ item: j.id, err: x.message }, `${label} failed`);
    await journal.change(j.id, 'failed', x.message, { code: typeof x.code === 'string' ? x.code : 'E_TURN_FAILED' });
  }
}
