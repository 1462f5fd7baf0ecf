// Telling a person that an agent waits for them or that a turn failed: a message on every attached
// tmux client, a mark on the window in the status line, and the project's own `notify` command.
import { spawn } from 'node:child_process';
import { displayMessage, humanClients, setWindowOption } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import type { Log } from '../logger.js';
import { noteAttention } from './publish.js';

export interface Notice {
  agent: string;
  terminalId: string | null;
  task: string | null;
  windowId: string;
  /** `waiting_input`, `turn-failed`, `exited`, `limited` (a usage limit), `stuck` (the watchdog). */
  state: string;
  reason: string;
}

export const NOTIFY_TIMEOUT_MS = 10_000;

/** The argv the `notify` setting runs: a string is a shell command line. */
export function notifyArgv(setting: string | string[]): string[] {
  return typeof setting === 'string' ? ['sh', '-c', setting] : setting;
}

export class Notifier {
  constructor(
    private readonly tmux: ControlClient,
    private readonly log: Log,
    private readonly setting: () => Promise<string | string[] | undefined>,
    private readonly emit: (n: Notice) => void,
  ) {}

  async notice(n: Notice): Promise<void> {
    this.log.info({ agent: n.agent, terminal: n.terminalId, task: n.task, state: n.state, reason: n.reason }, 'notice');
    this.emit(n);
    const text = `jaggers: ${n.agent} ${n.state === 'waiting_input' ? 'waits for you' : n.state}: ${n.reason}`.slice(0, 300);
    // A waiting agent's window is marked with its state (publishStatus); a failed turn marks it here.
    if (n.state !== 'waiting_input') {
      noteAttention(n.windowId, n.state);
      await setWindowOption(this.tmux, n.windowId, '@jaggers_attention', n.state).catch(() => {});
    }
    for (const client of await humanClients(this.tmux).catch(() => [])) await displayMessage(this.tmux, client, text).catch(() => {});
    const setting = await this.setting().catch(() => undefined);
    if (setting) await this.run(notifyArgv(setting), n);
  }

  private run(argv: string[], n: Notice): Promise<void> {
    return new Promise((resolve) => {
      const [cmd, ...args] = argv;
      const child = spawn(cmd!, args, {
        stdio: 'ignore',
        env: {
          ...process.env,
          JAGGERS_NOTIFY_AGENT: n.agent,
          JAGGERS_NOTIFY_STATE: n.state,
          JAGGERS_NOTIFY_REASON: n.reason,
          JAGGERS_NOTIFY_TERMINAL_ID: n.terminalId ?? '',
          JAGGERS_NOTIFY_TASK: n.task ?? '',
        },
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), NOTIFY_TIMEOUT_MS);
      child.on('error', (e) => {
        clearTimeout(timer);
        this.log.warn({ agent: n.agent, argv, err: e.message }, 'notify command could not start');
        resolve();
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        if (code !== 0) this.log.warn({ agent: n.agent, argv, code, signal }, 'notify command failed');
        resolve();
      });
    });
  }
}
