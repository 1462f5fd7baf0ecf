// What delivery needs from the rest of jaggers, as narrow interfaces: the live status of a pane (the
// supervisor's watcher provides it) and a few pane operations (tmux provides them).

export interface PaneStatusSource {
  /** The pane's public status now, or undefined when it is not watched. */
  status(paneId: string): string | undefined;
  /** Every status change of any pane, with the rule that decided it where known. Returns the function that unsubscribes. */
  onChange(l: (c: { pane: { paneId: string }; status: string; rule?: string | null }) => void): () => void;
  /** Every new screen (visible area) of any pane, as captured for classification. */
  onScreen(l: (paneId: string, screen: string) => void): () => void;
  /** The last screen captured for classification, when the source keeps it (to say what a waiting agent asks). */
  lastScreen?(paneId: string): string | null;
  /**
   * How long (ms) the screen may still lag behind a turn end a hook reported (0: it does not), where the
   * source knows: a prompt typed into a screen still drawn busy may be dropped.
   */
  screenBehind?(paneId: string): number;
  /** Tell the pane's machine a prompt went in; `screenBefore`: the screen read just before it was typed. */
  inputSent(paneId: string, screenBefore?: string): void;
}

export interface PaneIO {
  capture(paneId: string, opts?: { history?: number; ansi?: boolean }): Promise<string>;
  leaveMode(paneId: string): Promise<void>;
  paste(paneId: string, text: string): Promise<void>;
  sendKeys(paneId: string, keys: readonly string[]): Promise<void>;
}
