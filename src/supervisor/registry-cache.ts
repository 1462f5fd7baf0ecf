import { stat } from 'node:fs/promises';
import type { Registry, RegistryData } from '../sessions/registry.js';

/**
 * The registry as last read, read again only when its journal changed (any process may append to it):
 * API reads cost a stat, not a locked read.
 */
export class RegistryCache {
  private key: string | null = null;
  private data: RegistryData | null = null;

  constructor(private readonly registry: Registry) {}

  async get(): Promise<RegistryData> {
    const st = await stat(this.registry.paths.journal).catch(() => null);
    const key = st ? `${st.size}:${st.mtimeMs}:${st.ino}` : 'none';
    if (this.data && key === this.key) return this.data;
    this.data = await this.registry.read();
    this.key = key;
    return this.data;
  }
}
