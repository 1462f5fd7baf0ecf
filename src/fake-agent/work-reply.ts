// `--replies work`: an answer that reads like the work it was handed, so the demo shows a plan turning
// into a diff turning into a review. Made only from the handover text and the agent's name (no clock,
// no randomness): the same handover always gets the same reply. Pure.
import { codeReply } from './work-code.js';
import { planReply } from './work-plan.js';
import { hasDiff, parseSnippet, reviewReply } from './work-review.js';
import { clean, clip, handoverBody, numberedSteps, sentences } from './work-text.js';

export type WorkRole = 'planner' | 'coder' | 'reviewer';

/** The role an agent's name suggests (`JAGGERS_AGENT`): `planner`, `coder-2`, `code-review`... */
export function roleOfName(name: string | undefined): WorkRole | undefined {
  const n = (name ?? '').toLowerCase();
  if (/review|critic|audit|\bqa\b/.test(n)) return 'reviewer';
  if (/plan|architect/.test(n)) return 'planner';
  if (/cod|dev|impl|build|engineer/.test(n)) return 'coder';
  return undefined;
}

const PLAN_ASK =
  /^(?:please\s+)?(?:(?:plan|outline|design|sketch|propose)\b(?!:)|break\s+(?:it\s+|this\s+)?down\b|(?:write|draft|make|give|create|produce)\s+(?:me\s+)?(?:an?\s+|the\s+)?(?:short\s+|small\s+|simple\s+)?(?:plan|outline|design)\b)/i;
const CODE_ASK = /^(?:please\s+)?(?:implement|code|build|write|create|make|add|fix|program)\b/i;
const REVIEW_ASK = /^(?:please\s+)?(?:review|audit|check|critique|assess|look\s+over)\b/i;

/** How strongly the body calls for each role; the agent's name adds a hint that settles weak or close calls. */
export function roleScores(body: string, agentName?: string): Record<WorkRole, number> {
  const first = sentences(body)[0] ?? '';
  const score: Record<WorkRole, number> = { planner: 0, coder: 0, reviewer: 0 };
  if (hasDiff(body)) score.reviewer += 5;
  else if (parseSnippet(body)) score.reviewer += 3;
  if (numberedSteps(body).length >= 2) score.coder += 4;
  if (PLAN_ASK.test(first)) score.planner += 3;
  else if (CODE_ASK.test(first)) score.coder += 2;
  else if (REVIEW_ASK.test(first)) score.reviewer += 2;
  if (/\b(?:plan|steps|outline|roadmap)\b/i.test(body)) score.planner += 1;
  if (/\b(?:implement|code|script|function|patch)\b/i.test(body)) score.coder += 1;
  if (/\b(?:review|feedback|critique|verdict)\b/i.test(body)) score.reviewer += 1;
  const hint = roleOfName(agentName);
  if (hint) score[hint] += 2.5;
  return score;
}

/** The role the reply plays: the best score of at least 2, ties to the reviewer, then the coder. */
export function detectRole(body: string, agentName?: string): WorkRole | undefined {
  const score = roleScores(body, agentName);
  const best = (['reviewer', 'coder', 'planner'] as const).reduce((a, b) => (score[b] > score[a] ? b : a));
  return score[best] >= 2 ? best : undefined;
}

const OFFER = 'Ask me to plan something, hand me numbered steps to implement, or a diff to review.';

/** Neither a plan, code nor a review was asked for: say what arrived and what I can do with it. */
export function genericReply(body: string): string[] {
  if (body.trim() === '') return ['The handover is empty: there is nothing to do yet.', OFFER];
  const words = body.split(/\s+/).filter(Boolean).length;
  const lines = body.split('\n').length;
  const start = clip(clean(sentences(body)[0] ?? ''), 60);
  return [
    `Read it: ${words} word${words === 1 ? '' : 's'} in ${lines} line${lines === 1 ? '' : 's'}, starting "${start}".`,
    `It does not ask for a plan, code or a review. ${OFFER}`,
  ];
}

export interface WorkReplyOptions {
  /** `JAGGERS_AGENT`: a hint at the role when the handover itself does not settle it. */
  agentName?: string | undefined;
}

/** The reply lines for a handover file's text (front matter and all) or a prompt typed in directly. */
export function workReply(handover: string, opts: WorkReplyOptions = {}): string[] {
  const body = handoverBody(handover);
  switch (detectRole(body, opts.agentName)) {
    case 'planner':
      return planReply(body);
    case 'coder':
      return codeReply(body);
    case 'reviewer':
      return reviewReply(body);
    case undefined:
      return genericReply(body);
  }
}
