// Loading the registry under its lock: validate the snapshot, catch it up with the journal, and recover
// from a corrupt snapshot or a journal whose last append was cut short. Never deletes anything.
import { JaggersError } from '../errors.js';
import { fileStamp, cutTail, moveAside, readFrom } from '../fs/durable.js';
import { damagedLines, parseJournal, type JournalEntry } from './journal.js';
import { applyEvent, emptyRegistry, registrySchema, type RegistryData } from './schema.js';
import { parseJson, validate } from './validate.js';

export interface RegistryPaths {
  snapshot: string;
  journal: string;
}

export interface Loaded {
  data: RegistryData;
  warnings: string[];
  /** The snapshot on disk no longer matches `data` and should be written. */
  dirty: boolean;
  /** The snapshot file's text when it was valid, to pass back as `trusted` next time. */
  text?: string;
}

interface Snapshot {
  data: RegistryData;
  text: string;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Apply journal entries; an event that no longer fits is skipped with a warning rather than blocking every reader. */
function replay(data: RegistryData, entries: readonly JournalEntry[], file: string, warnings: string[]): RegistryData {
  let out = data;
  for (const { line, event } of entries) {
    try {
      out = applyEvent(out, event);
    } catch (e) {
      if (!(e instanceof JaggersError)) throw e;
      warnings.push(`${file} line ${line}: ${e.message}; skipped`);
    }
  }
  return out;
}

/** Snapshot text this process wrote or validated, and the data it holds (never changed in place: the reducer makes new objects). */
export interface Trusted {
  text: string;
  data: RegistryData;
}

async function readSnapshot(paths: RegistryPaths, now: Date, warnings: string[], trusted: Trusted | null): Promise<Snapshot | null> {
  const file = readFrom(paths.snapshot);
  if (!file) return null;
  const text = file.data.toString('utf8');
  // The very bytes this process wrote or validated last: their data is known.
  if (text === trusted?.text) return { data: trusted.data, text };
  const json = parseJson(text, paths.snapshot);
  const valid = json.ok ? validate(registrySchema, json.value, paths.snapshot) : json;
  if (valid.ok) return { data: valid.value, text };
  const aside = await moveAside(paths.snapshot, `${paths.snapshot}.corrupt-${fileStamp(now)}`);
  warnings.push(`${valid.message}; moved it to ${aside} and rebuilt it from ${paths.journal}`);
  return null;
}

/** Where the base data came from: a valid snapshot, nothing (snapshot missing), or a rebuild already explained. */
type Origin = 'snapshot' | 'missing' | 'rebuild';

/** Read the journal from where `base` left off and apply what follows; cut (and keep) a torn last line. */
async function catchUp(base: RegistryData, origin: Origin, paths: RegistryPaths, now: Date, warnings: string[], quiet = false): Promise<Loaded> {
  const { bytes, lines } = base.journal;
  // One byte early: the snapshot always ends at a line end, so that byte must be a newline.
  const journal = readFrom(paths.journal, Math.max(0, bytes - 1));
  if ((journal?.size ?? 0) < bytes) {
    const size = journal?.size ?? 0;
    const whole = size > 0 ? readFrom(paths.journal) : null;
    const newlines = whole ? whole.data.reduce((n, b) => (b === 0x0a ? n + 1 : n), 0) : 0;
    warnings.push(
      `${paths.journal} is ${journal ? `${size} bytes` : 'missing'} but ${paths.snapshot} was built from ${bytes} bytes of it; ` +
        'keeping the snapshot and appending after what is there now',
    );
    return { data: { ...base, journal: { bytes: whole?.size ?? 0, lines: newlines } }, warnings, dirty: true };
  }
  if (!journal) return { data: base, warnings, dirty: false };
  if (bytes > 0 && journal.data[0] !== 0x0a) {
    warnings.push(
      `${paths.journal} does not continue where ${paths.snapshot} left off (byte ${bytes} is not a line end: was the journal replaced?); ` +
        'rebuilt the snapshot from the whole journal',
    );
    return catchUp(emptyRegistry(), 'rebuild', paths, now, warnings);
  }
  const tail = bytes > 0 ? journal.data.subarray(1) : journal.data;
  if (tail.length === 0) return { data: base, warnings, dirty: false };
  const parsed = parseJournal(tail, { file: paths.journal, startBytes: bytes, startLines: lines });
  let data = replay(base, parsed.entries, paths.journal, warnings);
  if (parsed.torn) {
    const kept = await cutTail(paths.journal, parsed.torn.offset, `${paths.journal}.torn-${fileStamp(now)}`);
    warnings.push(`${parsed.torn.message}; its bytes were kept in ${kept}`);
  }
  if (origin === 'missing' && parsed.entries.length > 0) {
    warnings.push(`${paths.snapshot} was missing; rebuilt it from ${plural(parsed.entries.length, 'event')} in ${paths.journal}`);
  }
  // The supervisor writes the snapshot now and then, so it is often behind after a kill: not news.
  if (origin === 'snapshot' && parsed.entries.length > 0 && !quiet) {
    warnings.push(`${paths.snapshot} was ${plural(parsed.entries.length, 'event')} behind ${paths.journal} (interrupted write?); caught up`);
  }
  data = { ...data, journal: { bytes: parsed.goodBytes, lines: lines + parsed.lines } };
  return { data, warnings, dirty: true };
}

/** Warn of each damaged line in the part of the journal the snapshot holds; change nothing. */
function checkCovered(paths: RegistryPaths, covered: RegistryData['journal'], warnings: string[]): void {
  if (covered.bytes === 0) return;
  const file = readFrom(paths.journal);
  if (!file) return;
  const { lines, count } = damagedLines(file.data.subarray(0, covered.bytes), paths.journal);
  const first = lines[0];
  if (!first) return;
  const more =
    count > 1
      ? ` (and ${plural(count - 1, 'more damaged line')}: ${lines
          .slice(1)
          .map((l) => l.line)
          .join(', ')}${count > lines.length ? ', ...' : ''})`
      : '';
  warnings.push(
    `${first.message}${more}; the journal is damaged before the point ${paths.snapshot} was built from (its first ${plural(covered.lines, 'line')}): ` +
      `kept ${paths.snapshot}, which holds every event up to there, and the journal as it is; ` +
      `a rebuild from the journal alone would stop at line ${first.line}: keep a copy of ${paths.snapshot}, or remove that line`,
  );
}

/**
 * Call only while holding the registry lock: this may move files and cut the journal's torn tail.
 * `trusted`: snapshot text known to be valid (this process wrote it), so zod need not check it again.
 */
export async function loadLocked(
  paths: RegistryPaths,
  now: Date,
  trusted: Trusted | null = null,
  o: { quietCatchUp?: boolean; checkJournal?: boolean } = {},
): Promise<Loaded> {
  const warnings: string[] = [];
  const snapshot = await readSnapshot(paths, now, warnings, trusted);
  const origin: Origin = snapshot ? 'snapshot' : warnings.length > 0 ? 'rebuild' : 'missing';
  // The journal before the point the snapshot was built from is never read again while the snapshot
  // lasts: a line damaged there would go unnoticed until a rebuild stops at it. Said now instead.
  if (snapshot && o.checkJournal) checkCovered(paths, snapshot.data.journal, warnings);
  const loaded = await catchUp(snapshot?.data ?? emptyRegistry(), origin, paths, now, warnings, o.quietCatchUp);
  // A snapshot moved aside is written back even when the journal held nothing.
  if (origin === 'rebuild') return { ...loaded, dirty: true };
  return snapshot && !loaded.dirty ? { ...loaded, text: snapshot.text, data: snapshot.data } : loaded;
}

/**
 * The registry as its files say now, for a reader that holds no lock and writes nothing (a command
 * while no supervisor runs): a torn last line is left out, a damaged snapshot is read past from the
 * journal alone. Repairs are the writer's.
 */
export function peekRegistry(paths: RegistryPaths): RegistryData {
  const warnings: string[] = [];
  const file = readFrom(paths.snapshot);
  let base = emptyRegistry();
  if (file) {
    const text = file.data.toString('utf8');
    const json = parseJson(text, paths.snapshot);
    const valid = json.ok ? validate(registrySchema, json.value, paths.snapshot) : json;
    if (valid.ok) base = valid.value;
  }
  const from = base.journal.bytes;
  const journal = readFrom(paths.journal, Math.max(0, from - 1));
  if (!journal || journal.size < from || (from > 0 && journal.data[0] !== 0x0a)) {
    if (from === 0 || !journal) return base;
    // The journal does not continue the snapshot: read it whole.
    const whole = readFrom(paths.journal)!;
    const parsed = parseJournal(whole.data, { file: paths.journal });
    return replay(emptyRegistry(), parsed.entries, paths.journal, warnings);
  }
  const tail = from > 0 ? journal.data.subarray(1) : journal.data;
  const parsed = parseJournal(tail, { file: paths.journal, startBytes: from, startLines: base.journal.lines });
  return replay(base, parsed.entries, paths.journal, warnings);
}
