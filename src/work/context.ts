// How full each agent's context is, after every turn: the prompt of its session's last API answer (the
// usage readers give it with the turn's tokens, src/work/usage.ts) as a share of its model's window
// (src/usage/context.ts). Past the agent's `compactAt` (default 85%) a `context` event goes out, once
// each time it crosses; with `autoCompact` the CLI's own compaction command (its profile's
// `compactCommand`) is queued as a `compact` work item: typed by the runner like a send, so only between
// turns, never in the middle of one, and before the other items that wait (src/work/queue.ts).
import type { Log } from '../logger.js';
import { isFinal, type RegistryData } from '../sessions/registry.js';
import { contextUse, DEFAULT_COMPACT_AT } from '../usage/context.js';
import type { Publish } from './ports.js';

export interface ContextSettings {
  windows: Readonly<Record<string, number>>;
  /** The agent's threshold in percent, and whether it compacts on its own past it. */
  compactAt(agent: string): number | undefined;
  autoCompact(agent: string): boolean;
}

export interface ContextPorts {
  data(): RegistryData;
  hub: Publish;
  log: Log;
  settings(): Promise<ContextSettings>;
  /** The compaction command of the terminal's profile; undefined when it has none. */
  compactCommand(terminalId: string): string | undefined;
  /** Queue the command as a `compact` item for the agent (Jobs.create). */
  compact(terminalId: string, agent: string, text: string): Promise<{ id: string }>;
}

import type { ContextView } from '../usage/context.js';
export type { ContextView };

export class ContextWatch {
  private settings: ContextSettings = { windows: {}, compactAt: () => undefined, autoCompact: () => false };
  /** Terminals at or past their threshold since their last event. */
  private readonly above = new Set<string>();

  constructor(private readonly p: ContextPorts) {}

  async refresh(): Promise<void> {
    try {
      this.settings = await this.p.settings();
    } catch (e) {
      this.p.log.warn({ err: (e as Error).message }, 'context: jaggers.json could not be read; the last settings still hold');
    }
  }

  /** The terminal's context use now; null before its first turn with usage. */
  of(terminalId: string): ContextView | null {
    const u = this.p.data().usage.context;
    const last = Object.hasOwn(u, terminalId) ? u[terminalId]! : null;
    const t = this.p.data().terminals[terminalId];
    if (!last || !t) return null;
    return { ...contextUse(this.settings.windows, last), compactAt: this.settings.compactAt(t.agent) ?? DEFAULT_COMPACT_AT };
  }

  /** A turn of the terminal ended (its usage recorded): the event past the threshold, and the compaction. */
  async turnEnded(terminalId: string): Promise<void> {
    await this.refresh();
    const t = this.p.data().terminals[terminalId];
    const use = this.of(terminalId);
    if (!t || !use || use.percent === null) return;
    if (use.percent < use.compactAt) {
      this.above.delete(terminalId);
      return;
    }
    if (this.above.has(terminalId)) return;
    this.above.add(terminalId);
    const auto = this.settings.autoCompact(t.agent);
    const command = this.p.compactCommand(terminalId);
    let item: string | null = null;
    if (auto && command && !this.compactQueued(terminalId)) {
      item =
        (
          await this.p
            .compact(terminalId, t.agent, command)
            .catch((e: Error) => (this.p.log.warn({ terminal: terminalId, err: e.message }, 'could not queue a compaction'), null))
        )?.id ?? null;
    }
    const why = !auto
      ? 'autoCompact is off'
      : !command
        ? 'its profile names no compactCommand'
        : item
          ? `${command.trim()} queued as ${item}`
          : 'a compaction is already queued';
    this.p.log.info({ agent: t.agent, terminal: terminalId, percent: use.percent, compactAt: use.compactAt, item }, `context past its threshold: ${why}`);
    this.p.hub.publish('context', {
      agent: t.agent,
      terminalId,
      ...use,
      compact: item,
      text: `${t.agent}'s context is ${use.percent}% full (${use.tokens.toLocaleString('en-US')} of ${use.window?.toLocaleString('en-US')} tokens of ${use.model}); ${why}`,
    });
  }

  private compactQueued(terminalId: string): boolean {
    return Object.values(this.p.data().jobs).some((j) => j.terminalId === terminalId && j.work === 'compact' && !isFinal(j.state));
  }
}
