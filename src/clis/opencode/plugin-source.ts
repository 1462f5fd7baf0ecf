// The plugin jaggers writes into a throwaway opencode config folder (OPENCODE_CONFIG_DIR) so that
// opencode 1.18.33 calls jaggers' hook bridge. It runs inside opencode (Bun), so it is plain JavaScript
// that imports nothing but `node:child_process`: no @opencode-ai/plugin package is needed.

/**
 * The bus events the plugin passes on, as opencode publishes them (`{id, type, properties}`); besides,
 * `chat.message`, the plugin hook called when a prompt is taken (its input and the prompt's `text`).
 */
export const OPENCODE_EVENTS = ['session.status', 'session.idle', 'permission.asked'] as const;

/**
 * The module text. Every export of a plugin module must be a plugin function (opencode 1.18.33 refuses
 * the whole file otherwise: "Plugin export is not a function"), hence one export.
 *
 * - Each call runs `<bridge...> <event>` detached, the payload on its stdin, its output dropped, and
 *   is never awaited (`chat.message` is awaited by opencode, so it must return at once); the calls
 *   are queued so that they reach the bridge in the order opencode published them.
 * - Events of child sessions (a `task` subagent: `info.parentID` set) are not passed on: their idle is
 *   not the end of the person's turn.
 * - `session.status` comes busy once per step and idle just before `session.idle`: only the first busy
 *   after an idle or a permission request is passed on (the one after a permission is answered says
 *   the turn runs again), so that no call queues ahead of `session.idle`.
 * - `session.idle` carries no text: the plugin keeps the text parts of each session's newest assistant
 *   message (`message.updated`, then its parts in `message.part.updated` with the whole text and
 *   `message.part.delta` while it streams) and adds them to the idle event as `lastAssistantMessage`.
 */
export function opencodePluginSource(bridge: readonly string[]): string {
  return `// Written by jaggers for one pane (removed on \`jaggers down\`): tells jaggers when a turn starts and
// ends by running its hook bridge. Generated; do not edit.
import { spawn } from 'node:child_process';

const BRIDGE = ${JSON.stringify(bridge)};
const FORWARD = new Set(${JSON.stringify(OPENCODE_EVENTS)});

// One call at a time, in order: opencode publishes session.status busy, idle and session.idle within
// a millisecond or two, and detached processes started together may run in any order. The next call
// starts when the previous bridge has exited (it exits at once), or after 2 s if it hangs.
let queue = Promise.resolve();
function call(event, payload) {
  const body = JSON.stringify(payload);
  queue = queue.then(
    () =>
      new Promise((done) => {
        const timer = setTimeout(done, 2000);
        timer.unref?.();
        const finish = () => {
          clearTimeout(timer);
          done();
        };
        try {
          const child = spawn(BRIDGE[0], [...BRIDGE.slice(1), event], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
          child.on('error', finish);
          child.on('exit', finish);
          child.stdin.on('error', () => {});
          child.stdin.end(body);
          child.unref();
        } catch {
          finish();
        }
      }),
  );
}

const children = new Set();
// Sessions whose busy status was passed on since their last idle or permission request.
const busy = new Set();
// sessionID -> id of its newest assistant message; message id -> (part id -> text)
const lastAssistant = new Map();
const texts = new Map();

function replyOf(sessionID) {
  const parts = texts.get(lastAssistant.get(sessionID));
  return parts === undefined ? undefined : [...parts.values()].join('') || undefined;
}

export const JaggersHooks = async () => ({
  'chat.message': async (input, output) => {
    if (children.has(input?.sessionID)) return;
    const parts = Array.isArray(output?.parts) ? output.parts : [];
    const text = parts.filter((p) => p?.type === 'text' && !p.synthetic).map((p) => p.text).join('');
    call('chat.message', { ...input, text });
  },
  event: async ({ event }) => {
    const p = event?.properties ?? {};
    switch (event?.type) {
      case 'session.created':
      case 'session.updated':
        if (p.info?.parentID) children.add(p.info.id);
        return;
      case 'message.updated':
        if (p.info?.role === 'assistant' && lastAssistant.get(p.info.sessionID) !== p.info.id) {
          texts.delete(lastAssistant.get(p.info.sessionID));
          lastAssistant.set(p.info.sessionID, p.info.id);
          texts.set(p.info.id, new Map());
        }
        return;
      case 'message.part.updated':
        // Only the session's newest assistant message is kept (its text parts come after it).
        if (p.part?.type === 'text' && typeof p.part.text === 'string' && lastAssistant.get(p.part.sessionID) === p.part.messageID) {
          texts.get(p.part.messageID)?.set(p.part.id, p.part.text);
        }
        return;
      case 'message.part.delta':
        if (p.field === 'text' && typeof p.delta === 'string') {
          const parts = texts.get(p.messageID);
          if (parts !== undefined) parts.set(p.partID, (parts.get(p.partID) ?? '') + p.delta);
        }
        return;
    }
    if (!FORWARD.has(event?.type) || children.has(p.sessionID)) return;
    if (event.type === 'session.status') {
      if (p.status?.type !== 'busy') busy.delete(p.sessionID);
      if (p.status?.type !== 'busy' || busy.has(p.sessionID)) return;
      busy.add(p.sessionID);
    } else busy.delete(p.sessionID);
    call(event.type, event.type === 'session.idle' ? { ...event, lastAssistantMessage: replyOf(p.sessionID) } : event);
  },
});
`;
}
