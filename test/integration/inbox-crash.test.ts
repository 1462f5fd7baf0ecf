// The inbox through supervisor crashes: 500 messages from 5 senders to 10 agents while the supervisor
// is killed with kill -9 at 5 random moments, spread over the sends and the deliveries (1,000 messages
// before: 88-112 s of the suite's CI runs). Every message reaches its agent exactly once, and each
// sender's messages to one agent arrive in the order they were sent. The ground truth is what the fake
// agents received (their FAKE_AGENT_PROMPTS logs), checked by `checkDeliveries` (which can fail: see
// test/unit/delivery-check.test.ts); the registry must agree with it.
//
// JG_CRASH_MESSAGES and JG_CRASH_KILLS make it smaller or larger; JG_CRASH_SEED replays a run's choices
// of receivers and kill moments (the seed is printed).
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withApi } from '../../src/api/connect.js';
import type { HealthView, InboxView, MessageView } from '../../src/api/types.js';
import { resolveContext, type Context } from '../../src/context.js';
import { JaggersError } from '../../src/errors.js';
import { api, explained, waitPidGone } from '../helpers/api.js';
import { checkDeliveries, deliveryProblems, parsePromptLog, type Receipt, type SentMessage } from '../helpers/deliveries.js';
import { whenDirSays } from '../helpers/dir-watch.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';
import { seededRandom } from '../helpers/seeded.js';

const MESSAGES = Number(process.env.JG_CRASH_MESSAGES ?? 500);
const KILLS = Number(process.env.JG_CRASH_KILLS ?? 5);
const SEED = Number(process.env.JG_CRASH_SEED ?? randomBytes(4).readUInt32LE());
const AGENTS = Array.from({ length: 10 }, (_, i) => `a${i}`);
/** The senders are five of the agents (messages name them with `from`). */
const SENDERS = AGENTS.slice(0, 5);
/** Bound on the whole delivery after the last kill. */
const DELIVERY_TIMEOUT_MS = 200_000;

interface Planned extends SentMessage {
  text: string;
}

type JournalMessage = Pick<MessageView, 'id' | 'state' | 'toAgent' | 'fromAgent' | 'file' | 'claims' | 'nonce' | 'how'>;

/** Every message as the journal tells it (created, each claim, delivered). */
async function journalMessages(file: string): Promise<Map<string, JournalMessage>> {
  const out = new Map<string, JournalMessage>();
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as Record<string, string>;
    const m = out.get(e.messageId!);
    if (e.type === 'message-created')
      out.set(e.messageId!, {
        id: e.messageId!,
        state: 'pending',
        toAgent: e.toAgent!,
        fromAgent: e.fromAgent!,
        file: e.file!,
        claims: 0,
        nonce: null,
        how: null,
      });
    else if (e.type === 'message-claimed' && m) Object.assign(m, { state: 'claimed', claims: m.claims + 1, nonce: e.nonce });
    else if (e.type === 'message-delivered' && m) Object.assign(m, { state: 'delivered', how: e.how });
  }
  return out;
}

/** Each sender's messages in sending order, to random receivers other than itself. */
function planMessages(rand: () => number): Planned[][] {
  return SENDERS.map((from, s) =>
    Array.from({ length: Math.ceil((MESSAGES - s) / SENDERS.length) }, (_, seq) => {
      const others = AGENTS.filter((a) => a !== from);
      const to = others[Math.floor(rand() * others.length)]!;
      const id = `m-${randomBytes(6).toString('hex')}`;
      return { id, from, to, seq, text: `${from} #${String(seq).padStart(4, '0')} to ${to}\n` };
    }),
  );
}

/**
 * The kill moments, as progress counts (messages sent plus prompts received, out of twice the messages):
 * one random point in each of KILLS equal slices of the run, so they are random and spread over it.
 */
function planKills(rand: () => number): { at: number; jitterMs: number }[] {
  const total = 2 * MESSAGES;
  const [lo, hi] = [0.02 * total, 0.9 * total];
  const slice = (hi - lo) / KILLS;
  return Array.from({ length: KILLS }, (_, k) => ({ at: Math.floor(lo + slice * (k + rand())), jitterMs: Math.floor(rand() * 600) }));
}

const supervisorDown = (e: unknown) => e instanceof JaggersError && (e.code === 'E_SUPERVISOR_DOWN' || e.code === 'E_SUPERVISOR_START');

describe('the inbox through supervisor crashes', () => {
  let rig: Rig;
  let promptsDir: string;
  beforeEach(async () => {
    rig = await Rig.create();
    promptsDir = path.join(rig.root, 'prompts');
    await mkdir(promptsDir);
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '20']);
    await writeProject(rig.root, {
      agents: AGENTS.map((name) => ({ name, profile: 'fake', env: { FAKE_AGENT_PROMPTS: path.join(promptsDir, `${name}.jsonl`) } })),
    });
  });
  afterEach(async () => rig.cleanup());

  /** Every prompt each agent received, in the order it received them. */
  const receipts = async (): Promise<Receipt[]> => {
    const files = (await readdir(promptsDir)).filter((f) => f.endsWith('.jsonl')).sort();
    const all = await Promise.all(files.map(async (f) => parsePromptLog(await readFile(path.join(promptsDir, f), 'utf8'), path.basename(f, '.jsonl'))));
    return all.flat();
  };

  it(`${MESSAGES} messages from ${SENDERS.length} senders to ${AGENTS.length} agents, the supervisor killed ${KILLS} times: each delivered exactly once, in order per sender`, async () => {
    const t0 = performance.now();
    const rand = seededRandom(SEED);
    const plan = planMessages(rand);
    const kills = planKills(rand);
    const sent = plan.flat();
    expect((await rig.run(['up'])).code).toBe(0);
    const ctx: Context = await resolveContext({}, rig.env, rig.root);

    let sentCount = 0;
    let requests = 0;
    // One sender: its messages one after the other, each with its own id; a request the supervisor
    // dropped (it was killed) is sent again with the same id, as `jaggers message` does.
    const sender = async (messages: Planned[]) => {
      for (const m of messages) {
        const body = { id: m.id, to: m.to, from: m.from, text: m.text };
        for (let tries = 1; ; tries++) {
          try {
            const rec = await withApi(
              ctx,
              (c) => {
                requests++;
                return c.call<MessageView>('POST', '/v1/messages', body);
              },
              { readOnly: true },
            );
            expect(rec).toMatchObject({ id: m.id, toAgent: m.to, fromAgent: m.from });
            break;
          } catch (e) {
            if (!supervisorDown(e) || tries >= 10) throw e;
          }
        }
        sentCount++;
      }
    };

    const health = () => explained(rig, 'GET /v1/health', () => withApi(ctx, (c) => c.call<HealthView>('GET', '/v1/health'), { readOnly: true }));
    const progress = async () => sentCount + (await receipts()).length;
    const killed: { pid: number; at: number; progress: number }[] = [];
    const killer = async () => {
      for (const k of kills) {
        await whenDirSays(promptsDir, progress, (n) => n >= k.at, { timeoutMs: DELIVERY_TIMEOUT_MS, what: `progress ${k.at}` });
        await new Promise((r) => setTimeout(r, k.jitterMs)); // a random moment, not a wait for a state
        // The supervisor that answers now (brought back by a sender, or here, after the last kill).
        const { pid } = await health();
        process.kill(pid, 'SIGKILL');
        killed.push({ pid, at: Math.round(performance.now() - t0), progress: await progress() });
        await waitPidGone(pid);
        const back = await health();
        expect(back.pid).not.toBe(pid);
      }
    };
    let sendsDoneMs = 0;
    const senders = Promise.all(plan.map((m) => explained(rig, `sender ${m[0]!.from}`, () => sender(m)))).then(
      () => void (sendsDoneMs = performance.now() - t0),
    );
    await Promise.all([senders, killer()]);
    expect(killed).toHaveLength(KILLS);

    // Until the registry says every message is delivered: each one's prompt is in its agent's log by then,
    // as a delivery is recorded only after the agent took the prompt.
    const client = api(rig);
    const inboxes = () => explained(rig, 'the inboxes', () => Promise.all(AGENTS.map((a) => client.call<InboxView>('GET', `/v1/terminals/${a}/inbox`))));
    const settled = await whenDirSays(path.join(rig.root, '.jaggers'), inboxes, (views) => views.every((v) => v.pending === 0), {
      timeoutMs: DELIVERY_TIMEOUT_MS,
      what: 'every message delivered',
    }).then(
      (views) => ({ views, timedOut: null }),
      async (e: Error) => ({ views: await inboxes(), timedOut: e.message.slice(0, 400) }),
    );
    const deliveredMs = performance.now() - t0;

    // The agents' own record: exactly once, at the right agent, in order per sender.
    const got = await receipts();
    const verdict = checkDeliveries(sent, got);
    const problems = deliveryProblems(verdict, sent);
    // The snapshot keeps only the newest 500 delivered messages: the journal holds every one.
    const records = await journalMessages(path.join(rig.root, '.jaggers', 'events.jsonl'));
    const how: Record<string, number> = {};
    for (const m of records.values()) how[m.how ?? m.state] = (how[m.how ?? m.state] ?? 0) + 1;
    const reclaimed = [...records.values()].filter((m) => m.claims > 1).length;
    console.info(
      `inbox-crash seed=${SEED}: ${sent.length} messages (${requests - sent.length} requests sent again), ` +
        `kills at ${killed.map((k) => `${k.at}ms/${k.progress}`).join(', ')}; sends done ${Math.round(sendsDoneMs)} ms, ` +
        `all delivered ${Math.round(deliveredMs)} ms; ${got.length} prompts received; how: ${JSON.stringify(how)}; claimed more than once: ${reclaimed}`,
    );
    expect(problems.slice(0, 30), `${problems.length} problems (seed ${SEED})`).toEqual([]);
    expect(settled.timedOut).toBeNull();
    expect(got).toHaveLength(sent.length);

    // The registry agrees: each message delivered, to the agent it names, by the prompt that carried its
    // last claim's nonce; and each pointed file holds the text that was sent.
    const byId = new Map(sent.map((m) => [m.id, m]));
    expect(records.size).toBe(sent.length);
    for (const r of got) {
      const m = byId.get(r.id!)!;
      const rec = records.get(m.id)!;
      expect(rec, m.id).toMatchObject({ state: 'delivered', toAgent: m.to, fromAgent: m.from });
      expect(rec.claims, m.id).toBeGreaterThanOrEqual(1);
      expect(r.prompt, `${m.id}: the prompt that went in carries the nonce of its last claim`).toContain(`[jg:${rec.nonce}]`);
      expect((await readFile(path.join(rig.root, rec.file), 'utf8')).endsWith(`\n${m.text}`), m.id).toBe(true);
    }
  }, 300_000);
});
