// What a run learned that the journal does not keep: how the prompt went in (submits, evidence, time),
// the states the pane went through, how the turn's end was confirmed. Kept in memory for whoever
// follows the item now (a `handoff` or `send` waiting for its answer); lost with the supervisor, which
// only makes a followed-again item's answer plainer.
import type { DeliveryEvidence } from '../api/types.js';

export interface Outcome {
  /** When the run started (ms, performance.now()). */
  t0: number;
  states: string[];
  delivery: { kind: 'delivered' | 'headless'; submits: number; evidence: DeliveryEvidence | null; ms: number } | null;
  deliverMs: number | null;
  replyMs: number | null;
  confirmedBy: 'transcript' | 'screen' | 'headless' | 'hook' | null;
  replyFrom: 'transcript' | 'screen' | 'headless' | 'hook' | null;
  pointer: string | null;
  bytes: number | null;
}

const KEEP = 2000;

export class Outcomes {
  private readonly map = new Map<string, Outcome>();

  start(id: string): Outcome {
    const o: Outcome = {
      t0: performance.now(),
      states: [],
      delivery: null,
      deliverMs: null,
      replyMs: null,
      confirmedBy: null,
      replyFrom: null,
      pointer: null,
      bytes: null,
    };
    this.map.delete(id);
    this.map.set(id, o);
    if (this.map.size > KEEP) this.map.delete(this.map.keys().next().value!);
    return o;
  }

  get(id: string): Outcome | undefined {
    return this.map.get(id);
  }
}
