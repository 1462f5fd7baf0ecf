// What reading a screen (or a CLI's state file) gives: a status, the rule that decided it, the lines it
// matched. Types only, imported by the detectors and by the CLI folders' state-file readers.
export type ScreenStatus = 'starting' | 'idle' | 'busy' | 'waiting_input' | 'limited' | 'done' | 'error' | 'unknown';

export interface Classification {
  status: ScreenStatus;
  /** The rule that decided, or null when none matched. */
  rule: string | null;
  /** The lines the rule's pattern matched, for `jaggers why`. */
  lines: string[];
}
