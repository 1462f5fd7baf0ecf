// The stub model server on its own (no CLI needed): each wire format, recording, the default script.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeRequest } from './stub-requests.js';
import { startStubServer, type StubServer } from './stub-server.js';

interface Frame {
  event?: string;
  data: string;
}

function parseSse(text: string): Frame[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines.find((l) => l.startsWith('data: '))?.slice(6) ?? '';
      return event === undefined ? { data } : { event, data };
    });
}

const json = (f: Frame): Record<string, unknown> => JSON.parse(f.data) as Record<string, unknown>;

describe('stub model server', () => {
  let stub: StubServer;
  let cwd: string;

  beforeEach(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'jaggers-stub-'));
    stub = await startStubServer({ cwd });
  });

  afterEach(async () => {
    await stub.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  const post = async (path: string, body: unknown): Promise<string> => {
    const res = await fetch(`${stub.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return res.text();
  };

  it("listens on 127.0.0.1 and answers claude's HEAD / probe", async () => {
    expect(stub.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${stub.baseUrl}/`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(stub.requests[0]).toMatchObject({ method: 'HEAD', purpose: 'aux' });
  });

  it('streams an Anthropic reply in order and records the prompt', async () => {
    const text = await post('/v1/messages?beta=true', {
      model: 'm',
      stream: true,
      tools: [{ name: 'Bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>x</system-reminder>' },
            { type: 'text', text: 'hello stub' },
          ],
        },
      ],
    });
    const frames = parseSse(text);
    expect(frames.map((f) => f.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(json(frames[2]!)).toMatchObject({ delta: { type: 'text_delta', text: 'stub reply to: hello stub' } });
    expect(stub.turns()[0]).toMatchObject({ api: 'anthropic', lastUserText: 'hello stub', hasToolResult: false });
  });

  it('answers a handover pointer with the first body line of the file', async () => {
    mkdirSync(join(cwd, '.jaggers', 'handover'), { recursive: true });
    writeFileSync(join(cwd, '.jaggers', 'handover', 'turn_1_ab.md'), '---\nturn: 1\n---\n\nsay the word pelican\nmore\n');
    const text = await post('/v1/chat/completions', {
      model: 'm',
      stream: true,
      tools: [{ type: 'function', function: { name: 'run_shell_command', parameters: { type: 'object' } } }],
      messages: [{ role: 'user', content: 'Read .jaggers/handover/turn_1_ab.md and do what it asks' }],
    });
    const frames = parseSse(text);
    expect(frames.at(-1)?.data).toBe('[DONE]');
    const content = frames
      .slice(0, -1)
      .map((f) => (json(f).choices as { delta: { content?: string } }[])[0]?.delta.content ?? '')
      .join('');
    expect(content).toBe('answer: say the word pelican');
  });

  it("turns needs-approval into each CLI's shell tool call, fitted to the declared schema", async () => {
    const text = await post('/v1/responses', {
      model: 'm',
      stream: true,
      tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: {}, sandbox_permissions: {}, justification: {} } } }],
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'please: needs-approval' }] }],
    });
    const done = parseSse(text).find((f) => f.event === 'response.output_item.done');
    const item = json(done!).item as { type: string; name: string; arguments: string };
    expect(item).toMatchObject({ type: 'function_call', name: 'exec_command' });
    expect(JSON.parse(item.arguments)).toMatchObject({ cmd: 'touch approved.txt', sandbox_permissions: 'require_escalated' });
    expect(parseSse(text).at(-1)?.event).toBe('response.completed');
  });

  it("answers gemini's model router with JSON and streams with the scripted chunks", async () => {
    const routerRes = await post('/v1beta/models/flash-lite:generateContent', {
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      generationConfig: {
        responseJsonSchema: { type: 'OBJECT', properties: { complexity_reasoning: { type: 'STRING' }, complexity_score: { type: 'INTEGER' } } },
      },
    });
    const routed = JSON.parse(routerRes) as { candidates: { content: { parts: { text: string }[] } }[] };
    expect(JSON.parse(routed.candidates[0]!.content.parts[0]!.text)).toEqual({ complexity_reasoning: 'Stub session', complexity_score: 1 });

    stub.setScript(() => ({ kind: 'text', text: 'abcdef', chunks: 3, delayMs: 1 }));
    const streamed = await post('/v1beta/models/flash:streamGenerateContent?alt=sse', {
      contents: [
        { role: 'user', parts: [{ text: 'hi' }] },
        { role: 'model', parts: [{ functionCall: { name: 'x' } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'x' } }] },
      ],
      tools: [{ functionDeclarations: [{ name: 'run_shell_command' }] }],
    });
    const frames = parseSse(streamed).map(json) as { candidates: { content: { parts: { text: string }[] }; finishReason?: string }[] }[];
    expect(frames.map((f) => f.candidates[0]!.content.parts[0]!.text)).toEqual(['ab', 'cd', 'ef']);
    expect(frames.at(-1)!.candidates[0]!.finishReason).toBe('STOP');
    expect(stub.turns()[0]).toMatchObject({ api: 'gemini', hasToolResult: true, toolNames: ['run_shell_command'] });
  });

  it('a system message claude puts after a tool result does not hide the tool result', () => {
    const fixture = new URL('../fixtures/requests/claude-2.1.197-system-message-after-tool-result.json', import.meta.url);
    const { method, path, body } = JSON.parse(readFileSync(fixture, 'utf8')) as { method: string; path: string; body: { messages: { role: string }[] } };
    expect(body.messages.map((m) => m.role).slice(-2)).toEqual(['user', 'system']);
    expect(describeRequest(1, method, path, body)).toMatchObject({ api: 'anthropic', purpose: 'turn', hasToolResult: true });
  });

  it("reads claude's history around the system message it puts in it: neither the user's words nor the model's", () => {
    const fixture = new URL('../fixtures/requests/claude-2.1.197-system-message-in-history.json', import.meta.url);
    const { method, path, body } = JSON.parse(readFileSync(fixture, 'utf8')) as { method: string; path: string; body: { messages: { role: string }[] } };
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'system', 'assistant', 'user']);
    const req = describeRequest(1, method, path, body);
    expect(req).toMatchObject({ api: 'anthropic', purpose: 'turn', hasToolResult: false });
    expect(req.userTexts).toEqual([
      'Read ../../.jaggers/handover/turn_1_1c0774.md and do what it asks. [jg:94dc2927710b8592]',
      'Read ../../.jaggers/handover/turn_5_1cad1c.md and do what it asks. [jg:88b6c87de98dde00]',
    ]);
    expect(req.assistantTexts).toEqual(['answer: Task (t-aeaa2240, step 1 of 3: propose)']);
    expect(req.lastUserText).toBe(req.userTexts[1]);
  });

  it('reads the words typed to copilot without the date it puts before each of them', () => {
    const fixture = new URL('../fixtures/requests/copilot-1.0.102-datetime-before-prompt.json', import.meta.url);
    const { method, path, body } = JSON.parse(readFileSync(fixture, 'utf8')) as { method: string; path: string; body: { messages: { content: string }[] } };
    expect(body.messages[0]!.content).toMatch(/^<current_datetime>.*<\/current_datetime>\n\nSLOW please say hi$/);
    const req = describeRequest(1, method, path, body);
    expect(req).toMatchObject({ api: 'openai-chat', purpose: 'turn', hasToolResult: true });
    expect(req.userTexts).toEqual(['SLOW please say hi', 'RUNSHELL now']);
    expect(req.assistantTexts).toEqual(['hi from stub']);
  });
});
