// What an agent that waits for a person asks: the question line and the menu's choices, read from
// the screen (pure), for `status`, `why` and notifications.
import { bottomLines } from './classify.js';

const CHOICE = /^\s*(?:[❯›>●○◯]\s*)?(\d{1,2})[.)]\s+(\S.*?)\s*$/u;
const QUESTION = /\?\s*$|^\s*(?:Allow|Do you want|Would you like|Is this)\b/u;

export interface Question {
  text: string;
  choices: string[];
}

/** The last question-like line above the menu and the numbered choices below it, from the screen's last `lines` lines. */
export function readQuestion(screen: string, lines = 20): Question | null {
  const bottom = bottomLines(screen, lines).map((l) => l.replace(/[│┃║]/gu, ' ').trim());
  const first = bottom.findIndex((l) => CHOICE.test(l));
  const choices = first < 0 ? [] : bottom.slice(first).flatMap((l) => (CHOICE.exec(l) ? [CHOICE.exec(l)![2]!] : []));
  const above = first < 0 ? bottom : bottom.slice(0, first);
  const text = above.findLast((l) => QUESTION.test(l)) ?? above.findLast((l) => l !== '') ?? '';
  if (!text && choices.length === 0) return null;
  return { text, choices };
}
