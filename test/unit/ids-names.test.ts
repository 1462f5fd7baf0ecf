// The one name rule (src/ids.ts) and the agent references commands and routes take.
import { describe, expect, it } from 'vitest';
import { givenAgent, isAgentRef, isName } from '../../src/ids.js';

describe('names', () => {
  it('keeps letters, digits, dot, dash and underscore; never a name every object has, a leading dot or dash', () => {
    for (const ok of ['alpha', 'jg-1a2b3c4d', 'claude-j-1a2b3c4d5e6f', 'a.b_c-d', 'X9']) expect(isName(ok), ok).toBe(true);
    for (const bad of ['', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '.hidden', '-x', '..', 'a/b', 'a b', 'é', 'x'.repeat(129)])
      expect(isName(bad), bad).toBe(false);
  });

  it("takes an agent by name, terminal id or a task's window of it (agent+task), each side by its rule", () => {
    for (const ok of ['beta', 'jg-1a2b3c4d', 'beta+t-1a2b3c4d', 'beta+loud']) expect(isAgentRef(ok), ok).toBe(true);
    for (const bad of ['+t-1', 'beta+', 'beta+__proto__', 'constructor+t-1', 'a+b+c', 'beta+.x']) expect(isAgentRef(bad), bad).toBe(false);
    expect(() => givenAgent('send', 'agent', 'toString')).toThrow(/^send: "toString" is not a valid agent name: must be /);
    expect(givenAgent('send', 'agent', 'beta+t-1a2b3c4d')).toBe('beta+t-1a2b3c4d');
  });
});
