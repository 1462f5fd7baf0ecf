// How jaggers' MCP server is registered per process, in each CLI's own format (pure).
import { describe, expect, it } from 'vitest';
import { mcpLaunch } from '../../src/mcp/register.js';
import { ProfileSchema } from '../../src/profiles/schema.js';

const id = {
  projectRoot: '/p',
  session: 'jg',
  socket: 'sock',
  binDir: '/jaggers/bin',
  terminalId: 't-1',
  agent: 'opencode',
  task: 'task-1',
  node: '/usr/bin/node',
};

describe('mcpLaunch', () => {
  it("opencode-config: a file in opencode's own format, named by OPENCODE_CONFIG", () => {
    const profile = ProfileSchema.parse({ name: 'oc', command: 'opencode', mcp: { via: 'opencode-config', env: { OPENCODE_CONFIG: '{mcpConfig}' } } });
    const launch = mcpLaunch(profile, id)!;
    expect(launch.args).toEqual([]);
    expect(launch.env).toEqual({ OPENCODE_CONFIG: '/p/.jaggers/mcp/t-1.json' });
    expect(launch.files.map((f) => f.path)).toEqual(['/p/.jaggers/mcp/t-1.json']);
    const conf = JSON.parse(launch.files[0]!.content) as { mcp: { jaggers: Record<string, unknown> } };
    expect(Object.keys(conf)).toEqual(['mcp']);
    expect(conf.mcp.jaggers).toMatchObject({
      type: 'local',
      command: ['/usr/bin/node', '/jaggers/bin/jaggers.js', '--project', '/p', '--socket', 'sock', '--session', 'jg', 'mcp'],
      environment: { JAGGERS_TERMINAL_ID: 't-1', JAGGERS_AGENT: 'opencode', JAGGERS_TASK_ID: 'task-1' },
      enabled: true,
    });
  });

  it('config-file: the mcpServers format other CLIs read', () => {
    const profile = ProfileSchema.parse({ name: 'q', command: 'qwen', mcp: { via: 'config-file', args: ['--mcp-config', '{mcpConfig}'] } });
    const launch = mcpLaunch(profile, id)!;
    expect(launch.args).toEqual(['--mcp-config', '/p/.jaggers/mcp/t-1.json']);
    const conf = JSON.parse(launch.files[0]!.content) as { mcpServers: { jaggers: { command: string; env: Record<string, string> } } };
    expect(conf.mcpServers.jaggers.command).toBe('/usr/bin/node');
    expect(conf.mcpServers.jaggers.env.JAGGERS_TERMINAL_ID).toBe('t-1');
  });
});
