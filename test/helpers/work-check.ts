// Checking work items against what the agents themselves received (pure: data in, a verdict out): every
// item recorded reached the agent it was for exactly once, and each terminal received its items in the
// order of the queue (their `seq`). What identifies an item in a prompt: the handover file of a turn (a
// job, handoff, workflow turn, flow run), the inbox file of a message, the text itself of a send.

export interface WorkItemSeen {
  id: string;
  kind: 'job' | 'handoff' | 'send' | 'turn' | 'flow' | 'message';
  terminalId: string;
  agent: string;
  seq: number;
  /** The text a prompt that carries this item holds (a file path, or a send's own text). */
  key: string;
}

export interface PromptSeen {
  /** The agent that logged it (JAGGERS_AGENT of the pane: the task windows of an agent share its log). */
  agent: string;
  prompt: string;
}

export interface WorkVerdict {
  lost: string[];
  doubled: { id: string; times: number }[];
  /** Received by another agent than its own. */
  misrouted: { id: string; agent: string; by: string }[];
  /** A terminal whose items came in another order than their places in its queue. */
  outOfOrder: { terminalId: string; received: string[] }[];
  /** Prompts that carry no item of ours. */
  strays: PromptSeen[];
}

export function checkWork(items: readonly WorkItemSeen[], prompts: readonly PromptSeen[]): WorkVerdict {
  const v: WorkVerdict = { lost: [], doubled: [], misrouted: [], outOfOrder: [], strays: [] };
  const times = new Map<string, number>();
  const order = new Map<string, WorkItemSeen[]>();
  for (const p of prompts) {
    const hits = items.filter((i) => p.prompt.includes(i.key));
    if (hits.length !== 1) {
      v.strays.push(p);
      continue;
    }
    const item = hits[0]!;
    times.set(item.id, (times.get(item.id) ?? 0) + 1);
    if (item.agent !== p.agent) v.misrouted.push({ id: item.id, agent: item.agent, by: p.agent });
    if (times.get(item.id) === 1) order.set(item.terminalId, [...(order.get(item.terminalId) ?? []), item]);
  }
  for (const i of items) {
    const n = times.get(i.id) ?? 0;
    if (n === 0) v.lost.push(i.id);
    if (n > 1) v.doubled.push({ id: i.id, times: n });
  }
  for (const [terminalId, got] of order) {
    const sorted = [...got].sort((a, b) => a.seq - b.seq);
    if (got.some((x, k) => x !== sorted[k])) v.outOfOrder.push({ terminalId, received: got.map((x) => `${x.id}#${x.seq}`) });
  }
  return v;
}

/** The verdict as lines, empty when nothing is wrong. */
export function workProblems(v: WorkVerdict): string[] {
  return [
    ...v.lost.map((id) => `lost: ${id}`),
    ...v.doubled.map((d) => `received ${d.times} times: ${d.id}`),
    ...v.misrouted.map((m) => `${m.id} (for ${m.agent}) received by ${m.by}`),
    ...v.outOfOrder.map((o) => `out of order at ${o.terminalId}: ${o.received.join(' ')}`),
    ...v.strays.map((s) => `stray prompt at ${s.agent}: ${s.prompt.slice(0, 120)}`),
  ];
}
