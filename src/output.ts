export interface Output {
  writeOut(s: string): void;
  writeErr(s: string): void;
}

export const processOutput: Output = {
  writeOut: (s) => void process.stdout.write(s),
  writeErr: (s) => void process.stderr.write(s),
};
