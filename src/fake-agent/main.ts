// Entry of `jaggers-fake-agent`: the only place that picks an exit code before the TUI runs.
// Usage errors exit 2, session errors exit 1 (claude's wording), everything else runs the TUI.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs, USAGE, VERSION } from './args.js';
import { openSession } from './open-session.js';
import type { Rule } from './rules.js';
import { parseRules } from './rules.js';
import { formatSessionList, listSessions } from './session-store.js';
import { runTui } from './tui.js';
import { headlessTurn } from './headless.js';
import { loadHooks } from './hooks.js';

type Loaded<T> = { ok: true; value: T } | { ok: false; message: string };

function loadRules(file: string | undefined): Loaded<Rule[]> {
  if (file === undefined) return { ok: true, value: [] };
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    return { ok: false, message: `--rules ${file}: ${(e as Error).message}` };
  }
  const parsed = parseRules(data, `--rules ${file}`);
  return parsed.ok ? { ok: true, value: parsed.rules } : parsed;
}

function main(argv: readonly string[]): number | 'running' {
  const parsed = parseArgs(argv);
  const home = process.env.HOME || os.homedir();
  switch (parsed.kind) {
    case 'version':
      process.stdout.write(`fake-agent ${VERSION}\n`);
      return 0;
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case 'error':
      process.stderr.write(`fake-agent: ${parsed.message}\n`);
      return 2;
    case 'list-sessions': {
      const sessions = listSessions(home);
      process.stdout.write(sessions.length > 0 ? formatSessionList(sessions, Date.now()) : 'No sessions found.\n');
      return 0;
    }
    case 'run':
      break;
  }
  const { options } = parsed;
  const rules = loadRules(options.rulesFile);
  if (!rules.ok) {
    process.stderr.write(`fake-agent: ${rules.message}\n`);
    return 2;
  }
  const hooks = options.hooksFile !== undefined && !options.noHooks ? loadHooks(options.hooksFile) : null;
  if (hooks && !hooks.ok) {
    process.stderr.write(`fake-agent: ${hooks.message}\n`);
    return 2;
  }
  const cwd = process.cwd();
  const reply = { replies: options.replies, rules: rules.value, agentName: process.env.JAGGERS_AGENT || undefined };
  const opened = openSession(options, { home, cwd, now: new Date(), newId: randomUUID });
  if (!opened.ok) {
    process.stderr.write(`${opened.message}\n`);
    return 1;
  }
  if (options.print !== undefined) {
    process.stdout.write(`${headlessTurn(opened.session, options.print, reply, home)}\n`);
    return 0;
  }
  try {
    runTui({ ...options, ...reply, cwd }, opened.session, {
      home,
      pid: process.pid,
      traceFile: process.env.FAKE_AGENT_TRACE || undefined,
      promptsFile: process.env.FAKE_AGENT_PROMPTS || undefined,
      hooks: hooks?.hooks,
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
    });
  } catch (e) {
    // e.g. HOME is not writable, so the session or state file cannot be written
    process.stdout.write('\x1b[?2004l');
    process.stderr.write(`fake-agent: ${(e as Error).message}\n`);
    process.exit(1);
  }
  return 'running';
}

const result = main(process.argv.slice(2));
if (result !== 'running') process.exitCode = result;
