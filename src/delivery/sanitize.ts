import { randomBytes } from 'node:crypto';

/**
 * Text typed into a pane: CRLF and CR become LF, and every control character other than newline and
 * tab is removed, with whole escape sequences first, so payload text such as the bracketed-paste end
 * marker `ESC [201~` can never act as keystrokes. Everything printable (quotes, `$`, `;`, CJK, emoji,
 * combining marks) is kept exactly.
 */
export function sanitizeText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, '') // CSI: ESC [ ... final
    .replace(/\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g, '') // OSC: ESC ] ... BEL or ST
    .replace(/\u009b[0-?]*[ -/]*[@-~]/g, '') // 8-bit CSI
    .replace(/\u001b[@-_]?/g, '') // other ESC sequences and lone ESC
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');
}

/**
 * The id that tags a prompt (`[jg:<nonce>]`) so its arrival and its reply are recognized: 64 random
 * bits, so two prompts of one pane never share one (16 bits gave several percent over 100 turns).
 */
export function makeNonce(): string {
  return randomBytes(8).toString('hex');
}
