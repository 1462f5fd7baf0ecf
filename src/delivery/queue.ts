/**
 * One queue per pane: work on a pane (a whole turn, a `send`) runs one at a time, in the order it
 * asked for the pane. The supervisor is the only process that types into panes, so a queue in its
 * memory is the whole of the ordering.
 */
export class PaneQueue {
  private readonly tails = new Map<string, Promise<unknown>>();
  private readonly depth = new Map<string, number>();

  run<T>(paneId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(paneId) ?? Promise.resolve();
    const mine = prev.then(fn, fn);
    const tail = mine.catch(() => {});
    this.tails.set(paneId, tail);
    this.depth.set(paneId, (this.depth.get(paneId) ?? 0) + 1);
    void tail.then(() => {
      const left = (this.depth.get(paneId) ?? 1) - 1;
      if (left > 0) this.depth.set(paneId, left);
      else this.depth.delete(paneId);
      if (this.tails.get(paneId) === tail) this.tails.delete(paneId);
    });
    return mine;
  }

  /** How many jobs hold or wait for the pane. */
  pending(paneId: string): number {
    return this.depth.get(paneId) ?? 0;
  }
}
