import stripAnsi from 'strip-ansi';
import { regexOf } from '../detect/classify.js';

const RAW_KEEP = 4096;
/** Text kept from the end of a pane's output, so busy text split between two chunks is still found. */
const TAIL_KEEP = 64;

/** A pane's latest output: about RAW_KEEP characters for classification, and its end for busy text. */
export class OutputTail {
  /** The latest output, as it came (joined only when a screen is classified). */
  private raw: string[] = [];
  private rawLength = 0;
  private tail = '';
  /** text() until the next push or reset. */
  private plain: string | null = null;

  push(text: string): void {
    this.raw.push(text);
    this.rawLength += text.length;
    this.plain = null;
    while (this.raw.length > 1 && this.rawLength - this.raw[0]!.length >= RAW_KEEP) this.rawLength -= this.raw.shift()!.length;
  }

  /** The pane's latest output (about RAW_KEEP characters), escape sequences removed. */
  text(): string {
    return (this.plain ??= stripAnsi(this.raw.join('').slice(-RAW_KEEP)));
  }

  /** Whether this output (just pushed), with the end of the output before it, holds text that says busy. */
  saysBusy(text: string, patterns: readonly string[]): boolean {
    if (patterns.length === 0) return false;
    const plain = stripAnsi(text);
    const joined = this.tail + plain;
    const from = this.tail.length;
    this.tail = joined.slice(-TAIL_KEEP);
    for (const p of patterns) {
      const re = regexOf(p);
      const m = re.exec(joined);
      // A match that ends inside the earlier text is the previous frame's: look at the new text alone.
      if (m && m.index + m[0].length > from) return true;
      if (m && re.test(plain)) return true;
    }
    return false;
  }

  /** The pane runs a new program: its old output says nothing of it. */
  reset(): void {
    this.raw = [];
    this.rawLength = 0;
    this.tail = '';
    this.plain = null;
  }
}
