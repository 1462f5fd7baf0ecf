// The input box: key events in, buffer edits and commands out. Models two ways real TUIs
// swallow an Enter: a paste-burst window (gemini, codex) and a completion picker (`/`, `@`).
import type { KeyEvent } from './input-parser.js';
import { dropLastCodePoint } from './text.js';

export interface EditorOptions {
  pasteBurstMs: number;
  picker: boolean;
}

/** What a key asks of the agent beyond editing the buffer. */
export type EditorCommand = { type: 'none' } | { type: 'submit'; text: string } | { type: 'exit' } | { type: 'esc' };

const NONE: EditorCommand = { type: 'none' };

export class Editor {
  private parts: string[] = [];
  private cached = '';
  private lastPasteEnd = Number.NEGATIVE_INFINITY;
  private pickerDismissed = false;

  constructor(private readonly options: EditorOptions) {}

  /** The buffer; large pastes are kept as parts and joined lazily. */
  get text(): string {
    if (this.parts.length > 0) {
      this.cached += this.parts.join('');
      this.parts = [];
    }
    return this.cached;
  }

  get isEmpty(): boolean {
    return this.cached === '' && this.parts.every((p) => p === '');
  }

  /** The completion picker shows while the buffer starts with `/` or `@`, until an Enter closes it. */
  get pickerOpen(): boolean {
    if (!this.options.picker || this.pickerDismissed) return false;
    const head = this.cached !== '' ? this.cached : (this.parts.find((p) => p !== '') ?? '');
    return head.startsWith('/') || head.startsWith('@');
  }

  clear(): void {
    this.parts = [];
    this.cached = '';
    this.pickerDismissed = false;
  }

  handle(event: KeyEvent, now: number): EditorCommand {
    switch (event.type) {
      case 'text':
        this.insert(event.text);
        return NONE;
      case 'paste':
        this.insert(event.text);
        this.lastPasteEnd = now;
        return NONE;
      case 'newline':
        this.insert('\n');
        return NONE;
      case 'backspace':
        this.cached = dropLastCodePoint(this.text);
        this.pickerDismissed = false;
        return NONE;
      case 'enter':
        return this.enter(now);
      case 'ctrl-c':
        if (this.isEmpty) return { type: 'exit' };
        this.clear();
        return NONE;
      case 'ctrl-d':
        return { type: 'exit' };
      case 'esc':
        return { type: 'esc' };
      case 'up':
      case 'down':
        return NONE;
    }
  }

  private enter(now: number): EditorCommand {
    if (this.options.pasteBurstMs > 0 && now - this.lastPasteEnd <= this.options.pasteBurstMs) {
      this.insert('\n');
      return NONE;
    }
    if (this.pickerOpen) {
      this.pickerDismissed = true;
      return NONE;
    }
    const text = this.text;
    if (text.trim() === '') return NONE;
    this.clear();
    return { type: 'submit', text };
  }

  private insert(text: string): void {
    if (text === '') return;
    this.parts.push(text);
    this.pickerDismissed = false;
  }
}
