import { JaggersError } from '../errors.js';
import { ControlClient } from './control-client.js';
import { describeSocket, type TmuxServer } from './server.js';
import { localTransport } from './transport.js';
import { EXITING_SERVER_TRIES, exitingServerPause, hasSession } from './one-shot.js';

const ATTACH_TIMEOUT_MS = 30_000;

export interface CreateSession {
  windowName: string;
  command: readonly string[];
  cwd: string;
  width: number;
  height: number;
  env: Record<string, string>;
}

/**
 * Open the control connection to a session, creating the session (and the server) when `create` is
 * given. Resolves once tmux answered a first command, so a missing session is an error here.
 */
export async function openControl(server: TmuxServer, session: string, create?: CreateSession, attachFlags?: string): Promise<ControlClient> {
  const args = create
    ? [
        'new-session',
        '-A',
        '-s',
        session,
        '-n',
        create.windowName,
        '-x',
        String(create.width),
        '-y',
        String(create.height),
        '-c',
        create.cwd,
        ...Object.entries(create.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
        '--',
        ...create.command,
      ]
    : ['attach-session', ...(attachFlags ? ['-f', attachFlags] : []), '-t', `=${session}`];
  // A server still exiting after `kill-server` drops the client (see EXITING_SERVER_TRIES).
  for (let attempt = 1; ; attempt++) {
    try {
      return await connectOnce(server, session, args);
    } catch (e) {
      const dropped = e instanceof JaggersError && e.code === 'E_TMUX_EXITED';
      if (!create || !dropped || attempt >= EXITING_SERVER_TRIES) {
        if (!create && !(await hasSession(server, session))) {
          throw new JaggersError(
            'E_SESSION_MISSING',
            `no jaggers session ${JSON.stringify(session)} on tmux socket ${describeSocket(server)}: run \`jaggers up\` first`,
          );
        }
        throw e;
      }
      await exitingServerPause(attempt);
    }
  }
}

/** One control client: resolves once tmux attached it and answered a first command. */
async function connectOnce(server: TmuxServer, session: string, args: string[]): Promise<ControlClient> {
  const client = new ControlClient(localTransport(server, args));
  try {
    // A command sent before tmux attached this client runs for another client (seen: a `refresh-client
    // -f no-output` silenced a different connection), so wait for the attach before the first one.
    let timer: NodeJS.Timeout | undefined;
    const slow = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new JaggersError('E_TMUX_TIMEOUT', `tmux ${describeSocket(server)} did not attach a control client to ${session} within ${ATTACH_TIMEOUT_MS} ms`),
          ),
        ATTACH_TIMEOUT_MS,
      );
    });
    await Promise.race([client.attached, new Promise<void>((resolve) => client.onExit(() => resolve())), slow]).finally(() => clearTimeout(timer));
    await client.runOk(['display-message', '-p', '#{session_name}']);
    return client;
  } catch (e) {
    await client.close().catch(() => {});
    throw e;
  }
}

/**
 * A second connection for commands only, attached with the `no-output` flag so its replies never wait
 * behind the backlog of every pane's %output (tmux >= 3.2). The flag is given at attach, not set later
 * with `refresh-client -f no-output`: on tmux 3.3a that command's own reply was lost when pane output
 * was queued for the client at that moment (seen under load: the command never answered).
 */
export async function openCommandControl(server: TmuxServer, session: string): Promise<ControlClient> {
  return openControl(server, session, undefined, 'no-output');
}
