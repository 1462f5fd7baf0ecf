#!/usr/bin/env bash
# Installs the two newest Chromium releases that the npm registry carries, for the dashboard's browser
# tests (test/browser/), beside Debian's Chromium: @sparticuz/chromium ships one Chromium headless shell
# per release as a brotli-compressed binary (bin/chromium.br). Its own `executablePath()` unpacks to a
# fixed /tmp/chromium shared by every version, so this script unpacks the binary itself, into a cache
# folder outside the repository; the package is not one of jaggers' dependencies. Offline once cached.
#
#   scripts/install-browsers.sh          install both (skips those already cached)
#   scripts/install-browsers.sh 153      install only this major
#
# Cache: ${JAGGERS_BROWSER_CACHE:-$HOME/.cache/jaggers/browsers}/chromium-<major>/chromium
# Keep the majors in sync with CHROMIUM_RELEASES in test/browser/browser.ts.
set -euo pipefail

cache="${JAGGERS_BROWSER_CACHE:-$HOME/.cache/jaggers/browsers}"

# major  package version
table=(
  "153 153.0.0"
  "152 152.0.0"
)

wanted=("$@")
is_wanted() {
  [ "${#wanted[@]}" -eq 0 ] && return 0
  local w
  for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done
  return 1
}
majors=" $(for row in "${table[@]}"; do printf '%s ' "${row%% *}"; done)"
for w in "${wanted[@]}"; do
  case "$majors" in *" $w "*) ;; *) echo "install-browsers: unknown Chromium '$w' (expected one of:$majors)" >&2; exit 2 ;; esac
done

command -v npm >/dev/null || { echo "install-browsers: npm not found on PATH" >&2; exit 1; }
command -v node >/dev/null || { echo "install-browsers: node not found on PATH" >&2; exit 1; }
mkdir -p "$cache"

scratch="$(mktemp -d "${TMPDIR:-/tmp}/jaggers-browser-install.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
export NO_UPDATE_NOTIFIER=1 npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

failed=0
for row in "${table[@]}"; do
  read -r major version <<<"$row"
  is_wanted "$major" || continue
  dir="$cache/chromium-$major"
  if [ -f "$dir/.jaggers-installed" ] && [ -x "$dir/chromium" ]; then
    echo "chromium $major: cached  $dir/chromium"
    continue
  fi
  echo "chromium $major: installing @sparticuz/chromium@$version into $dir ..."
  start=$(date +%s)
  # The marker file is written last, so an interrupted install never looks cached; start it over.
  rm -rf "$dir"
  mkdir -p "$dir" "$scratch/$major"
  echo '{"name":"jaggers-browser","private":true}' >"$scratch/$major/package.json"
  # --ignore-scripts: only the package's files are wanted, none of its (or tar-fs's) code runs.
  if ! npm install --prefix "$scratch/$major" --no-save --no-package-lock --ignore-scripts --loglevel=error "@sparticuz/chromium@$version" >"$scratch/$major.log" 2>&1; then
    echo "install-browsers: npm install @sparticuz/chromium@$version failed; npm said:" >&2
    tail -n 30 "$scratch/$major.log" >&2
    rm -rf "$dir"
    failed=1
    continue
  fi
  packed="$scratch/$major/node_modules/@sparticuz/chromium/bin/chromium.br"
  if ! node -e '
    const { createReadStream, createWriteStream } = require("node:fs");
    const { pipeline } = require("node:stream/promises");
    const { createBrotliDecompress } = require("node:zlib");
    pipeline(createReadStream(process.argv[1]), createBrotliDecompress(), createWriteStream(process.argv[2], { mode: 0o755 })).catch((e) => {
      console.error(e.message);
      process.exit(1);
    });
  ' "$packed" "$dir/chromium" 2>"$scratch/$major.unpack"; then
    echo "install-browsers: could not unpack $packed:" >&2
    cat "$scratch/$major.unpack" >&2
    rm -rf "$dir"
    failed=1
    continue
  fi
  # The binary must run here (its shared libraries are the ones Debian's chromium package brings).
  if ! "$dir/chromium" --version >"$scratch/$major.version" 2>&1 || ! grep -q "^Chromium $major\." "$scratch/$major.version"; then
    echo "install-browsers: $dir/chromium --version failed or is not Chromium $major:" >&2
    cat "$scratch/$major.version" >&2
    if command -v ldd >/dev/null; then ldd "$dir/chromium" | grep 'not found' >&2 || true; fi
    rm -rf "$dir"
    failed=1
    continue
  fi
  echo "@sparticuz/chromium@$version" >"$dir/.jaggers-installed"
  echo "chromium $major: installed in $(($(date +%s) - start))s  $dir/chromium  ($(head -n1 "$scratch/$major.version"))"
done

if [ "$failed" -ne 0 ]; then
  echo "install-browsers: some installs failed (see above); their browser tests will be skipped" >&2
  exit 1
fi
