// The bytes the stub model server answers with, per API: SSE event sequences as the real services
// send them (see shared/REAL-CLIS.md), built from a plain "text" or "shell tool call" reply.

export type Reply =
  /** Text streamed in `chunks` pieces, `delayMs` before each (slow streaming). */
  (
    | { kind: 'text'; text: string; chunks?: number; delayMs?: number }
    /** A shell tool call; `escalate: false` keeps codex from asking for approval (default: it asks). */
    | { kind: 'tool'; command: string; text?: string; escalate?: boolean; call?: ToolCall }
  ) & { usage?: StubUsage };

/**
 * The token counts an answer reports, each API its own way (default: 10 in, 12 out, no cache). `input`
 * is the prompt's tokens not read from a cache; `cacheRead` and `cacheWrite` come on top of it.
 */
export interface StubUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

const usageOf = (reply: Reply): Required<StubUsage> => ({ cacheRead: 0, cacheWrite: 0, ...(reply.usage ?? { input: 10, output: 12 }) });

/** One piece of a streamed answer: the SSE event name (if the API names them) and its JSON data. */
export interface SseEvent {
  event?: string;
  data: unknown;
  /** Pause before this event (slow streaming). */
  delayMs?: number;
}

export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
}

let counter = 0;
const id = (prefix: string): string => `${prefix}_stub${Date.now().toString(36)}${(counter++).toString(36)}`;

export function splitText(text: string, chunks: number): string[] {
  const n = Math.max(1, Math.min(chunks, text.length));
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

function textPieces(reply: Extract<Reply, { kind: 'text' }>): { piece: string; delayMs: number }[] {
  // The wait comes before every piece, the first too (the model "thinking" before it answers).
  return splitText(reply.text, reply.chunks ?? 1).map((piece) => ({ piece, delayMs: reply.delayMs ?? 0 }));
}

export function anthropicEvents(reply: Reply, tool: ToolCall | undefined, model: string): SseEvent[] {
  const msgId = id('msg');
  const u = usageOf(reply);
  const usage = { input_tokens: u.input, output_tokens: 1, cache_creation_input_tokens: u.cacheWrite, cache_read_input_tokens: u.cacheRead };
  const events: SseEvent[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { id: msgId, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage },
      },
    },
  ];
  let index = 0;
  const textBlock = (pieces: { piece: string; delayMs: number }[]): void => {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
    for (const { piece, delayMs } of pieces) {
      events.push({ event: 'content_block_delta', delayMs, data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } } });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    index++;
  };
  if (reply.kind === 'text') textBlock(textPieces(reply));
  else {
    if (reply.text) textBlock([{ piece: reply.text, delayMs: 0 }]);
    const t = tool ?? { name: 'Bash', args: { command: reply.command } };
    events.push({
      event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: id('toolu'), name: t.name, input: {} } },
    });
    events.push({
      event: 'content_block_delta',
      data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(t.args) } },
    });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  }
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: reply.kind === 'tool' ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: u.output },
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

export function anthropicMessage(text: string, model: string): unknown {
  return {
    id: id('msg'),
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 12 },
  };
}

export function chatEvents(reply: Reply, tool: ToolCall | undefined, model: string, withUsage: boolean): SseEvent[] {
  const chatId = id('chatcmpl');
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: unknown, finish: string | null, delayMs = 0): SseEvent => ({
    delayMs,
    data: { id: chatId, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] },
  });
  const events: SseEvent[] = [chunk({ role: 'assistant', content: '' }, null)];
  if (reply.kind === 'text') {
    for (const { piece, delayMs } of textPieces(reply)) events.push(chunk({ content: piece }, null, delayMs));
    events.push(chunk({}, 'stop'));
  } else {
    if (reply.text) events.push(chunk({ content: reply.text }, null));
    const t = tool ?? { name: 'run_shell_command', args: { command: reply.command } };
    events.push(chunk({ tool_calls: [{ index: 0, id: id('call'), type: 'function', function: { name: t.name, arguments: '' } }] }, null));
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(t.args) } }] }, null));
    events.push(chunk({}, 'tool_calls'));
  }
  if (withUsage) {
    const u = usageOf(reply);
    const prompt = u.input + u.cacheRead;
    const usage = {
      prompt_tokens: prompt,
      completion_tokens: u.output,
      total_tokens: prompt + u.output,
      prompt_tokens_details: { cached_tokens: u.cacheRead },
    };
    events.push({ data: { id: chatId, object: 'chat.completion.chunk', created, model, choices: [], usage } });
  }
  events.push({ data: '[DONE]' });
  return events;
}

export function chatCompletion(text: string, model: string): unknown {
  return {
    id: id('chatcmpl'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 12, total_tokens: 22 },
  };
}

export function responsesEvents(reply: Reply, tool: ToolCall | undefined, model: string): SseEvent[] {
  const respId = id('resp');
  const u = usageOf(reply);
  const created = Math.floor(Date.now() / 1000);
  let seq = 0;
  const ev = (type: string, fields: Record<string, unknown>, delayMs = 0): SseEvent => ({
    event: type,
    delayMs,
    data: { type, sequence_number: seq++, ...fields },
  });
  const response = (status: string, output: unknown[]): Record<string, unknown> => ({
    id: respId,
    object: 'response',
    created_at: created,
    status,
    model,
    output,
    ...(status === 'completed'
      ? {
          usage: {
            input_tokens: u.input + u.cacheRead,
            input_tokens_details: { cached_tokens: u.cacheRead },
            output_tokens: u.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: u.input + u.cacheRead + u.output,
          },
        }
      : {}),
  });
  const events: SseEvent[] = [
    ev('response.created', { response: response('in_progress', []) }),
    ev('response.in_progress', { response: response('in_progress', []) }),
  ];
  const output: unknown[] = [];
  const message = (pieces: { piece: string; delayMs: number }[]): void => {
    const itemId = id('msg');
    const output_index = output.length;
    const text = pieces.map((p) => p.piece).join('');
    events.push(
      ev('response.output_item.added', { output_index, item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } }),
    );
    events.push(
      ev('response.content_part.added', { item_id: itemId, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }),
    );
    for (const { piece, delayMs } of pieces) {
      events.push(ev('response.output_text.delta', { item_id: itemId, output_index, content_index: 0, delta: piece }, delayMs));
    }
    events.push(ev('response.output_text.done', { item_id: itemId, output_index, content_index: 0, text }));
    const part = { type: 'output_text', text, annotations: [] };
    events.push(ev('response.content_part.done', { item_id: itemId, output_index, content_index: 0, part }));
    const item = { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [part] };
    events.push(ev('response.output_item.done', { output_index, item }));
    output.push(item);
  };
  if (reply.kind === 'text') message(textPieces(reply));
  else {
    if (reply.text) message([{ piece: reply.text, delayMs: 0 }]);
    const t = tool ?? { name: 'exec_command', args: { cmd: reply.command } };
    const itemId = id('fc');
    const output_index = output.length;
    const args = JSON.stringify(t.args);
    const base = { id: itemId, type: 'function_call', call_id: id('call'), name: t.name };
    events.push(ev('response.output_item.added', { output_index, item: { ...base, status: 'in_progress', arguments: '' } }));
    events.push(ev('response.function_call_arguments.delta', { item_id: itemId, output_index, delta: args }));
    events.push(ev('response.function_call_arguments.done', { item_id: itemId, output_index, arguments: args }));
    const item = { ...base, status: 'completed', arguments: args };
    events.push(ev('response.output_item.done', { output_index, item }));
    output.push(item);
  }
  events.push(ev('response.completed', { response: response('completed', output) }));
  return events;
}

export function geminiEvents(reply: Reply, tool: ToolCall | undefined, model: string): SseEvent[] {
  const u = usageOf(reply);
  const usageMetadata = {
    promptTokenCount: u.input + u.cacheRead,
    candidatesTokenCount: u.output,
    totalTokenCount: u.input + u.cacheRead + u.output,
    ...(u.cacheRead ? { cachedContentTokenCount: u.cacheRead } : {}),
  };
  const chunk = (parts: unknown[], finish: boolean, delayMs = 0): SseEvent => ({
    delayMs,
    data: {
      candidates: [{ content: { role: 'model', parts }, index: 0, ...(finish ? { finishReason: 'STOP' } : {}) }],
      usageMetadata,
      modelVersion: model,
    },
  });
  if (reply.kind === 'text') {
    const pieces = textPieces(reply);
    return pieces.map(({ piece, delayMs }, i) => chunk([{ text: piece }], i === pieces.length - 1, delayMs));
  }
  const t = tool ?? { name: 'run_shell_command', args: { command: reply.command } };
  const parts: unknown[] = [];
  if (reply.text) parts.push({ text: reply.text });
  parts.push({ functionCall: { name: t.name, args: t.args } });
  return [chunk(parts, true)];
}

export function geminiResponse(text: string, model: string): unknown {
  return {
    candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 12, totalTokenCount: 22 },
    modelVersion: model,
  };
}

export function sseFrame(e: SseEvent): string {
  const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
  return `${e.event !== undefined ? `event: ${e.event}\n` : ''}data: ${data}\n\n`;
}
