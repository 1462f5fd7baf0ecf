#!/usr/bin/env bash
# Drift canary: installs the newest release of each agent CLI into a throwaway folder, runs the
# real-CLI end-to-end suite against those releases, captures a screen of every state, and prints per
# CLI what no longer matches jaggers' shipped profiles (which rule, which screen).
#
#   scripts/canary.sh                 all four CLIs          (npm run canary)
#   scripts/canary.sh claude qwen     only these
#
# JAGGERS_CANARY_DIR=DIR keeps everything there (default: a new folder under /tmp, printed at the end).
# Exit status: 0 nothing drifted, 1 something drifted or failed, 2 bad arguments.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 2

declare -A pkgs=([claude]=@anthropic-ai/claude-code [qwen]=@qwen-code/qwen-code [gemini]=@google/gemini-cli [codex]=@openai/codex [opencode]=opencode-ai [copilot]=@github/copilot)
clis=("$@")
[ "${#clis[@]}" -eq 0 ] && clis=(claude qwen gemini codex opencode copilot)
for c in "${clis[@]}"; do
  [ -n "${pkgs[$c]:-}" ] || { echo "canary: unknown CLI '$c' (expected claude, qwen, gemini, codex, opencode or copilot)" >&2; exit 2; }
done

work="${JAGGERS_CANARY_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/jaggers-canary.XXXXXX")}"
mkdir -p "$work/screens"
echo "canary: working in $work"

# The newest release of each, as the npm registry says today.
versions=()
for c in "${clis[@]}"; do
  v="$(NO_UPDATE_NOTIFIER=1 npm view "${pkgs[$c]}" version 2>"$work/npm-view-$c.log" | tail -n 1)"
  if [ -z "$v" ]; then
    echo "canary: npm view ${pkgs[$c]} version failed:" >&2
    cat "$work/npm-view-$c.log" >&2
    exit 1
  fi
  echo "canary: $c newest is $v"
  versions+=("$c=$v")
done
JAGGERS_CLI_VERSIONS="$(IFS=,; echo "${versions[*]}")"
export JAGGERS_CLI_VERSIONS
export JAGGERS_CLI_CACHE="$work/clis"

status=0
bash scripts/install-real-clis.sh "${clis[@]}" || status=1
npm run --silent build >"$work/build.log" 2>&1 || { echo "canary: npm run build failed (see $work/build.log)" >&2; exit 1; }

clis_csv="$(IFS=,; echo "${clis[*]}")"
echo "canary: running the real-CLI suite on $JAGGERS_CLI_VERSIONS (log: $work/e2e.log)"
JAGGERS_REQUIRE_REAL_CLIS=1 JAGGERS_E2E_FACTS=1 JAGGERS_E2E_CLIS="$clis_csv" \
  node_modules/.bin/vitest run --project e2e --reporter=default --reporter=json --outputFile.json="$work/e2e.json" >"$work/e2e.log" 2>&1 || status=1

echo "canary: capturing a screen of every state (log: $work/capture.log)"
JAGGERS_CAPTURE_SCREENS=1 JAGGERS_CAPTURE_CLIS="$clis_csv" JAGGERS_CAPTURE_DIR="$work/screens" \
  node_modules/.bin/vitest run test/e2e/capture-screens.test.ts >"$work/capture.log" 2>&1 || status=1

echo
node scripts/canary-report.mjs --screens "$work/screens" --e2e "$work/e2e.json" || status=1
echo "canary: screens in $work/screens, logs in $work"
exit "$status"
