// The pinned conversations, one row per terminal (`jaggers sessions`, GET /v1/sessions).
import type { PinRow } from './types.js';
import type { RegistryData } from '../sessions/registry.js';

export function pins(data: RegistryData, task?: string): PinRow[] {
  return Object.values(data.terminals)
    .filter((t) => task === undefined || t.task === task)
    .sort((a, b) => (a.task ?? '').localeCompare(b.task ?? '') || a.agent.localeCompare(b.agent))
    .map((t) => ({
      task: t.task,
      agent: t.agent,
      terminalId: t.terminalId,
      profile: t.profile,
      sessionId: t.sessionId,
      previous: t.sessionHistory,
      window: t.window,
      created: t.created,
    }));
}
