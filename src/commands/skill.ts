// `jaggers skill install [--agent ...] [--remove]`: the guide for the agents, as a Claude Code skill
// (.claude/skills/jaggers/SKILL.md, a file jaggers owns) and as a section of GEMINI.md, QWEN.md and
// AGENTS.md between markers. The begin marker records what install added around the section (the
// blank lines before it, or that it created the file), so --remove gives back the file byte for byte.
import { readFile, rm, rmdir, stat } from 'node:fs/promises';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { writeFileAtomic } from '../fs/durable.js';
import { GUIDE, SKILL_DESCRIPTION } from '../skill/guide.js';

export const SKILL_AGENTS = ['claude', 'gemini', 'qwen', 'codex'] as const;
export type SkillAgent = (typeof SKILL_AGENTS)[number];

const FILES: Record<SkillAgent, string> = {
  claude: path.join('.claude', 'skills', 'jaggers', 'SKILL.md'),
  gemini: 'GEMINI.md',
  qwen: 'QWEN.md',
  codex: 'AGENTS.md',
};

const OWNED = '<!-- written by jaggers skill install; `jaggers skill install --remove` deletes it -->';
const BEGIN = /^<!-- jaggers:begin( [^>]*)? -->\r?$/;
const END = /^<!-- jaggers:end -->\r?$/;

export function skillFile(): string {
  return `---\nname: jaggers\ndescription: ${JSON.stringify(SKILL_DESCRIPTION)}\n---\n${OWNED}\n\n${GUIDE}`;
}

interface Found {
  /** Offsets of the begin line's start and of the end after the end line (with its newline). */
  start: number;
  end: number;
  attrs: string;
}

function findSection(text: string, file: string): Found | null {
  const begins: { line: number; at: number; attrs: string }[] = [];
  const ends: { line: number; end: number }[] = [];
  let at = 0;
  text.split('\n').forEach((l, i, all) => {
    const next = at + l.length + (i < all.length - 1 ? 1 : 0);
    const b = BEGIN.exec(l);
    if (b) begins.push({ line: i + 1, at, attrs: (b[1] ?? '').trim() });
    if (END.test(l)) ends.push({ line: i + 1, end: next });
    at = next;
  });
  if (begins.length === 0 && ends.length === 0) return null;
  if (begins.length > 1)
    throw new JaggersError('E_FILE', `${file}:${begins[1]!.line}: a second <!-- jaggers:begin --> marker; keep one section (the file is unchanged)`);
  if (ends.length > 1)
    throw new JaggersError('E_FILE', `${file}:${ends[1]!.line}: a second <!-- jaggers:end --> marker; keep one section (the file is unchanged)`);
  if (begins.length !== 1 || ends.length !== 1 || ends[0]!.line < begins[0]!.line) {
    const line = (begins[0] ?? ends[0])!.line;
    throw new JaggersError(
      'E_FILE',
      `${file}:${line}: the jaggers markers are not a pair (<!-- jaggers:begin --> then <!-- jaggers:end -->); the file is unchanged`,
    );
  }
  return { start: begins[0]!.at, end: ends[0]!.end, attrs: begins[0]!.attrs };
}

const section = (attrs: string, nl: string) =>
  `<!-- jaggers:begin${attrs ? ` ${attrs}` : ''} -->${nl}<!-- managed by \`jaggers skill install\`; edit outside these markers -->${nl}${nl}${GUIDE.replace(/\n/g, nl)}<!-- jaggers:end -->${nl}`;

/** The file's text with the guide's section in it: replaced in place, or appended. `null`: no file yet. */
export function withSection(text: string | null, file: string): string {
  if (text === null) return section('created', '\n');
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const found = findSection(text, file);
  if (found) return text.slice(0, found.start) + section(found.attrs, nl) + text.slice(found.end);
  const sep = text === '' ? 0 : text.endsWith(nl) ? 1 : 2;
  return text + nl.repeat(sep) + section(`sep=${sep}`, nl);
}

/** The file's text without the section, as it was before install; `null`: install made the file, delete it. */
export function withoutSection(text: string, file: string): string | null {
  const found = findSection(text, file);
  if (!found) return text;
  let start = found.start;
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const sep = /(?:^| )sep=(\d)/.exec(found.attrs);
  for (let i = 0; sep && i < Number(sep[1]); i++) if (text.slice(0, start).endsWith(nl)) start -= nl.length;
  const rest = text.slice(0, start) + text.slice(found.end);
  return /(?:^| )created(?: |$)/.test(found.attrs) && rest === '' ? null : rest;
}

export interface SkillChange {
  agent: SkillAgent;
  file: string;
  action: 'installed' | 'updated' | 'unchanged' | 'removed' | 'not installed';
}

export function parseAgents(list: string | undefined): SkillAgent[] {
  if (list === undefined) return [...SKILL_AGENTS];
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names)
    if (!(SKILL_AGENTS as readonly string[]).includes(n))
      throw new JaggersError('E_USAGE', `skill: --agent ${JSON.stringify(n)} is not one of ${SKILL_AGENTS.join(', ')}`);
  return names as SkillAgent[];
}

async function readText(file: string): Promise<string | null> {
  return readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw new JaggersError('E_FILE', `${file}: ${e.message}`);
  });
}

async function write(file: string, text: string): Promise<void> {
  const mode = (await stat(file).catch(() => null))?.mode;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, text);
  if (mode !== undefined) {
    const { chmod } = await import('node:fs/promises');
    await chmod(file, mode & 0o7777);
  }
}

export async function skillInstall(root: string, agents: SkillAgent[], remove: boolean): Promise<SkillChange[]> {
  const out: SkillChange[] = [];
  for (const agent of agents) {
    const rel = FILES[agent];
    const file = path.join(root, rel);
    const text = await readText(file);
    if (agent === 'claude') {
      if (text !== null && !text.includes(OWNED))
        throw new JaggersError('E_FILE', `${file}: not written by jaggers (no "${OWNED}" line); move it away first, it is left as it is`);
      if (remove) {
        if (text === null) out.push({ agent, file: rel, action: 'not installed' });
        else {
          await rm(file);
          // The folders install made, when nothing else is in them.
          for (const d of [path.dirname(file), path.dirname(path.dirname(file)), path.join(root, '.claude')]) await rmdir(d).catch(() => {});
          out.push({ agent, file: rel, action: 'removed' });
        }
        continue;
      }
      const next = skillFile();
      if (text !== next) await write(file, next);
      out.push({ agent, file: rel, action: text === null ? 'installed' : text === next ? 'unchanged' : 'updated' });
      continue;
    }
    if (remove) {
      if (text === null || findSection(text, file) === null) {
        out.push({ agent, file: rel, action: 'not installed' });
        continue;
      }
      const next = withoutSection(text, file);
      if (next === null) await rm(file);
      else await write(file, next);
      out.push({ agent, file: rel, action: 'removed' });
      continue;
    }
    const next = withSection(text, file);
    if (next !== text) await write(file, next);
    out.push({ agent, file: rel, action: text === null || findSection(text, file) === null ? 'installed' : next === text ? 'unchanged' : 'updated' });
  }
  return out;
}

export async function skill(ctx: Context, o: { agent?: string; remove?: boolean }): Promise<SkillChange[]> {
  return skillInstall(ctx.projectRoot, parseAgents(o.agent), o.remove ?? false);
}

export function renderSkill(changes: SkillChange[]): string {
  return changes.map((c) => `${c.action} ${c.file}${c.agent === 'claude' ? '' : c.action === 'removed' ? ' (section)' : ''}`).join('\n') + '\n';
}
