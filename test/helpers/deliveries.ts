// Checking inbox deliveries against what the agents themselves received (pure: data in, a verdict
// out): every message exactly once, at the agent it was sent to, and per sender and receiver in the
// order it was sent. The fake agent's FAKE_AGENT_PROMPTS log gives the receipts.

/** One message as the test sent it; `seq` counts the sender's messages in the order they were sent. */
export interface SentMessage {
  id: string;
  from: string;
  to: string;
  seq: number;
}

/** One prompt an agent received, in the order it received them. `id` is null for a prompt that names no message. */
export interface Receipt {
  agent: string;
  id: string | null;
  prompt: string;
}

export interface DeliveryVerdict {
  /** Sent, never received by the agent it was sent to. */
  lost: string[];
  /** Received more than once (by anyone): how many times. */
  doubled: { id: string; times: number }[];
  /** Received by an agent it was not sent to. */
  misrouted: { id: string; to: string; by: string }[];
  /** A (sender, receiver) pair whose messages came in another order than they were sent (first receipts). */
  outOfOrder: { from: string; to: string; sent: string[]; received: string[] }[];
  /** Prompts that are no message of ours. */
  strays: Receipt[];
}

/** The message id a pointer prompt names (`Read .jaggers/inbox/<id>.md ...`), or null. */
export function messageIdOf(prompt: string): string | null {
  return /\.jaggers\/inbox\/(m-[0-9a-f]{8,16})\.md\b/.exec(prompt)?.[1] ?? null;
}

/**
 * Parse one FAKE_AGENT_PROMPTS log (one JSON line per submitted prompt) into receipts, in order. A last
 * line without its newline is being written as we read: it is left for the next reading.
 */
export function parsePromptLog(text: string, agent: string): Receipt[] {
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const { prompt } = JSON.parse(l) as { prompt: string };
      return { agent, id: messageIdOf(prompt), prompt };
    });
}

export function checkDeliveries(sent: readonly SentMessage[], receipts: readonly Receipt[]): DeliveryVerdict {
  const byId = new Map(sent.map((m) => [m.id, m]));
  const times = new Map<string, number>();
  const reached = new Set<string>();
  const verdict: DeliveryVerdict = { lost: [], doubled: [], misrouted: [], outOfOrder: [], strays: [] };
  /** First receipts per (sender, receiver), in the order the receiver got them. */
  const got = new Map<string, string[]>();
  for (const r of receipts) {
    const m = r.id === null ? undefined : byId.get(r.id);
    if (!m) {
      verdict.strays.push(r);
      continue;
    }
    const n = (times.get(m.id) ?? 0) + 1;
    times.set(m.id, n);
    if (r.agent !== m.to) verdict.misrouted.push({ id: m.id, to: m.to, by: r.agent });
    if (n > 1 || r.agent !== m.to) continue;
    reached.add(m.id);
    const key = `${m.from}\u0000${m.to}`;
    got.set(key, [...(got.get(key) ?? []), m.id]);
  }
  for (const m of sent) if (!reached.has(m.id)) verdict.lost.push(m.id);
  for (const [id, n] of times) if (n > 1) verdict.doubled.push({ id, times: n });
  // Per pair, the received ids must be the sent ones in sending order (lost ones are reported above).
  const pairs = new Map<string, SentMessage[]>();
  for (const m of sent) pairs.set(`${m.from}\u0000${m.to}`, [...(pairs.get(`${m.from}\u0000${m.to}`) ?? []), m]);
  for (const [key, ms] of pairs) {
    const received = got.get(key) ?? [];
    const expected = [...ms].sort((a, b) => a.seq - b.seq).map((m) => m.id);
    const inReceived = expected.filter((id) => received.includes(id));
    if (inReceived.join() !== received.join()) verdict.outOfOrder.push({ from: ms[0]!.from, to: ms[0]!.to, sent: inReceived, received });
  }
  return verdict;
}

/** The verdict's problems, one line each (empty when every message came exactly once, in order). */
export function deliveryProblems(v: DeliveryVerdict, sent: readonly SentMessage[]): string[] {
  const name = new Map(sent.map((m) => [m.id, `${m.id} (${m.from} #${m.seq} -> ${m.to})`]));
  const of = (id: string) => name.get(id) ?? id;
  return [
    ...v.lost.map((id) => `lost: ${of(id)}`),
    ...v.doubled.map((d) => `received ${d.times} times: ${of(d.id)}`),
    ...v.misrouted.map((m) => `received by ${m.by}, sent to ${m.to}: ${of(m.id)}`),
    ...v.outOfOrder.map((o) => `out of order from ${o.from} to ${o.to}: sent ${o.sent.join(' ')}, received ${o.received.join(' ')}`),
    ...v.strays.map((r) => `${r.agent} received a prompt that is no message sent: ${JSON.stringify(r.prompt)}`),
  ];
}
