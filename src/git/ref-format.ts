// git's rules for a ref's name (`git check-ref-format`, refs.c), checked here without running git: a
// branch name jaggers makes or is given is judged before it reaches a command line.

/** Why git would refuse `ref` (a full name such as `refs/heads/x`) as a ref, or null when it would take it. */
export function refFormatProblem(ref: string): string | null {
  if (ref === '') return 'it is empty';
  if (ref === '@') return "it is '@'";
  if (ref.startsWith('/') || ref.endsWith('/')) return "it starts or ends with '/'";
  if (ref.endsWith('.')) return "it ends with '.'";
  if (ref.includes('..')) return "it contains '..'";
  if (ref.includes('@{')) return "it contains '@{'";
  if (ref.includes('//')) return "it contains '//'";
  for (const ch of ref) {
    const c = ch.codePointAt(0) ?? 0;
    if (c < 0x20 || c === 0x7f) return `it contains the control character ${JSON.stringify(ch)}`;
    if (' ~^:?*[\\'.includes(ch)) return `it contains ${JSON.stringify(ch)}`;
  }
  for (const part of ref.split('/')) {
    if (part.startsWith('.')) return `its part ${JSON.stringify(part)} starts with '.'`;
    if (part.endsWith('.lock')) return `its part ${JSON.stringify(part)} ends with '.lock'`;
  }
  if (!ref.includes('/')) return 'it has one level only';
  return null;
}

/** Why git would refuse `name` as a branch name (`git check-ref-format --branch`), or null. */
export function branchNameProblem(name: string): string | null {
  if (name.startsWith('-')) return "it starts with '-'";
  if (name === 'HEAD') return "it is 'HEAD'";
  return refFormatProblem(`refs/heads/${name}`);
}
