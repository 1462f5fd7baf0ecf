// Reading what a CLI sent the stub model server: which API, and the user's words in it.

import { isCompaction } from './stub-compact.js';

export type StubApi = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini' | 'other';

/**
 * `turn`: a request the test's script answers; `aux`: titles, model routing, token counts, probes;
 * `compact`: a CLI's summarise request when its compaction command runs (./stub-compact.ts).
 */
export type RequestPurpose = 'turn' | 'aux' | 'compact';

export interface RecordedRequest {
  seq: number;
  at: number;
  /** When the stub handed the answer's last byte to the socket (unset while it streams). */
  endedAt?: number;
  api: StubApi;
  method: string;
  /** Path with its query string, as sent. */
  path: string;
  body: unknown;
  purpose: RequestPurpose;
  stream: boolean;
  /** Text of the newest user message that has text (injected context blocks left out). */
  lastUserText: string | undefined;
  /** Every user text in the conversation history, oldest first. */
  userTexts: string[];
  /** Every assistant text in the conversation history, oldest first. */
  assistantTexts: string[];
  /** The newest input item is a tool result (the CLI ran the tool and reports back). */
  hasToolResult: boolean;
  /** Names of the tools the request declares. */
  toolNames: string[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Blocks the CLIs inject into user turns (environment, reminders, memory), not typed by anyone. */
function isInjected(text: string): boolean {
  const t = text.trimStart();
  return (
    t.startsWith('<system-reminder>') ||
    t.startsWith('<environment_context>') ||
    t.startsWith('<user_instructions>') ||
    t.startsWith('<permissions instructions>') ||
    t.startsWith('# AGENTS.md') ||
    t.startsWith('This is the Gemini CLI') ||
    t.startsWith('This is the Qwen Code') ||
    t.startsWith('<session_context>') ||
    t.startsWith('<command-name>') ||
    t.startsWith('<local-command-')
  );
}

/**
 * A text without what a CLI puts before the words typed: copilot 1.0.102 starts every user message with
 * `<current_datetime>...</current_datetime>` and a blank line (test/fixtures/requests/copilot-1.0.102-*).
 */
function typedPart(text: string): string {
  return text.replace(/^\s*<current_datetime>[^<]*<\/current_datetime>\s*/u, '');
}

export function apiOfPath(pathname: string): StubApi {
  if (/\/v1\/messages/.test(pathname)) return 'anthropic';
  if (pathname.endsWith('/chat/completions')) return 'openai-chat';
  if (pathname.endsWith('/responses')) return 'openai-responses';
  if (/\/models\/[^/]+:/.test(pathname)) return 'gemini';
  return 'other';
}

interface Conversation {
  user: string[];
  assistant: string[];
  hasToolResult: boolean;
}

function anthropicConversation(body: Json): Conversation {
  const conv: Conversation = { user: [], assistant: [], hasToolResult: false };
  const messages = asArray(body.messages).filter(isObject);
  for (const m of messages) {
    const content = m.content;
    const texts =
      typeof content === 'string'
        ? [content]
        : asArray(content)
            .filter(isObject)
            .filter((b) => b.type === 'text')
            .map((b) => str(b.text) ?? '');
    const kept = texts.filter((t) => t.trim() !== '' && !isInjected(t));
    // claude 2.1.197 also puts a `system` message into the history (its agent types and skills), after
    // the first prompt: neither side's words (test/fixtures/requests/claude-2.1.197-system-message-in-history.json).
    if (m.role === 'user') conv.user.push(...kept);
    else if (m.role === 'assistant') conv.assistant.push(...kept);
  }
  // It may also put one after a tool result (a reminder about its task tools): the turn still goes on
  // from the tool result (test/fixtures/requests/claude-2.1.197-system-message-after-tool-result.json).
  const last = messages.filter((m) => m.role !== 'system').at(-1);
  conv.hasToolResult = last?.role === 'user' && asArray(last.content).some((b) => isObject(b) && b.type === 'tool_result');
  return conv;
}

function chatConversation(body: Json): Conversation {
  const conv: Conversation = { user: [], assistant: [], hasToolResult: false };
  const messages = asArray(body.messages).filter(isObject);
  for (const m of messages) {
    if (m.role !== 'user' && m.role !== 'assistant') continue;
    const texts =
      typeof m.content === 'string'
        ? [m.content]
        : asArray(m.content)
            .filter(isObject)
            .map((p) => str(p.text) ?? '');
    const kept = texts.map(typedPart).filter((t) => t.trim() !== '' && !isInjected(t));
    (m.role === 'user' ? conv.user : conv.assistant).push(...kept);
  }
  conv.hasToolResult = messages.at(-1)?.role === 'tool';
  return conv;
}

function responsesConversation(body: Json): Conversation {
  const conv: Conversation = { user: [], assistant: [], hasToolResult: false };
  const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : asArray(body.input);
  const items = input.filter(isObject);
  for (const item of items) {
    if (item.type !== undefined && item.type !== 'message') continue;
    const texts =
      typeof item.content === 'string'
        ? [item.content]
        : asArray(item.content)
            .filter(isObject)
            .map((p) => str(p.text) ?? '');
    const kept = texts.filter((t) => t.trim() !== '' && !isInjected(t));
    if (item.role === 'user') conv.user.push(...kept);
    else if (item.role === 'assistant') conv.assistant.push(...kept);
  }
  const lastType = items.at(-1)?.type;
  conv.hasToolResult = lastType === 'function_call_output' || lastType === 'custom_tool_call_output';
  return conv;
}

function geminiConversation(body: Json): Conversation {
  const conv: Conversation = { user: [], assistant: [], hasToolResult: false };
  const contents = asArray(body.contents).filter(isObject);
  for (const c of contents) {
    const parts = asArray(c.parts).filter(isObject);
    const kept = parts.map((p) => (p.thought === true ? '' : (str(p.text) ?? ''))).filter((t) => t.trim() !== '' && !isInjected(t));
    (c.role === 'model' ? conv.assistant : conv.user).push(...kept);
  }
  const last = contents.at(-1);
  conv.hasToolResult = asArray(last?.parts).some((p) => isObject(p) && p.functionResponse !== undefined);
  return conv;
}

function toolNamesOf(api: StubApi, body: Json): string[] {
  const tools = asArray(body.tools).filter(isObject);
  if (api === 'gemini') {
    return tools.flatMap((t) =>
      asArray(t.functionDeclarations)
        .filter(isObject)
        .map((d) => str(d.name) ?? ''),
    );
  }
  // codex groups an MCP server's tools in a namespace (`mcp__jaggers` holding `list_agents`...): named `mcp__jaggers__list_agents` here.
  return tools.flatMap((t) =>
    t.type === 'namespace'
      ? asArray(t.tools)
          .filter(isObject)
          .map((x) => `${str(t.name) ?? ''}__${str(x.name) ?? ''}`)
      : [str(t.name) ?? (isObject(t.function) ? (str(t.function.name) ?? '') : '')],
  );
}

/** Requests answered by the stub itself, never by the test's script. */
function purposeOf(api: StubApi, method: string, path: string, body: Json): RequestPurpose {
  if (method !== 'POST') return 'aux';
  switch (api) {
    case 'anthropic':
      // The session title request carries a JSON schema; token counting has its own path.
      if (path.includes('count_tokens')) return 'aux';
      if (isObject(body.output_config) && isObject(body.output_config.format)) return 'aux';
      return asArray(body.tools).length > 0 ? 'turn' : 'aux';
    case 'gemini':
      // The model router and other helper calls are non-streamed generateContent calls.
      return path.includes(':streamGenerateContent') ? 'turn' : 'aux';
    case 'openai-chat':
      return body.stream === true && asArray(body.tools).length > 0 ? 'turn' : 'aux';
    case 'openai-responses':
      // codex's thread-title request asks for structured output and offers no tools.
      if (isObject(body.text) && isObject(body.text.format) && body.text.format.type === 'json_schema') return 'aux';
      return asArray(body.tools).length > 0 ? 'turn' : 'aux';
    case 'other':
      return 'aux';
  }
}

export function describeRequest(seq: number, method: string, path: string, body: unknown): RecordedRequest {
  const pathname = path.split('?')[0] ?? path;
  const api = apiOfPath(pathname);
  const b = isObject(body) ? body : {};
  const conv =
    api === 'anthropic'
      ? anthropicConversation(b)
      : api === 'openai-chat'
        ? chatConversation(b)
        : api === 'openai-responses'
          ? responsesConversation(b)
          : api === 'gemini'
            ? geminiConversation(b)
            : { user: [], assistant: [], hasToolResult: false };
  return {
    seq,
    at: Date.now(),
    api,
    method,
    path,
    body,
    purpose: isCompaction(conv.user.at(-1)) ? 'compact' : purposeOf(api, method, path, b),
    stream: b.stream === true || path.includes('alt=sse') || path.includes(':streamGenerateContent'),
    lastUserText: conv.user.at(-1),
    userTexts: conv.user,
    assistantTexts: conv.assistant,
    hasToolResult: conv.hasToolResult,
    toolNames: toolNamesOf(api, b),
  };
}
