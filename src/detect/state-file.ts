import type { Classification } from './classify.js';

/**
 * Combine the screen and the CLI's own state: the file is stronger evidence for busy/idle/waiting,
 * but a menu, an error or a usage limit on screen is never hidden by it.
 */
export function combine(screen: Classification, file: Classification | null): { c: Classification; source: 'screen' | 'state-file' } {
  if (!file) return { c: screen, source: 'screen' };
  // A menu or an error on screen is never hidden by the file. A turn summary on screen may be the
  // previous turn's while the file already says busy: the file wins then; when the file lags the
  // other way (still busy after the turn), the watcher re-reads as soon as the file changes.
  if (screen.status === 'waiting_input' || screen.status === 'error' || screen.status === 'limited') return { c: screen, source: 'screen' };
  if (screen.status === 'done' && file.status === 'idle') return { c: screen, source: 'screen' };
  return { c: file, source: 'state-file' };
}
