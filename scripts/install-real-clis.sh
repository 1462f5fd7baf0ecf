#!/usr/bin/env bash
# Installs the pinned versions of the real agent CLIs, each into its own prefix under a cache
# folder outside the repository, for the offline end-to-end tests (test/e2e). Never installs globally.
#
#   scripts/install-real-clis.sh            install all of them (skips those already cached)
#   scripts/install-real-clis.sh claude qwen   install only these
#
# Cache: ${JAGGERS_CLI_CACHE:-$HOME/.cache/jaggers/clis}/<cli>-<version>
# Keep the versions in sync with test/e2e/clis.ts.
set -euo pipefail

cache="${JAGGERS_CLI_CACHE:-$HOME/.cache/jaggers/clis}"

# cli package version binary (relative to the prefix)
table=(
  "claude @anthropic-ai/claude-code 2.1.330 node_modules/.bin/claude"
  "qwen @qwen-code/qwen-code 0.24.4 node_modules/.bin/qwen"
  "gemini @google/gemini-cli 0.61.0 node_modules/.bin/gemini"
  "codex @openai/codex 0.169.0 node_modules/.bin/codex"
  "opencode opencode-ai 1.18.33 node_modules/.bin/opencode"
  "copilot @github/copilot 1.0.102 node_modules/.bin/copilot"
)

# JAGGERS_CLI_VERSIONS=claude=2.1.331,qwen=0.25.0 installs those versions instead (the canary does).
override_version() {
  local cli="$1" pinned="$2" part
  IFS=',' read -ra parts <<<"${JAGGERS_CLI_VERSIONS:-}"
  for part in "${parts[@]}"; do
    [ "${part%%=*}" = "$cli" ] && { echo "${part#*=}"; return; }
  done
  echo "$pinned"
}

wanted=("$@")
is_wanted() {
  [ "${#wanted[@]}" -eq 0 ] && return 0
  local w
  for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done
  return 1
}

for w in "${wanted[@]}"; do
  case "$w" in claude|qwen|gemini|codex|opencode|copilot) ;; *) echo "install-real-clis: unknown CLI '$w' (expected claude, qwen, gemini, codex, opencode or copilot)" >&2; exit 2 ;; esac
done

command -v npm >/dev/null || { echo "install-real-clis: npm not found on PATH" >&2; exit 1; }
mkdir -p "$cache"

# A throwaway global prefix: no install script or update notifier can write into the real one.
scratch="$(mktemp -d "${TMPDIR:-/tmp}/jaggers-cli-install.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/home"
export npm_config_prefix="$scratch/global"
export NO_UPDATE_NOTIFIER=1
export npm_config_update_notifier=false
export npm_config_fund=false
export npm_config_audit=false

failed=0
for row in "${table[@]}"; do
  read -r cli pkg version bin <<<"$row"
  is_wanted "$cli" || continue
  version="$(override_version "$cli" "$version")"
  dir="$cache/$cli-$version"
  if [ -f "$dir/.jaggers-installed" ] && [ -x "$dir/$bin" ]; then
    echo "$cli $version: cached  $dir/$bin"
    continue
  fi
  echo "$cli $version: installing $pkg@$version into $dir ..."
  # The marker file is written last, so an interrupted install never looks cached; start it over.
  # (Installed in place, not renamed afterwards: install scripts may record absolute paths.)
  partial="$dir"
  rm -rf "$partial"
  mkdir -p "$partial"
  echo '{"name":"jaggers-real-cli","private":true}' >"$partial/package.json"
  start=$(date +%s)
  if ! npm install --prefix "$partial" --no-save --no-package-lock --loglevel=error "$pkg@$version" >"$scratch/$cli.log" 2>&1; then
    echo "install-real-clis: npm install $pkg@$version failed; npm said:" >&2
    tail -n 30 "$scratch/$cli.log" >&2
    rm -rf "$partial"
    failed=1
    continue
  fi
  if [ ! -x "$partial/$bin" ]; then
    echo "install-real-clis: $pkg@$version installed but $bin is missing in $partial" >&2
    failed=1
    continue
  fi
  # copilot unpacks ~235 MB into $XDG_CACHE_HOME/copilot at its first run: once, here, beside the binary
  # (the tests point every throwaway HOME's XDG_CACHE_HOME at it).
  if ! HOME="$scratch/home" XDG_CACHE_HOME="$partial/xdg-cache" "$partial/$bin" --version >"$scratch/$cli.version" 2>&1; then
    echo "install-real-clis: $partial/$bin --version failed:" >&2
    cat "$scratch/$cli.version" >&2
    failed=1
    continue
  fi
  echo "$pkg@$version" >"$dir/.jaggers-installed"
  echo "$cli $version: installed in $(( $(date +%s) - start ))s  $dir/$bin  ($(tail -n1 "$scratch/$cli.version"))"
done

if [ "$failed" -ne 0 ]; then
  echo "install-real-clis: some installs failed (see above)" >&2
  exit 1
fi
