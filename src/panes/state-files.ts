import { watch } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readStateFile, stateFilePath, type StateFileKind, type StateFileReading } from '../clis/state-file.js';
import type { Classification } from '../detect/classify.js';
import { homeOfPid } from './process-home.js';

/** The file system as state-file watching uses it (the real one below; fakes in tests). */
export interface StateFilePorts {
  /** The HOME the pane's process runs with. */
  homeOf(pid: number): Promise<string>;
  read(kind: StateFileKind, home: string, pid: number): Promise<StateFileReading>;
  /** Watch a folder (inotify); `onChange` gets the name of the file that changed. Throws when there is no folder. */
  watchFolder(dir: string, onChange: (name: string | null) => void): { close(): void };
}

export const realStateFilePorts: StateFilePorts = {
  homeOf: (pid) => homeOfPid(pid, os.homedir()),
  read: readStateFile,
  watchFolder: (dir, onChange) => watch(dir, (_ev, name) => onChange(name ? name.toString() : null)),
};

/** The pane whose CLI writes a state file, as state-file watching sees it. */
export interface StateFileOwner {
  /** The kind of state file its CLI writes (its profile's), if any. */
  readonly kind: StateFileKind | undefined;
  /** Its process now (the pid changes when the pane is restarted). */
  pid(): number | null;
  /** The file changed (inotify). */
  changed(): void;
  /** The file names a session: called on the first one seen and whenever it changes. */
  session(sessionId: string): void;
}

export interface PaneStateFile {
  readonly owner: StateFileOwner;
  closed: boolean;
  /** Readings in the order they were started: an older one never replaces a newer one. */
  seq: number;
  applied: number;
  last: Classification | null;
  home: string | null;
  /** The state file watched for this pane, once its folder is watched. */
  file: string | null;
  sessionId: string | null;
  /** Changes of the watched file reported (inotify), and that count when the reading now applied began. */
  changes: number;
  changesRead: number;
  /** How many changes the reading now applied took in at once (more than one: it may have missed a state between). */
  covered: number;
}

/** One inotify watch per folder, shared by the panes whose CLIs write their state files there. */
interface FolderWatch {
  watcher: { close(): void };
  files: Map<string, PaneStateFile>;
}

/**
 * The CLIs' own state files: read in order, their folders watched (one watch per folder, shared by
 * the panes that write there), a change reported as its own event (no polling), session ids reported
 * as they change.
 */
export class StateFiles {
  private readonly folders = new Map<string, FolderWatch>();

  constructor(private readonly ports: StateFilePorts = realStateFilePorts) {}

  /** Folders watched now. */
  get watchedFolders(): string[] {
    return [...this.folders.keys()];
  }

  add(owner: StateFileOwner): PaneStateFile {
    return { owner, closed: false, seq: 0, applied: 0, last: null, home: null, file: null, sessionId: null, changes: 0, changesRead: 0, covered: 0 };
  }

  /** Stop watching for the pane; a reading still in flight opens no watch for it. */
  remove(p: PaneStateFile): void {
    this.unwatch(p);
    p.closed = true;
  }

  /** The pane runs a new program: its HOME and its last reading are asked for again. */
  reset(p: PaneStateFile): void {
    p.home = null;
    this.unwatch(p);
    p.last = null;
  }

  /** The newest reading of the state file: one started before another that already finished gives that one's. */
  async readInOrder(p: PaneStateFile): Promise<Classification | null> {
    const seq = ++p.seq;
    const changes = p.changes;
    const file = await this.read(p);
    if (seq > p.applied) {
      p.applied = seq;
      p.last = file;
      p.covered = changes - p.changesRead;
      p.changesRead = changes;
    }
    return p.last;
  }

  /**
   * The last reading may be behind the file: it changed since that reading began, or its folder is not
   * watched (no reading yet, a restart, a folder the CLI had not made), so a change would not be told.
   */
  unread(p: PaneStateFile): boolean {
    return p.file === null || this.behind(p);
  }

  /** The watched file changed since the reading now applied began. */
  behind(p: PaneStateFile): boolean {
    return p.changes !== p.changesRead;
  }

  /** A reading of the file is under way (started and not applied yet). */
  reading(p: PaneStateFile): boolean {
    return p.seq !== p.applied;
  }

  /** Read the CLI's state file (watching its folder from the first reading on); null when it has none. */
  private async read(p: PaneStateFile): Promise<Classification | null> {
    const kind = p.owner.kind;
    const pid = p.owner.pid();
    if (!kind || !pid) return null;
    p.home ??= await this.ports.homeOf(pid);
    // The pid as it is now, after the wait (a restart may have changed it).
    const file = stateFilePath(kind, p.home, p.owner.pid()!);
    // The CLI may not have made its state folder yet: try again on each reading until it has.
    if (p.file !== file) this.watch(p, file);
    const reading = await this.ports.read(kind, p.home, p.owner.pid()!);
    if (reading.sessionId && reading.sessionId !== p.sessionId) {
      p.sessionId = reading.sessionId;
      p.owner.session(reading.sessionId);
    }
    return reading.classification;
  }

  private watch(p: PaneStateFile, file: string): void {
    this.unwatch(p);
    // A reading still in flight when the pane was removed (or the watcher stopped) must not leave an
    // inotify watch behind that nothing closes (it would keep the process alive).
    if (p.closed) return;
    const dir = path.dirname(file);
    let folder = this.folders.get(dir);
    if (!folder) {
      try {
        const files = new Map<string, PaneStateFile>();
        const watcher = this.ports.watchFolder(dir, (name) => {
          const owner = name ? files.get(name) : undefined;
          if (!owner) return;
          owner.changes++;
          owner.owner.changed();
        });
        folder = { watcher, files };
        this.folders.set(dir, folder);
      } catch {
        return; // no state folder (yet): the screen alone decides until it exists
      }
    }
    folder.files.set(path.basename(file), p);
    p.file = file;
  }

  private unwatch(p: PaneStateFile): void {
    if (!p.file) return;
    const dir = path.dirname(p.file);
    const folder = this.folders.get(dir);
    folder?.files.delete(path.basename(p.file));
    if (folder && folder.files.size === 0) {
      folder.watcher.close();
      this.folders.delete(dir);
    }
    p.file = null;
  }
}
