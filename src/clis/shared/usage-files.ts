// A session's usage from the files that hold it, each folded as it grows (./jsonl-follow.ts).
import { addByModel } from '../../usage/tokens.js';
import type { SessionUsage } from '../types.js';
import { followJsonl, type Fold } from './jsonl-follow.js';
import type { UsageState } from './usage-fold.js';

/** The sum over `files` (those that exist); null when none can be read. */
export async function usageOfFiles<S extends UsageState>(files: readonly string[], kind: string, fold: Fold<S>): Promise<SessionUsage | null> {
  let out: SessionUsage | null = null;
  for (const file of files) {
    const f = await followJsonl(file, kind, fold);
    if (!f) continue;
    out ??= { byModel: {}, records: 0, skipped: 0, files: [] };
    out.byModel = addByModel(out.byModel, f.state.byModel);
    out.records += f.state.records;
    out.skipped += f.skipped;
    out.files.push(file);
    // The first file is the session's own; others (claude's subagents) have contexts of their own.
    if (out.files.length === 1 && f.state.last) out.last = f.state.last;
  }
  return out;
}
