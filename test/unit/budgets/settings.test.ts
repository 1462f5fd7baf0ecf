// jaggers.json's budget and context settings are checked where the file is read: an error names the
// file, the field and the value (docs/configuration.md).
import { describe, expect, it } from 'vitest';
import { parseProjectFile } from '../../../src/project/project-file.js';

const parse = (o: unknown) => parseProjectFile(JSON.stringify(o), '/p/jaggers.json');

describe('budget and context settings in jaggers.json', () => {
  it('takes budgets per agent and for the session, contextWindows, compactAt and autoCompact', async () => {
    const p = await parse({
      agents: [{ name: 'coder', profile: 'claude', budget: { tokens: 2_000_000, usd: 25 }, compactAt: 70, autoCompact: true }],
      budget: { usd: 100 },
      contextWindows: { 'qwen3-coder-plus': 1_000_000 },
      compactAt: 90,
      autoCompact: false,
    });
    expect(p.agents[0]).toMatchObject({ budget: { tokens: 2_000_000, usd: 25 }, compactAt: 70, autoCompact: true });
    expect(p.budget).toEqual({ usd: 100 });
  });

  it('refuses a bad value, naming the file, the field and the value', async () => {
    await expect(parse({ agents: [{ name: 'coder', profile: 'claude', budget: { tokens: -5 } }] })).rejects.toThrow(
      /\/p\/jaggers\.json: field `agents\[0\]\.budget\.tokens`: .*got -5 \(number\)/,
    );
    await expect(parse({ agents: [{ name: 'coder', profile: 'claude' }], budget: {} })).rejects.toThrow(
      /\/p\/jaggers\.json: field `budget`: must give "tokens", "usd" or both/,
    );
    await expect(parse({ agents: [{ name: 'coder', profile: 'claude' }], budget: { usd: 5, dollars: 5 } })).rejects.toThrow(/Unrecognized key: "dollars"/);
    await expect(parse({ agents: [{ name: 'coder', profile: 'claude' }], compactAt: 120 })).rejects.toThrow(/field `compactAt`: .*got 120/);
    await expect(parse({ agents: [{ name: 'coder', profile: 'claude' }], contextWindows: { m: 'big' } })).rejects.toThrow(
      /field `contextWindows\.m`: .*got "big"/,
    );
    await expect(parse({ agents: [{ name: 'coder', profile: 'claude', budget: { tokens: 1.5 } }] })).rejects.toMatchObject({ code: 'E_PROJECT_INVALID' });
  });
});
