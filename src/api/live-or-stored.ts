// A read that works with no session running too: from the supervisor, else from `.jaggers/` itself.
// Light on purpose (the fast path of `tasks`, `sessions`...): the registry's code loads only when needed.
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import type { RegistryData } from './stored.js';

/** From the supervisor, or (no session running) from the files: the registry outlives its session. */
export async function liveOrStored<T>(ctx: Context, live: () => Promise<T>, stored: (data: RegistryData) => T | Promise<T>): Promise<T> {
  try {
    return await live();
  } catch (e) {
    if (!(e instanceof JaggersError) || e.code !== 'E_SESSION_MISSING') throw e;
    const { readStored } = await import('./stored.js');
    return stored(readStored(ctx));
  }
}
