import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../fs/durable.js';

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
  await mkdir(handoverDir(jaggersDir), { recursive: true });
  const file = path.join(handoverDir(jaggersDir), `turn_${meta.turn}_${randomBytes(3).toString('hex')}.md`);
  await writeFileAtomic(file, renderArtifact(meta, body), { sync: true });
  return file;
}

/** The first `bytes` of a file: the front matter, without reading a large body. */
async function readHead(file: string, bytes: number): Promise<string> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/**
 * The task each handover file belongs to, by folder and file name: a file is written whole under its
 * final name (a rename) and never renamed, so its task is read once per process, not on every turn.
 */
const taskOfFile = new Map<string, Map<string, string | null>>();

/** The next turn number of a task: one more than the highest turn of its artifacts on disk. */
export async function nextTurn(jaggersDir: string, task: string): Promise<number> {
  const dir = handoverDir(jaggersDir);
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch {
    return 1;
  }
  let known = taskOfFile.get(dir);
  if (!known) taskOfFile.set(dir, (known = new Map()));
  let max = 0;
  for (const n of names) {
    const m = /^turn_(\d+)_[0-9a-f]+\.md$/.exec(n);
    if (!m) continue;
    let t = known.get(n);
    if (t === undefined) {
      const raw = /^task: (.+)$/m.exec(await readHead(path.join(dir, n), 600))?.[1] ?? null;
      t = raw?.startsWith('"') ? (JSON.parse(raw) as string) : raw;
      known.set(n, t);
    }
    if (t === task) max = Math.max(max, Number(m[1]));
  }
  return max + 1;
}
