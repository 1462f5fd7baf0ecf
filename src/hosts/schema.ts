// The `hosts` of jaggers.json (issue 31; docs/hosts.md): where agents on other machines run, reached
// with the system's `ssh`. Data only: validated where jaggers.json is read (src/project/project-file.ts).
import { z } from 'zod';
import { isName, NAME_RULE } from '../ids.js';

/** A host's name in jaggers.json (`"host": "box"` on an agent): like an agent's name. */
export const HOST_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/**
 * What `ssh` is given as its destination: `[user@]host`, where host is a name, an address or an alias of
 * the user's ~/.ssh/config. Never starting with `-` (ssh would take it as an option), no spaces or controls.
 */
export const SSH_DESTINATION = /^(?:[A-Za-z0-9._][A-Za-z0-9._+-]{0,63}@)?[A-Za-z0-9_:][A-Za-z0-9._:%-]{0,253}$/;

const noControls = (s: string) => !/[\u0000-\u001f\u007f]/.test(s);

export const HostSchema = z.strictObject({
  /** The destination as `ssh` takes it: `user@host`, `host`, or a Host alias of ~/.ssh/config. */
  ssh: z.string().regex(SSH_DESTINATION, 'must be [user@]host (a name, an address or an alias of ~/.ssh/config), not starting with "-"'),
  /** The SSH port; default: what the user's ssh config says (22). */
  port: z.number().int().min(1).max(65535).optional(),
  /** A private key file (`~/.ssh/id_ed25519`, `~` is this machine's home); default: ssh's own choice (agent, config). */
  identity: z.string().min(1).max(4096).refine(noControls, 'must be a file path, without control characters').optional(),
  /** The project's folder on that host (absolute, or `~/...` for the remote user's home): agents there work in it. */
  dir: z
    .string()
    .min(1)
    .max(4096)
    .refine(noControls, 'must be a folder path, without control characters')
    .refine((d) => d.startsWith('/') || d === '~' || d.startsWith('~/'), 'must be an absolute path on that host, or start with ~/'),
});
export type HostSpec = z.output<typeof HostSchema>;

/**
 * `{"<name>": host}`. Names are checked on the raw object first: zod's record drops a `__proto__` key
 * without a word, and a host of that name must be an error, not a host that silently is not there.
 */
export const HostsSchema = z
  .unknown()
  .superRefine((v, ctx) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return;
    for (const k of Object.keys(v)) {
      if (HOST_NAME.test(k) && isName(k)) continue;
      ctx.addIssue({
        code: 'custom',
        path: [k],
        message: `the host name ${JSON.stringify(k)} must be 1-32 lower-case letters, digits, - or _, and ${NAME_RULE}`,
      });
    }
  })
  .pipe(z.record(z.string(), HostSchema));
