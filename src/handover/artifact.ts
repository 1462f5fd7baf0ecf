import { randomBytes } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { readConfined } from '../fs/confine.js';
import { writeFileAtomic } from '../fs/durable.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';

export interface HandoverMeta {
  task: string;
  workflow: string;
  turn: number;
  sourceAgent: string | null;
  sourceSession: string | null;
  targetAgent: string;
  targetSession: string | null;
  created: string;
  /** For a reply artifact: the artifact it answers. */
  replyTo?: string | null;
}

const KEYS: [keyof HandoverMeta, string][] = [
  ['task', 'task'],
  ['workflow', 'workflow'],
  ['turn', 'turn'],
  ['sourceAgent', 'source_agent'],
  ['sourceSession', 'source_session'],
  ['targetAgent', 'target_agent'],
  ['targetSession', 'target_session'],
  ['created', 'created'],
  ['replyTo', 'reply_to'],
];

export function handoverDir(jaggersDir: string): string {
  return path.join(jaggersDir, 'handover');
}

/** `---` front matter (one `key: value` per line, values JSON-quoted when needed), then the body. */
export function renderArtifact(meta: HandoverMeta, body: string): string {
  const lines = KEYS.filter(([k]) => meta[k] !== undefined).map(([k, name]) => {
    const v = meta[k];
    const text = v === null ? 'null' : typeof v === 'number' ? String(v) : /^[\w@.:+/-]+$/.test(String(v)) ? String(v) : JSON.stringify(v);
    return `${name}: ${text}`;
  });
  return `---\n${lines.join('\n')}\n---\n${body}${body.endsWith('\n') ? '' : '\n'}`;
}

export function parseArtifact(text: string): { meta: Record<string, string | number | null>; body: string } {
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (!m) return { meta: {}, body: text };
  const meta: Record<string, string | number | null> = {};
  for (const line of m[1]!.split('\n')) {
    const i = line.indexOf(': ');
    if (i < 0) continue;
    const raw = line.slice(i + 2);
    meta[line.slice(0, i)] = raw === 'null' ? null : /^\d+$/.test(raw) ? Number(raw) : raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  return { meta, body: m[2]! };
}

/** Write `.jaggers/handover/turn_<n>_<id>.md` atomically; returns its path. */
export async function writeArtifact(jaggersDir: string, meta: HandoverMeta, body: string): Promise<string> {
  await ensurePrivateFolder(handoverDir(jaggersDir));
  const file = path.join(handoverDir(jaggersDir), `turn_${meta.turn}_${randomBytes(3).toString('hex')}.md`);
  const before = await mtimeOf(handoverDir(jaggersDir));
  await writeFileAtomic(file, renderArtifact(meta, body), { sync: true });
  await noteTurn(jaggersDir, file, meta, before);
  return file;
}

/** The first `bytes` of a file in the handover folder (which agents can write in too): its front matter. */
async function readHead(jaggersDir: string, file: string, bytes: number): Promise<string> {
  const r = await readConfined({ projectRoot: path.dirname(jaggersDir), jaggersDir }, file, { what: 'the handover folder', limit: bytes });
  return r.data.toString('utf8');
}

/**
 * The highest turn of each task, per handover folder: read from the files once per process (each file's
 * task from its head), then kept as this process writes artifacts. The supervisor is the one process that
 * writes them, so nothing else changes the folder behind it; a file it never saw is read on the next scan.
 */
const turnsByDir = new Map<string, { tasks: Map<string, number>; seen: Set<string>; mtimeMs: number }>();

const mtimeOf = (dir: string) =>
  stat(dir).then(
    (s) => s.mtimeMs,
    () => -1,
  );

async function scan(dir: string): Promise<{ tasks: Map<string, number>; seen: Set<string>; mtimeMs: number }> {
  let state = turnsByDir.get(dir);
  if (!state) turnsByDir.set(dir, (state = { tasks: new Map(), seen: new Set(), mtimeMs: -1 }));
  let names: string[] = [];
  state.mtimeMs = await mtimeOf(dir);
  try {
    names = await readdir(dir);
  } catch {
    return state;
  }
  for (const n of names) {
    if (state.seen.has(n)) continue;
    const m = /^turn_(\d+)_[0-9a-f]+\.md$/.exec(n);
    state.seen.add(n);
    if (!m) continue;
    const raw = /^task: (.+)$/m.exec(await readHead(path.dirname(dir), path.join(dir, n), 600).catch(() => ''))?.[1] ?? null;
    const task = raw?.startsWith('"') ? (JSON.parse(raw) as string) : raw;
    if (task !== null) state.tasks.set(task, Math.max(state.tasks.get(task) ?? 0, Number(m[1])));
  }
  return state;
}

/** The next turn number of a task: one more than the highest turn of its artifacts on disk. */
export async function nextTurn(jaggersDir: string, task: string): Promise<number> {
  const dir = handoverDir(jaggersDir);
  const known = turnsByDir.get(dir);
  // The folder changed since it was read (a file this process did not write): read the new names.
  const state = known && known.mtimeMs === (await mtimeOf(dir)) ? known : await scan(dir);
  return (state.tasks.get(task) ?? 0) + 1;
}

/** Note an artifact this process wrote, so the next turn of its task counts it without reading the folder. */
async function noteTurn(jaggersDir: string, file: string, meta: HandoverMeta, before: number): Promise<void> {
  const dir = handoverDir(jaggersDir);
  const state = turnsByDir.get(dir);
  if (!state) return;
  state.seen.add(path.basename(file));
  state.tasks.set(meta.task, Math.max(state.tasks.get(meta.task) ?? 0, meta.turn));
  // The folder as this write left it, unless something else had changed it before (then the next turn reads it).
  if (before === state.mtimeMs) state.mtimeMs = await mtimeOf(dir);
}
