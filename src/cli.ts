import { processOutput } from './output.js';
import { main } from './program.js';

process.exitCode = await main(process.argv.slice(2), { io: processOutput, env: process.env, cwd: process.cwd() });
