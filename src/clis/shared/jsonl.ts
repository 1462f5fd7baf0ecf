/**
 * The objects of a JSON-lines file a CLI writes as it goes: blank lines, lines cut short (a read while
 * the CLI writes) and lines that are not JSON objects are skipped; the lines before them still count.
 */
export function jsonObjects(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      // cut short or not JSON: skipped
    }
  }
  return out;
}
