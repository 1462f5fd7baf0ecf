// A waiting agent's question as one line for people (pure, no imports): shared by the supervisor's
// notices and errors and by the commands that print states.

/** One line for people: the question and, in brackets, its choices. */
export function describeQuestion(q: { text: string; choices: string[] }): string {
  return `${JSON.stringify(q.text)}${q.choices.length ? ` [${q.choices.map((c, i) => `${i + 1}. ${c}`).join(' / ')}]` : ''}`;
}
