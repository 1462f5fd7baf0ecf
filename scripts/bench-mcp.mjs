#!/usr/bin/env node
// What registering `jaggers mcp` costs an agent: from spawn to the tools listed (what a CLI waits for
// at its start), and the server's memory, beside node's own start (`node -e ""`) in the same run.
// Medians of N runs (default 7): node scripts/bench-mcp.mjs [N]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'bin', 'jaggers.js');
const n = Number(process.argv[2] ?? 7);
const project = mkdtempSync(path.join(os.tmpdir(), 'jg-bench-mcp-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const nodeStart = [];
const toList = [];
const rss = [];
try {
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    execFileSync(process.execPath, ['-e', '']);
    nodeStart.push(performance.now() - t);
    t = performance.now();
    const transport = new StdioClientTransport({ command: process.execPath, args: [cli, '--project', project, 'mcp'], stderr: 'ignore' });
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    toList.push(performance.now() - t);
    if (tools.length !== 11) throw new Error(`expected 11 tools, got ${tools.length}`);
    const status = readFileSync(`/proc/${transport.pid}/status`, 'utf8');
    rss.push(Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024);
    await client.close();
  }
} finally {
  rmSync(project, { recursive: true, force: true });
}
const load = os.loadavg()[0].toFixed(1);
console.log(`runs ${n}, load ${load}`);
console.log(`node -e "" (reference)         p50 ${median(nodeStart).toFixed(0)} ms`);
console.log(`jaggers mcp: spawn to tools/list p50 ${median(toList).toFixed(0)} ms`);
console.log(`jaggers mcp: resident memory     p50 ${median(rss).toFixed(0)} MB`);
