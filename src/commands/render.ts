// Plain-text tables and lines for the terminal; pure.
import { inertLine } from '../output.js';

/** Columns padded to their widest cell; each cell one line, its control characters shown (`\x1b`), so widths hold and no cell acts. */
export function renderTable(headers: string[], cells: string[][]): string {
  const rows = cells.map((r) => r.map(inertLine));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** `12:03:04.567` of an ISO time, `-` for none. */
export const clock = (iso: string | null): string => (iso ? iso.slice(11, 23) : '-');
