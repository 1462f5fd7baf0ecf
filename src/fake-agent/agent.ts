// The agent's behaviour: status, turns, special prompts, the permission menu and sessions.
// Every side effect goes through AgentIO, so tests drive it with a fake clock and no terminal.
import { Editor } from './editor.js';
import type { KeyEvent } from './input-parser.js';
import { toolCallIn } from './mcp-client.js';
import type { ScreenView, TranscriptEntry } from './render.js';
import { SELECT_CHOICES, SPINNER_INTERVAL_MS } from './render.js';
import type { ReplyMode } from './reply.js';
import { frameReply, replyBody } from './reply.js';
import type { Digest, ReadFile, Rule } from './rules.js';
import { digest, namedFile, promptPreview } from './rules.js';
import type { AgentStatus } from './runtime-files.js';
import type { SessionRecord } from './session-store.js';
import { newSession } from './session-store.js';
import { limitIn } from './limit-line.js';
import { firstLine, takeCodePoints } from './text.js';
import { applyWrites, writesIn } from './writes.js';

export interface AgentIO {
  /** Wall-clock milliseconds. */
  now(): number;
  /** Runs `fn` once after `ms`; returns a function that cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
  readFile: ReadFile;
  newSessionId(): string;
  saveSession(session: SessionRecord): void;
  /** Every prompt submitted, whole (the session keeps a preview). */
  promptSubmitted?(prompt: string): void;
  /** The status or the session id changed (the state file is rewritten). */
  statusChanged(status: AgentStatus, sessionId: string): void;
  /** The screen changed; `urgent` for status changes, which are drawn at once. */
  redraw(urgent: boolean): void;
  /** Clean exit: the state file goes, the terminal modes are restored. */
  exit(code: number): void;
  /** `/crash`: print the message and die with code 3, leaving everything as it is. */
  crash(message: string): void;
  /** Run the `--hooks` command of an event (waited for, as claude waits for its hooks). Absent: no hooks. */
  hook?(event: string, payload: Record<string, unknown>): void;
  /** Write a file (`write:` lines; the path is checked already). Absent: `write:` lines are not carried out. */
  writeFile?(full: string, text: string): void;
  /** Call an MCP tool (`--mcp-config`); the reply's lines. Absent: `mcp:` lines are not tool calls. */
  callTool?(tool: string, args: Record<string, unknown>): Promise<string[]>;
}

export interface AgentConfig {
  /** `--claude-transcript`: the session is also written as claude's transcript, with token usage. */
  claudeTranscript?: boolean;
  bootMs: number;
  thinkMs: number;
  pasteBurstMs: number;
  picker: boolean;
  rules: readonly Rule[];
  cwd: string;
  replies: ReplyMode;
  /** `JAGGERS_AGENT`, the work replies' hint at the agent's role. */
  agentName: string | undefined;
  /** `--mcp-config`: the MCP servers `mcp:` lines call. */
  mcpConfig?: string | undefined;
}

interface Turn {
  prompt: string;
  digest: Digest;
  k: number;
  startedAt: number;
  needsApproval: boolean;
  /** `/trust`: a menu without numbers (claude 2.1.330's trust dialog): the highlighted item, moved with ↑/↓. */
  select?: number;
  cancelTimer: (() => void) | undefined;
}

export class Agent {
  status: AgentStatus = 'starting';
  private transcript: TranscriptEntry[] = [];
  private readonly editor: Editor;
  private thinkMs: number;
  /** The limit lines already shown: each is shown once (after its reset the service answers again), so a cut turn run again gets its reply. */
  private readonly limitsShown = new Set<string>();
  private turn: Turn | undefined;
  private stopSpinner: (() => void) | undefined;

  constructor(
    private readonly config: AgentConfig,
    private readonly io: AgentIO,
    private session: SessionRecord,
  ) {
    this.editor = new Editor({ pasteBurstMs: config.pasteBurstMs, picker: config.picker });
    this.thinkMs = config.thinkMs;
    for (const t of session.turns) {
      this.transcript.push({ kind: 'prompt', text: t.prompt }, { kind: 'reply', lines: t.reply.split('\n') }, { kind: 'gap' });
    }
  }

  get sessionId(): string {
    return this.session.id;
  }

  start(): void {
    this.io.saveSession(this.session);
    this.sessionStarted('startup');
    if (this.config.bootMs > 0) {
      this.setStatus('starting');
      this.io.setTimer(() => this.setStatus('idle'), this.config.bootMs);
    } else {
      this.setStatus('idle');
    }
  }

  view(): ScreenView {
    return {
      status: this.status,
      sessionId: this.session.id,
      cwd: this.config.cwd,
      transcript: this.transcript,
      busySince: this.turn?.startedAt,
      input: this.editor.text,
      picker: this.editor.pickerOpen,
      select: this.turn?.select,
    };
  }

  handleKey(event: KeyEvent): void {
    switch (this.status) {
      case 'starting':
        return; // a cold TUI drops what is typed before it is ready
      case 'waiting':
        return this.handleMenuKey(event);
      case 'busy':
        if (event.type === 'esc' || event.type === 'ctrl-c') return this.finish(['Interrupted.'], false);
        if (event.type === 'enter') return; // the prompt waits in the box until the turn ends
        break;
      case 'idle':
        break;
    }
    const command = this.editor.handle(event, this.io.now());
    if (command.type === 'submit') this.submit(command.text);
    else if (command.type === 'exit') this.io.exit(0);
    this.io.redraw(false);
  }

  private handleMenuKey(event: KeyEvent): void {
    const turn = this.turn;
    if (turn?.select !== undefined) {
      if (event.type === 'up' || event.type === 'down') {
        turn.select = Math.max(0, Math.min(SELECT_CHOICES.length - 1, turn.select + (event.type === 'down' ? 1 : -1)));
        return this.io.redraw(false);
      }
      if (event.type === 'enter') return this.finish([turn.select === 0 ? 'trusted' : 'not trusted']);
      if (event.type === 'esc' || event.type === 'ctrl-c') return this.finish(['not trusted']);
      return;
    }
    const key = event.type === 'text' ? event.text.trim().charAt(0).toLowerCase() : event.type;
    if (key === '1' || key === 'y' || key === 'enter') this.finish([...this.turnReply(), 'approved']);
    else if (key === '2' || key === 'n' || key === 'esc' || key === 'ctrl-c') this.finish([...this.turnReply(), 'denied'], false);
    else if (key === 'ctrl-d') this.io.exit(0);
  }

  private submit(prompt: string): void {
    const command = prompt.trim();
    if (command === '/crash') return this.io.crash('fake agent crashed');
    if (command === '/quit' || command === '/exit') return this.io.exit(0);
    if (command === '/clear') return this.fork();

    this.io.promptSubmitted?.(prompt);
    this.io.hook?.('UserPromptSubmit', { session_id: this.session.id, cwd: this.config.cwd, prompt });
    const turn: Turn = {
      prompt,
      digest: digest(prompt),
      k: this.session.turns.length + 1,
      startedAt: this.io.now(),
      needsApproval: command === '/menu' || command === '/trust' || prompt.includes('needs-approval') || this.namedFileAsks(prompt),
      ...(command === '/trust' ? { select: 0 } : {}),
      cancelTimer: undefined,
    };
    this.turn = turn;
    this.transcript.push({ kind: 'prompt', text: promptPreview(prompt) });
    const thinkMs = this.thinkMs;
    const sleep = /^\/sleep\s+(\d{1,9})$/.exec(command);
    if (sleep) this.thinkMs = Number(sleep[1]);
    const call = this.io.callTool ? this.toolCall(prompt) : undefined;
    if (call) {
      const end = (lines: string[]) => (this.turn === turn ? this.finish(lines) : undefined);
      if ('error' in call) turn.cancelTimer = this.io.setTimer(() => end([call.error]), thinkMs);
      else this.io.callTool!(call.tool, call.args).then(end, (e: unknown) => end([`mcp ${call.tool} failed: ${e instanceof Error ? e.message : String(e)}`]));
    } else if (command !== '/hang') {
      const limit = this.limitLine(prompt);
      const done = (): void => (limit ? this.hitLimit(limit) : turn.needsApproval ? this.askPermission() : this.finish(this.turnReply()));
      turn.cancelTimer = this.io.setTimer(done, thinkMs);
    }
    this.setStatus('busy');
    this.spin();
  }

  /** An `mcp: <tool> {json}` line in the prompt, else in the file it names. */
  private toolCall(prompt: string): ReturnType<typeof toolCallIn> {
    const file = namedFile(prompt, this.io.readFile);
    return toolCallIn(prompt) ?? (file ? toolCallIn(file.content.toString('utf8')) : undefined);
  }

  /** A pointer prompt to a file that asks for approval (`needs-approval` in it) opens the menu too. */
  private namedFileAsks(prompt: string): boolean {
    return namedFile(prompt, this.io.readFile)?.content.includes('needs-approval') ?? false;
  }

  /** The rule-chosen reply for the current turn; special prompts answer for themselves. */
  private turnReply(): string[] {
    const prompt = this.turn?.prompt ?? '';
    const command = prompt.trim();
    if (command === '/history') {
      const lines = this.session.turns.map((t, i) => `${i + 1}. ${t.prompt}`);
      return lines.length > 0 ? lines : ['(no prompts yet)'];
    }
    if (/^\/sleep(\s|$)/.test(command)) {
      return /^\/sleep\s+\d{1,9}$/.test(command) ? [`think time set to ${this.thinkMs} ms`] : ['usage: /sleep <ms>'];
    }
    return [...this.writes(prompt), ...replyBody(prompt, this.config, this.io.readFile)];
  }

  /** A `limit:` line in the prompt, else in the file it names: the turn ends at a usage limit (its screen line), the first time it is asked. */
  private limitLine(prompt: string): string | undefined {
    const file = namedFile(prompt, this.io.readFile);
    const agent = this.config.agentName;
    const line = limitIn(prompt, agent) ?? (file ? limitIn(file.content.toString('utf8'), agent) : undefined);
    if (line === undefined || this.limitsShown.has(line)) return undefined;
    this.limitsShown.add(line);
    return line;
  }

  /** `write:` lines in the prompt, else in the file it names, carried out: the reply's first lines. */
  private writes(prompt: string): string[] {
    if (!this.io.writeFile) return [];
    let asked = writesIn(prompt);
    if (asked.length === 0) {
      const file = namedFile(prompt, this.io.readFile);
      if (file) asked = writesIn(file.content.toString('utf8'));
    }
    return applyWrites(asked, this.config.cwd, this.io.writeFile);
  }

  /**
   * The turn stops at a usage limit: the limit's line is drawn where the reply would be, under the turn's
   * summary nothing else (the input box again), as claude ends idle with its limit line.
   */
  private hitLimit(line: string): void {
    const turn = this.turn;
    if (!turn) return;
    turn.cancelTimer?.();
    this.turn = undefined;
    this.transcript.push({ kind: 'reply', lines: [line] }, { kind: 'gap' });
    this.io.hook?.('Stop', { session_id: this.session.id, cwd: this.config.cwd, last_assistant_message: line });
    this.setStatus('idle');
  }

  /** The permission menu opens: the PermissionRequest hook first, as claude fires it. */
  private askPermission(): void {
    this.io.hook?.('PermissionRequest', { session_id: this.session.id, cwd: this.config.cwd, tool_name: 'Shell', message: 'Allow execution of [Shell]?' });
    this.setStatus('waiting');
  }

  private sessionStarted(source: string): void {
    this.io.hook?.('SessionStart', { session_id: this.session.id, cwd: this.config.cwd, source });
  }

  /**
   * Ends the current turn with `body`, framed as the reply mode says (receipt: turn header, hash and
   * nonces). `stop`: the Stop hook fires with the reply; not after Esc or a denied permission, where
   * real CLIs fire no end-of-turn event either (REAL-CLIS.md, traps).
   */
  private finish(body: readonly string[], stop = true): void {
    const turn = this.turn;
    if (!turn) return;
    turn.cancelTimer?.();
    this.turn = undefined;
    const lines = frameReply(this.config.replies, { k: turn.k, sessionId: this.session.id, prompt: turn.prompt, digest: turn.digest }, body);
    this.transcript.push({ kind: 'reply', lines }, { kind: 'worked', ms: this.io.now() - turn.startedAt }, { kind: 'gap' });
    const turns = [...this.session.turns, { prompt: promptPreview(turn.prompt), ...turn.digest, reply: lines.join('\n') }];
    const title = this.session.turns.length === 0 ? takeCodePoints(firstLine(turn.prompt), 40) : this.session.title;
    this.session = { ...this.session, turns, title, updated: new Date(this.io.now()).toISOString() };
    this.io.saveSession(this.session);
    if (stop) this.io.hook?.('Stop', { session_id: this.session.id, cwd: this.config.cwd, last_assistant_message: lines.join('\n') });
    this.setStatus('idle');
  }

  /** `/clear`: a new session id with an empty conversation; the old session stays on disk. */
  private fork(): void {
    this.session = newSession(this.io.newSessionId(), this.config.cwd, new Date(this.io.now()));
    this.transcript = [];
    this.io.saveSession(this.session);
    this.sessionStarted('clear');
    this.io.redraw(true);
    this.io.statusChanged(this.status, this.session.id);
  }

  private spin(): void {
    this.stopSpinner?.();
    const tick = (): void => {
      if (this.status !== 'busy') return;
      this.io.redraw(false);
      this.stopSpinner = this.io.setTimer(tick, SPINNER_INTERVAL_MS);
    };
    this.stopSpinner = this.io.setTimer(tick, SPINNER_INTERVAL_MS);
  }

  private setStatus(status: AgentStatus): void {
    if (status !== 'busy') {
      this.stopSpinner?.();
      this.stopSpinner = undefined;
    }
    this.status = status;
    this.io.redraw(true);
    this.io.statusChanged(status, this.session.id);
  }
}
