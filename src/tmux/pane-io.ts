// The pane operations delivery and turns need, on one control connection: what `PaneIO` asks for.
import { capturePane, leaveMode, pasteText, sendKeys } from './commands.js';
import type { ControlClient } from './control-client.js';

export interface TmuxPaneIO {
  capture(paneId: string, opts?: { history?: number; ansi?: boolean }): Promise<string>;
  /**
   * Leave copy mode (or any mode) so typed text reaches the program, not the mode. One command that
   * needs no answer first: a command sent right after it (the capture before a paste) runs after it.
   */
  leaveMode(paneId: string): Promise<void>;
  /** Put text into a uniquely named buffer and paste it bracketed, deleting the buffer. */
  paste(paneId: string, text: string): Promise<void>;
  sendKeys(paneId: string, keys: readonly string[]): Promise<void>;
}

let bufferSeq = 0;

export function paneIO(c: ControlClient): TmuxPaneIO {
  return {
    capture: (paneId, opts) => capturePane(c, paneId, opts),
    leaveMode: (paneId) => leaveMode(c, paneId),
    async paste(paneId, text) {
      const name = `jaggers-${paneId.slice(1)}-${process.pid}-${++bufferSeq}`;
      await pasteText(c, name, text, paneId);
    },
    sendKeys: (paneId, keys) => sendKeys(c, paneId, keys),
  };
}
