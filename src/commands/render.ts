// Plain-text tables and lines for the terminal; pure.
export function renderTable(headers: string[], rows: string[][]): string {
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
