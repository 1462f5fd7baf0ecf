export interface Output {
  writeOut(s: string): void;
  writeErr(s: string): void;
  /** stderr is a terminal: progress may redraw one line (a spinner); else plain lines. */
  errIsTTY?: boolean;
}

export const processOutput: Output = {
  writeOut: (s) => void process.stdout.write(s),
  writeErr: (s) => void process.stderr.write(s),
  errIsTTY: process.stderr.isTTY === true,
};
