// The terminal edge: raw stdin through the parser into the agent, throttled full-screen redraws,
// the state file, the benchmark trace, signals and exit.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { AgentConfig, AgentIO } from './agent.js';
import { Agent } from './agent.js';
import { runHook, type HookCommands } from './hooks.js';
import { InputParser } from './input-parser.js';
import { McpTools } from './mcp-client.js';
import { renderScreen } from './render.js';
import type { ReadFile } from './rules.js';
import type { AgentStatus } from './runtime-files.js';
import { appendStateFileTrace, appendTrace, removeStateFile, writeStateFile } from './runtime-files.js';
import type { SessionRecord } from './session-store.js';
import { writeSession } from './session-store.js';
import { writeClaudeTranscript } from './claude-transcript.js';
import { writeWorkFile } from './writes.js';

export interface TuiContext {
  home: string;
  pid: number;
  /** FAKE_AGENT_TRACE: a file that gets one JSON line per drawn state change. */
  traceFile: string | undefined;
  /** FAKE_AGENT_PROMPTS: a file that gets one JSON line per prompt submitted (`{t, pid, agent, prompt}`), for tests that count deliveries. */
  promptsFile?: string | undefined;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  /** `--hooks`' commands (none with `--no-hooks`). */
  hooks?: HookCommands | undefined;
}

/** Redraws for typing and the spinner come at most this often; status changes are drawn at once. */
const FRAME_MS = 16;
/** How long a lone ESC waits for the rest of an escape sequence before it counts as the Escape key. */
const ESC_WAIT_MS = 30;
const BRACKETED_PASTE_ON = '\x1b[?2004h';
const BRACKETED_PASTE_OFF = '\x1b[?2004l';

export function runTui(config: AgentConfig, session: SessionRecord, ctx: TuiContext): void {
  const { stdin, stdout, stderr, home, pid } = ctx;
  let exiting = false;
  let lastDrawn = Number.NEGATIVE_INFINITY;
  let drawTimer: NodeJS.Timeout | undefined;
  let tracedStatus: AgentStatus | undefined;

  const write = (text: string): void => {
    try {
      stdout.write(text);
    } catch {
      // the terminal went away; the hangup signal or end of input follows
    }
  };

  const draw = (): void => {
    if (drawTimer) clearTimeout(drawTimer);
    drawTimer = undefined;
    const size = { rows: stdout.rows || 50, cols: stdout.columns || 200 };
    write(renderScreen(agent.view(), size, Date.now()));
    lastDrawn = performance.now();
    if (ctx.traceFile !== undefined && agent.status !== tracedStatus) {
      tracedStatus = agent.status;
      appendTrace(ctx.traceFile, pid, agent.status);
    }
  };

  const exit = (code: number): void => {
    if (exiting) return;
    exiting = true;
    write(`${BRACKETED_PASTE_OFF}\r\n`);
    removeStateFile(home, pid);
    process.exit(code);
  };

  const io: AgentIO = {
    now: () => Date.now(),
    setTimer: (fn, ms) => {
      const t = setTimeout(fn, ms);
      return () => clearTimeout(t);
    },
    readFile: promptFileReader(config.cwd),
    writeFile: writeWorkFile,
    newSessionId: () => randomUUID(),
    saveSession: (s) => {
      writeSession(home, s);
      if (config.claudeTranscript) writeClaudeTranscript(home, s);
    },
    promptSubmitted: (prompt) => {
      if (ctx.promptsFile) fs.appendFileSync(ctx.promptsFile, `${JSON.stringify({ t: Date.now(), pid, agent: process.env.JAGGERS_AGENT ?? null, prompt })}\n`);
    },
    statusChanged: (status, sessionId) => {
      writeStateFile(home, { pid, sessionId, status, updatedAt: Date.now() });
      if (ctx.traceFile !== undefined) appendStateFileTrace(ctx.traceFile, pid, status);
    },
    redraw: (urgent) => {
      if (exiting) return;
      if (urgent) draw();
      else drawTimer ??= setTimeout(draw, Math.max(0, FRAME_MS - (performance.now() - lastDrawn)));
    },
    exit,
    crash: (message) => {
      exiting = true;
      stderr.write(`\r\n${message}\n`);
      process.exit(3);
    },
  };
  if (ctx.hooks) {
    const hooks = ctx.hooks;
    io.hook = (event, payload) => runHook(hooks, event, payload);
  }
  if (config.mcpConfig) {
    const tools = new McpTools(config.mcpConfig);
    io.callTool = (tool, args) => tools.call(tool, args);
  }
  const agent = new Agent(config, io, session);

  const parser = new InputParser();
  const decoder = new StringDecoder('utf8');
  let escTimer: NodeJS.Timeout | undefined;
  const deliver = (events: ReturnType<InputParser['feed']>): void => {
    for (const event of events) {
      if (exiting) return;
      agent.handleKey(event);
    }
  };
  stdin.on('data', (chunk: Buffer) => {
    if (escTimer) clearTimeout(escTimer);
    deliver(parser.feed(decoder.write(chunk)));
    if (parser.hasPending) escTimer = setTimeout(() => deliver(parser.flushPending()), ESC_WAIT_MS);
  });
  stdin.on('end', () => exit(0));
  stdin.on('error', () => exit(0)); // a terminal that goes away may say EIO instead of end
  stdout.on('error', () => exit(0));
  stdout.on('resize', () => io.redraw(true));
  for (const signal of ['SIGHUP', 'SIGTERM', 'SIGINT'] as const) process.on(signal, () => exit(0));

  if (stdin.isTTY) stdin.setRawMode(true);
  stdin.resume();
  write(BRACKETED_PASTE_ON);
  agent.start();
}

/** A path named in a prompt, relative to the agent's folder or absolute, read if it is a regular file. */
function promptFileReader(cwd: string): ReadFile {
  return (p) => {
    try {
      const full = path.resolve(cwd, p);
      if (!fs.statSync(full).isFile()) return undefined;
      return fs.readFileSync(full);
    } catch {
      return undefined;
    }
  };
}
