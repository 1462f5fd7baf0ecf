// `jaggers mcp`: serve the MCP tools on stdio; `--print-config <cli>`: show how jaggers registers that
// server in an agent of that CLI (profile) or of that name (the team's agent, with its own terminal id).
import { MCP_FORMATS } from '../clis/kinds.js';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { mcpLaunch, type McpLaunch } from '../mcp/register.js';
import { binDir } from '../package-root.js';
import { listProfileNames, loadProfile } from '../profiles/load.js';

export interface McpConfigView {
  profile: string;
  agent: string;
  terminalId: string;
  /** null: the profile has no `mcp` section (or the agent has `"mcp": false`): the agent uses the commands. */
  registration: McpLaunch | null;
  how: string;
}

const PLACEHOLDER = 'jg-<terminal-id>';

export async function printConfig(ctx: Context, name: string): Promise<McpConfigView> {
  const project = await ctx.project().catch(() => null);
  const spec = project?.agents.find((a) => a.name === name);
  const profileName = spec?.profile ?? name;
  const profile = await loadProfile(profileName, ctx.jaggersDir).catch(async (e: unknown) => {
    if (spec || !(e instanceof JaggersError) || e.code !== 'E_PROFILE_UNKNOWN') throw e;
    const agents = project?.agents.map((a) => a.name) ?? [];
    throw new JaggersError(
      'E_PROFILE_UNKNOWN',
      `mcp --print-config: ${JSON.stringify(name)} is neither an agent of this project${agents.length ? ` (${agents.join(', ')})` : ''} nor a profile (${(await listProfileNames(ctx.jaggersDir)).join(', ')})`,
    );
  });
  let terminalId = PLACEHOLDER;
  if (spec) {
    const { readStored } = await import('../api/stored.js');
    const data = (() => {
      try {
        return readStored(ctx);
      } catch {
        return null;
      }
    })();
    terminalId = Object.values(data?.terminals ?? {}).find((t) => t.agent === spec.name && t.task === null)?.terminalId ?? PLACEHOLDER;
  }
  const socket = 'name' in ctx.server.socket ? ctx.server.socket.name : ctx.server.socket.path;
  const off = spec?.mcp === false;
  const registration = off
    ? null
    : mcpLaunch(profile.profile, { projectRoot: ctx.projectRoot, session: ctx.session, socket, binDir, terminalId, agent: spec?.name ?? name, task: null });
  const format = MCP_FORMATS[profile.profile.mcp?.via ?? 'config-file'];
  const how = off
    ? `agent ${name} has "mcp": false in jaggers.json: it uses the jaggers commands`
    : !registration
      ? `profile ${profileName} has no "mcp" section: its agents use the jaggers commands`
      : 'how' in format
        ? format.how
        : `a file under .jaggers/mcp/ named by ${[...(registration.args.length ? ['its command line'] : []), ...Object.keys(registration.env)].join(' and ')}`;
  return { profile: profileName, agent: spec?.name ?? name, terminalId, registration, how };
}

const shell = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function renderConfig(v: McpConfigView): string {
  const lines = [`${v.agent} (profile ${v.profile}): ${v.how}`];
  const r = v.registration;
  if (r) {
    if (r.args.length) lines.push('', 'arguments added to its command:', `  ${r.args.map(shell).join(' ')}`);
    for (const [k, x] of Object.entries(r.env)) lines.push('', `environment: ${k}=${x}`);
    for (const f of r.files) lines.push('', `file ${f.path}:`, f.content.trimEnd());
  }
  if (v.terminalId === PLACEHOLDER) lines.push('', `(${PLACEHOLDER} is the id of each agent's terminal, given when it starts)`);
  return `${lines.join('\n')}\n`;
}
