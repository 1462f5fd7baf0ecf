// Drift: captured screens of a CLI's states checked against a profile's rules (pure). The fixture
// test and the canary (`scripts/canary.sh`) share it, so what counts as right is said once.
import type { Profile } from '../profiles/schema.js';
import { bottomLines, classify, type ScreenStatus } from './classify.js';

/** A captured screen: `<cli>-<version>-<state>.txt`, the state as the capture named it. */
export interface CapturedScreen {
  cli: string;
  version: string;
  state: string;
  file: string;
  screen: string;
}

const NAME = /^([a-z][a-z0-9_-]*?)-(\d+\.\d+\.\d+[\w.]*)-([a-z][\w-]*)\.txt$/;

/** `claude-2.1.330-idle.txt` -> its CLI, version and state; null for any other name. */
export function parseScreenName(file: string): { cli: string; version: string; state: string } | null {
  const m = NAME.exec(file);
  return m ? { cli: m[1]!, version: m[2]!, state: m[3]! } : null;
}

/**
 * What the profile's rules must say of a captured state. `done` where the profile has a rule for a
 * finished turn, else idle (the machine turns quiet-after-busy into done). codex draws no spinner
 * while a reply streams: that screen is quiet (idle) and the machine waits for its summary.
 */
export function expectedStatus(profile: Pick<Profile, 'name' | 'detect'>, state: string): ScreenStatus {
  const hasDone = profile.detect.rules.some((r) => r.status === 'done');
  if (state.startsWith('waiting')) return 'waiting_input';
  // A usage or rate limit the CLI showed (docs/limits.md).
  if (state.startsWith('limited')) return 'limited';
  if (state === 'busy' || state === 'trap-summary-while-busy') return 'busy';
  if (state === 'busy-streaming') return profile.name === 'codex' ? 'idle' : 'busy';
  if (state === 'trap-idle-while-streaming') return 'idle';
  if (state.startsWith('done') || state.startsWith('trap-')) return hasDone ? 'done' : 'idle';
  // Before its input box is ready a CLI may show nothing a rule knows: the machine counts that as starting.
  if (state.startsWith('starting')) return profile.detect.rules.some((r) => r.status === 'starting') ? 'starting' : 'unknown';
  if (state.startsWith('idle')) return 'idle';
  return state as ScreenStatus;
}

export interface DriftFinding {
  cli: string;
  version: string;
  state: string;
  file: string;
  expected: ScreenStatus;
  got: ScreenStatus;
  /** The rule that decided, or null when none matched. */
  rule: string | null;
  lines: string[];
  /** The profile's rules for the expected status, none of which matched this screen. */
  missed: string[];
  bottom: string[];
}

/** Each screen the profile reads wrong. */
export function findDrift(screens: CapturedScreen[], profile: Pick<Profile, 'name' | 'detect'>): DriftFinding[] {
  return screens.flatMap((s) => {
    const expected = expectedStatus(profile, s.state);
    const got = classify({ screen: s.screen, raw: '', rules: profile.detect.rules });
    if (got.status === expected) return [];
    const missed = profile.detect.rules.filter((r) => r.status === expected).map((r) => `${r.name} /${r.pattern}/`);
    const { cli, version, state, file } = s;
    return [{ cli, version, state, file, expected, got: got.status, rule: got.rule ?? null, lines: got.lines, missed, bottom: bottomLines(s.screen, 6) }];
  });
}

/** The canary's report: per CLI and version, how many screens still match, and each that does not. */
export function renderDrift(screens: CapturedScreen[], findings: DriftFinding[]): string {
  const groups = new Map<string, CapturedScreen[]>();
  for (const s of screens) groups.set(`${s.cli} ${s.version}`, [...(groups.get(`${s.cli} ${s.version}`) ?? []), s]);
  const out: string[] = [];
  for (const [key, list] of groups) {
    const bad = findings.filter((f) => `${f.cli} ${f.version}` === key);
    out.push(bad.length === 0 ? `${key}: all ${list.length} screens match` : `${key}: ${bad.length} of ${list.length} screens no longer match`);
    for (const f of bad) {
      const decided = f.rule ? `rule ${f.rule} (${f.got}) matched ${JSON.stringify((f.lines[0] ?? '').trim())}` : 'no rule matched';
      out.push(`  ${f.state} (${f.file}): reads as ${f.got}, expected ${f.expected}; ${decided}`);
      out.push(`    ${f.expected} rules that did not fire: ${f.missed.length ? f.missed.join(', ') : 'none (the profile has no rule for it)'}`);
      out.push(`    its last lines:`, ...f.bottom.map((l) => `    | ${l.trimEnd()}`));
    }
  }
  return out.join('\n') + '\n';
}
