// The CLI folders, one line each. A folder's export says which profile kinds it serves (see
// ./types.ts); ./kinds.ts gathers them into the lookups the rest of jaggers uses.
export { claude } from './claude/index.js';
export { codex } from './codex/index.js';
export { copilot } from './copilot/index.js';
export { fakeAgent } from './fake-agent/index.js';
export { gemini } from './gemini/index.js';
export { opencode } from './opencode/index.js';
export { qwen } from './qwen/index.js';
