// The dashboard's logins: one-time tokens (printed by `jaggers web` in its URL, as Jupyter does) traded once
// for a session, which the browser then holds in an HttpOnly cookie. Both live in the supervisor's memory
// only: a new supervisor forgets them (`jaggers web` again prints a new URL). Kept by their SHA-256, so a
// lookup's timing says nothing of the secret, and bounded: the oldest go first.
import { createHash, randomBytes } from 'node:crypto';

const hash = (s: string) => createHash('sha256').update(s).digest('hex');

export interface SessionLimits {
  /** Unused login tokens kept (a new one past this drops the oldest). */
  tokens: number;
  /** Sessions kept (a login past this ends the oldest). */
  sessions: number;
}

export class WebSessions {
  private readonly tokens = new Set<string>();
  private readonly sessions = new Set<string>();

  constructor(
    private readonly random: () => string = () => randomBytes(32).toString('hex'),
    private readonly limits: SessionLimits = { tokens: 32, sessions: 64 },
  ) {}

  /** A new one-time login token. */
  issueToken(): string {
    const t = this.random();
    add(this.tokens, hash(t), this.limits.tokens);
    return t;
  }

  /** A new session for a token not used before (the token is used up), or null. */
  login(token: string): string | null {
    if (!token || !this.tokens.delete(hash(token))) return null;
    const s = this.random();
    add(this.sessions, hash(s), this.limits.sessions);
    return s;
  }

  has(session: string): boolean {
    return session !== '' && this.sessions.has(hash(session));
  }
}

/** Insertion order is age: past `max`, the oldest go. */
function add(set: Set<string>, v: string, max: number): void {
  set.add(v);
  for (const old of set) {
    if (set.size <= max) break;
    set.delete(old);
  }
}
