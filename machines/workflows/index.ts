// The built-in workflows, by name. A project's `.jaggers/workflows/<name>.yaml` of the same name replaces one.
import * as adversarial from './adversarial.machine.js';
import * as collaborative from './collaborative.machine.js';
import * as handoff from './handoff.machine.js';
import * as handshake from './handshake.machine.js';
import * as troubleshoot from './troubleshoot.machine.js';

export const BUILTIN_WORKFLOWS = { handoff, collaborative, adversarial, troubleshoot, handshake } as const;
