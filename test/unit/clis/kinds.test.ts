// The kinds profiles name, gathered from the CLI folders (test/unit/profiles.test.ts checks that the
// shipped profiles name only these).
import { describe, expect, it } from 'vitest';
import {
  DISCOVER_KINDS,
  DISCOVERERS,
  EXEC_COMMANDS,
  HEADLESS_ID_KINDS,
  HEADLESS_REPLY_KINDS,
  MCP_VIA_KINDS,
  STATE_FILE_KINDS,
  TRANSCRIPT_KINDS,
} from '../../../src/clis/kinds.js';

const sorted = (xs: readonly string[]) => [...xs].sort();

describe('the kinds the CLI folders serve', () => {
  it('are the ones profiles may name', () => {
    expect(sorted(TRANSCRIPT_KINDS)).toEqual(['claude', 'copilot', 'fake-agent', 'qwen']);
    expect(sorted(STATE_FILE_KINDS)).toEqual(['claude-sessions', 'fake-agent']);
    expect(sorted(DISCOVER_KINDS)).toEqual(['codex-rollout', 'list-sessions', 'opencode-session-list']);
    expect(sorted(HEADLESS_ID_KINDS)).toEqual(['codex-json', 'opencode-json']);
    expect(sorted(HEADLESS_REPLY_KINDS)).toEqual(['opencode-json', 'text']);
    expect(sorted(MCP_VIA_KINDS)).toEqual(['codex-overrides', 'config-file', 'opencode-config']);
    expect(sorted(Object.keys(EXEC_COMMANDS))).toEqual(['claude', 'codex', 'gemini', 'jaggers-fake-agent', 'qwen']);
  });

  it('list-sessions is named but pins nothing yet', () => {
    expect(DISCOVERERS['list-sessions']).toBeNull();
  });
});
