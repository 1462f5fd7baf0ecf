// `worktrees`, `diff`, `merge`, `discard`, `gc`: the agents' and jobs' git worktrees (issue 28), through
// the supervisor (it knows which agent or job works where and whether it works now); with no session
// running, on the registry's files (no agent runs then). Rendering is pure.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Isolation, WorktreeView } from '../agents/isolation.js';
import type { MergeResult, WorktreeDiff } from '../agents/worktrees/worktrees.js';
import { withApi } from '../api/connect.js';
import { startedHosts } from '../api/hosts.js';
import type { HealthView } from '../api/types.js';
import { liveOrStored } from '../api/live-or-stored.js';
import type { RegistryData } from '../api/stored.js';
import type { Context } from '../context.js';
import { givenAgent } from '../ids.js';
import { renderTable } from './render.js';

export type { WorktreeView };
/** What `diff` answers: the git layer's diff, and whose worktree it is (`host`: made on that host). */
export type DiffView = WorktreeDiff & { agent: string | null; job: string | null; host?: string };
/** What `merge` answers (`host`: merged there, into that host's checkout). */
export type MergeView = MergeResult & { name: string; committed: string | null; host?: string };

const enc = (x: string) => encodeURIComponent(x);

/** No session runs: the worktrees as the registry's files know them, no agent working in any. */
async function offline(ctx: Context, data: RegistryData): Promise<Isolation> {
  const { Isolation } = await import('../agents/isolation.js');
  return new Isolation({
    projectRoot: ctx.projectRoot,
    data: () => data,
    liveTerminals: () => [],
    stateOf: () => undefined,
    env: ctx.env,
    project: () => ctx.project(),
  });
}

/** From the supervisor, or (no session running) on the files. */
function either<T>(ctx: Context, live: () => Promise<T>, stored: (i: Isolation) => Promise<T>): Promise<T> {
  return liveOrStored(ctx, live, async (data) => stored(await offline(ctx, data)));
}

/**
 * Every worktree: this machine's, then (through the supervisor) those made on its hosts for their agents,
 * each with its `host` (docs/hosts.md). A host whose connection is not up is said to `unreached`: its
 * worktrees are not in the list.
 */
export async function worktrees(ctx: Context, unreached: (host: string, why: string) => void = () => {}): Promise<WorktreeView[]> {
  return either(
    ctx,
    () =>
      withApi(
        ctx,
        async (api) => {
          const list = await api.call<WorktreeView[]>('GET', '/v1/worktrees');
          if (startedHosts(ctx.jaggersDir).length > 0)
            for (const h of (await api.call<HealthView>('GET', '/v1/health')).hosts ?? [])
              if (h.state !== 'connected') unreached(h.name, `the connection is ${h.detail}`);
          return list;
        },
        { readOnly: true },
      ),
    (i) => i.list(),
  );
}

export async function diff(ctx: Context, x: string, o: { patch?: boolean; uncommitted?: boolean }): Promise<DiffView> {
  givenAgent('diff', 'agent, job or worktree', x);
  const q = `?patch=${o.patch ? 1 : 0}&uncommitted=${o.uncommitted ? 1 : 0}`;
  return either(
    ctx,
    () => withApi(ctx, (api) => api.call<DiffView>('GET', `/v1/worktrees/${enc(x)}/diff${q}`), { readOnly: true }),
    (i) => i.diff(x, o),
  );
}

export async function merge(ctx: Context, x: string, o: { mode?: 'merge' | 'squash' | 'rebase'; into?: string; message?: string }): Promise<MergeView> {
  givenAgent('merge', 'agent, job or worktree', x);
  return either(
    ctx,
    () => withApi(ctx, (api) => api.call<MergeView>('POST', `/v1/worktrees/${enc(x)}/merge`, o)),
    (i) => i.merge(x, o),
  );
}

export async function discard(ctx: Context, x: string, force: boolean): Promise<{ name: string; removed: boolean; branchDeleted: boolean }> {
  givenAgent('discard', 'agent, job or worktree', x);
  return either(
    ctx,
    () => withApi(ctx, (api) => api.call('POST', `/v1/worktrees/${enc(x)}/discard`, { force })),
    (i) => i.discard(x, force),
  );
}

export async function gc(
  ctx: Context,
  force: boolean,
): Promise<{ removed: { name: string; host?: string }[]; kept: { name: string; why: string | null; host?: string }[] }> {
  return either(
    ctx,
    () => withApi(ctx, (api) => api.call('POST', '/v1/worktrees/gc', { force })),
    async (i) => {
      const { parseProjectFile } = await import('../project/project-file.js');
      const file = path.join(ctx.projectRoot, 'jaggers.json');
      const text = await readFile(file, 'utf8').catch(() => null);
      return i.gc(force, text === null ? null : await parseProjectFile(text, file));
    },
  );
}

const short = (sha: string | null | undefined) => (sha ? sha.slice(0, 9) : '-');

export function renderWorktrees(list: WorktreeView[]): string {
  if (list.length === 0) return 'no worktrees\n';
  // A HOST column once a host's worktree is among them (`-`: this machine), as `status` has.
  const hosts = list.some((w) => w.host !== undefined);
  const rows = renderTable(
    ['WORKTREE', 'FOR', ...(hosts ? ['HOST'] : []), 'BRANCH', 'BASE', 'AHEAD', 'CHANGES', 'MERGED', 'IN USE'],
    list.map((w) => {
      const s = w.status;
      const d = s?.dirty;
      const changes = !s
        ? (w.problem ?? '?')
        : s.clean
          ? 'clean'
          : `${d!.staged + d!.unstaged} changed, ${d!.untracked} new${d!.conflicted ? `, ${d!.conflicted} conflicted` : ''}`;
      return [
        w.name,
        w.agent ?? w.job ?? '-',
        ...(hosts ? [w.host ?? '-'] : []),
        w.branch ?? '(detached)',
        s ? `${s.baseBranch ?? ''}@${short(s.base)}` : '-',
        s ? String(s.ahead) : '-',
        changes,
        s ? (s.merged ? 'yes' : 'no') : '-',
        w.inUse ? 'yes' : 'no',
      ];
    }),
  );
  return rows;
}

export function renderDiff(d: DiffView): string {
  const out: string[] = [];
  const who = `${d.agent ?? d.job ?? d.name}${d.host ? ` on host ${d.host}` : ''}`;
  out.push(
    `${who}: worktree ${d.name}, ${d.commits.length} commit${d.commits.length === 1 ? '' : 's'} since ${short(d.base)}${d.uncommitted ? ' (and its uncommitted changes)' : ''}`,
  );
  for (const c of d.commits) out.push(`  ${short(c.sha)} ${c.subject}`);
  let added = 0;
  let removed = 0;
  for (const f of d.files) {
    added += f.added ?? 0;
    removed += f.removed ?? 0;
    const n = f.binary || f.added === null ? 'binary' : `+${f.added} -${f.removed}`;
    out.push(`  ${n.padEnd(12)} ${f.oldPath ? `${f.oldPath} -> ` : ''}${f.path}`);
  }
  out.push(`${d.files.length} file${d.files.length === 1 ? '' : 's'} changed, +${added} -${removed}`);
  return `${out.join('\n')}\n${d.patch ? `\n${d.patch}${d.patch.endsWith('\n') ? '' : '\n'}` : ''}`;
}

export function renderMerge(m: MergeView): string {
  if (m.status === 'up-to-date') return `${m.name}: nothing to merge: ${m.into} has all of it already\n`;
  return `${m.name}: ${m.commits} commit${m.commits === 1 ? '' : 's'} merged into ${m.into}${m.host ? ` on host ${m.host}` : ''} (${m.mode}): ${short(m.from)} -> ${short(m.to)}${m.moved === 'fast-forward' ? ', your checkout moved with it' : ''}\n`;
}
