declare module 'pino-roll' {
  import type { DestinationStream } from 'pino';
  interface PinoRollOptions {
    file: string | (() => string);
    size?: number | string;
    frequency?: number | string;
    extension?: string;
    symlink?: boolean;
    limit?: { count?: number; removeOtherLogFiles?: boolean };
    dateFormat?: string;
    mkdir?: boolean;
    sync?: boolean;
    /** sonic-boom: lines beyond this many bytes waiting to be written (a full disk) are dropped. */
    maxLength?: number;
  }
  export default function build(
    options: PinoRollOptions,
  ): Promise<DestinationStream & { end(): void; flushSync?(): void; file?: string; on(event: 'error', fn: (e: Error) => void): unknown }>;
}
