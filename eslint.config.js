import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import globals from 'globals';

/** `no-restricted-imports` for one folder: what it must not import (type-only imports are allowed). */
const layer = (files, patterns) => ({
  files,
  rules: {
    '@typescript-eslint/no-restricted-imports': ['error', { patterns: patterns.map(([group, message]) => ({ group, message, allowTypeImports: true })) }],
  },
});

// The layers of DESIGN.md, checked: data flows tmux -> panes (the watcher, with detection) -> supervisor ->
// turns -> delivery -> tmux; commands are clients of the supervisor's API; detection is pure.
const HEAVY = ['zod', 'execa', 'xstate', 'fastify', 'fastify-*', 'pino', 'pino-*', 'strip-ansi', 'jsonc-parser'];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.jaggers/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        performance: 'readonly',
        setImmediate: 'readonly',
        AbortController: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        structuredClone: 'readonly',
        fetch: 'readonly',
        queueMicrotask: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-control-regex': 'off',
    },
  },
  // The dashboard's page (issue 29) runs in a browser: its globals, and none of the server's code at run time.
  {
    files: ['web/**/*.ts'],
    languageOptions: { globals: globals.browser },
  },
  layer(['web/**'], [[['../src/*', '../src/**'], 'the page is a client of the API: it imports the API types only (web/types.ts)']]),
  layer(
    ['src/detect/**'],
    [
      [
        ['node:fs', 'node:fs/*', 'node:child_process', 'node:net', 'node:http', 'execa', 'xstate'],
        'detection is pure: it reads screens handed to it, never files, processes or tmux',
      ],
      [
        ['../tmux/*', '../panes/*', '../supervisor/*', '../delivery/*', '../turns/*', '../commands/*', '../api/*', '../sessions/*', '../clis/*'],
        'detection is pure: the supervisor feeds it',
      ],
    ],
  ),
  layer(
    ['src/tmux/**'],
    [
      [
        [
          '../detect/*',
          '../panes/*',
          '../delivery/*',
          '../supervisor/*',
          '../turns/*',
          '../commands/*',
          '../api/*',
          '../sessions/*',
          '../handover/*',
          '../profiles/*',
        ],
        'src/tmux/ only speaks tmux; it knows nothing above it',
      ],
    ],
  ),
  layer(
    ['src/git/**'],
    [[['../*', '!../errors.js'], 'src/git/ only speaks git (plain operations and its machine formats); it knows nothing of jaggers above it']],
  ),
  layer(
    ['src/hosts/**'],
    [
      [
        ['../supervisor/*', '../commands/*', '../api/*', '../work/*', '../agents/*', '../tmux/*', '../panes/*', '../turns/*', '../delivery/*'],
        'src/hosts/ only speaks ssh (the system binary): the supervisor and commands use it, never the other way',
      ],
    ],
  ),
  layer(
    ['src/panes/**'],
    [
      [
        ['../supervisor/*', '../commands/*', '../api/*', '../turns/*', '../delivery/*', '../sessions/*', '../handover/*'],
        'src/panes/ watches panes for the supervisor: it builds on tmux, detection, the CLI folders and the machines, never on the parts above it',
      ],
      [['../profiles/*'], 'src/panes/ is handed profiles as data: it imports their types only'],
    ],
  ),
  layer(
    ['src/delivery/**'],
    [
      [['../tmux/*'], 'delivery works through the PaneIO interface (src/delivery/ports.ts), not tmux itself'],
      [
        ['../supervisor/*', '../panes/*', '../turns/*', '../commands/*', '../api/*'],
        'delivery sits below the supervisor and the turn engine; it depends on the narrow PaneStatusSource, not the watcher',
      ],
    ],
  ),
  layer(
    ['src/turns/**'],
    [
      [
        ['../tmux/*', '../panes/*', '../supervisor/*', '../commands/*', '../api/client*', '../api/connect*', '../api/ensure*'],
        'the turn engine gets pane I/O and the live status handed in; the supervisor runs it',
      ],
    ],
  ),
  layer(
    ['src/handover/**', 'src/sessions/**', 'src/profiles/**', 'src/project/**'],
    [[['../tmux/*', '../panes/*', '../supervisor/*', '../commands/*', '../turns/*', '../delivery/deliver*'], 'data on disk: no tmux, no live state']],
  ),
  layer(
    ['src/clis/**'],
    [
      [
        [
          'node:child_process',
          'execa',
          ...['tmux', 'panes', 'supervisor', 'commands', 'api', 'turns', 'delivery', 'terminals'].flatMap((d) => [`../${d}/*`, `../../${d}/*`]),
        ],
        'a CLI folder reads the files its CLI writes: no tmux, no live state, no processes (discovery is handed a `run` function)',
      ],
    ],
  ),
  layer(
    ['src/commands/**'],
    [
      [
        ['../supervisor/*', '../panes/*', '../detect/*', '../delivery/deliver*', '../turns/turn*', '../turns/wait-end*', '../work/*', '../agents/launcher*'],
        'commands are clients of the supervisor (src/api/); only it watches panes and runs turns',
      ],
      [
        ['../tmux/*', '../sessions/*'],
        'commands reach tmux and the registry only through the API (src/api/): the supervisor is their one owner (src/api/session.ts starts the session, src/api/stored.ts reads the files while no supervisor runs)',
      ],
    ],
  ),
  // No module imports itself through others at run time (type-only imports are not followed by this rule;
  // the layout keeps those one-way too).
  {
    files: ['src/**/*.ts', 'machines/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  layer(
    [
      'src/cli.ts',
      'src/program.ts',
      'src/cli/*.ts',
      'src/package-root.ts',
      'src/context.ts',
      'src/errors.ts',
      'src/output.ts',
      'src/api/client.ts',
      'src/api/connect.ts',
      'src/api/paths.ts',
      'src/api/live-or-stored.ts',
      'src/commands/status.ts',
      'src/commands/ls.ts',
      'src/commands/pane.ts',
      'src/commands/watch.ts',
      'src/commands/render.ts',
      'src/commands/handoff.ts',
      'src/commands/progress.ts',
      'src/commands/jobs.ts',
      'src/commands/inbox.ts',
      'src/commands/tasks.ts',
      'src/commands/sessions.ts',
    ],
    [
      [
        HEAVY,
        'the fast path of client commands (status, ls, why, send, capture, handoff, jobs, inbox, tasks, sessions) loads no heavy library: import it inside the function that needs it',
      ],
      [
        [
          './supervisor/*',
          '../supervisor/*',
          './panes/*',
          '../panes/*',
          './tmux/con*',
          '../tmux/con*',
          './tmux/transport*',
          '../tmux/transport*',
          './tmux/version*',
          '../tmux/version*',
          './tmux/commands*',
          '../tmux/commands*',
          './sessions/*',
          '../sessions/*',
          './profiles/*',
          '../profiles/*',
          './project/project-file*',
          '../project/project-file*',
          './validate*',
          '../validate*',
        ],
        'the fast path loads only what a client needs: import the rest inside the function that needs it',
      ],
    ],
  ),
);
