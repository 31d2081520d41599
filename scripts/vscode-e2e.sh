#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code (code-server from npm) driven by
# playwright-core with Debian's headless chromium. Installs what it needs, idempotently:
#   apt: chromium, ripgrep and the headers code-server's native modules build against;
#   npm: the build tools (root package.json) and tests/vscode/package.json (code-server, playwright-core).
# Then builds the .vsix (unless REGRAPHT_VSIX points at one) and runs tests/vscode/e2e.mjs.
# Four scenarios (tests/vscode/e2e.mjs): smoke (server from REGRAPHT_PYTHON), first-run (an interpreter
# without regrapht: the extension creates its private venv and installs llama-cpp-python from the
# portable wheel scripts/setup.sh keeps in the machine's wheel cache, instead of a ~12 min build) and
# optimize-preview (tests/vscode/fixtures/optimize_stub_server.py stands in for the GPU server: progress
# notification + Cancel, Refactor Preview diff, Apply; its report and hover card are the real server's answers
# recorded on an H200, tests/data/gpu-recordings/; no GPU needed) and per-folder-settings (a two-folder
# workspace whose folders' .vscode/settings.json differ: each copy of saxpy.cu gets its folder's diagnostics).
# Env: REGRAPHT_PYTHON (default <repo>/.venv/bin/python, else the main checkout's), REGRAPHT_VSIX, REGRAPHT_E2E_KEEP=1,
# REGRAPHT_E2E_SCENARIOS (default smoke,first-run,optimize-preview,per-folder-settings), REGRAPHT_E2E_BARE_PYTHON (default python3), REGRAPHT_WHEEL_CACHE,
# REGRAPHT_STUB_REPORT / REGRAPHT_STUB_HOVER (a real run's report data / hover answer, written by tests/gpu/test_lsp_gpu.py;
# default: the committed recordings in tests/data/gpu-recordings/; empty: the stub's own literal data).
# Screenshots and logs: test-artifacts/vscode/.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
log() { printf '[vscode-e2e] %s\n' "$*" >&2; }
start=$SECONDS

# --- system packages -------------------------------------------------------------------------
apt_pkgs=(build-essential pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev ripgrep chromium)
missing=()
for p in "${apt_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
    log "apt-get install ${missing[*]}"
    sudo_cmd=(); [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

# --- extension build tools + .vsix ---------------------------------------------------------
if [[ ! -x node_modules/.bin/vsce || ! -x node_modules/.bin/esbuild ]]; then
    log "npm ci (build tools)"
    npm ci --no-audit --no-fund >&2
fi
if [[ -z "${REGRAPHT_VSIX:-}" ]]; then
    log "npm run package"
    npm run --silent package >&2
    export REGRAPHT_VSIX="$repo/client-vscode/dist/regrapht.vsix"
fi

# --- code-server + playwright-core -----------------------------------------------------------
e2e_dir="$repo/tests/vscode"
if [[ ! -x "$e2e_dir/node_modules/.bin/code-server" || ! -d "$e2e_dir/node_modules/playwright-core" ]]; then
    # @vscode/ripgrep would download rg from GitHub during install: seed its cache with Debian's rg.
    # (code-server's postinstall.sh refuses to run unless npm_config_unsafe_perm is set, though npm 11 warns about it.)
    tmp="${TMPDIR:-/tmp}"
    for v in 1.15.9 1.15.10 1.15.11; do
        mkdir -p "$tmp/vscode-ripgrep-cache-$v"
        for asset in ripgrep-v13.0.0-10-x86_64-unknown-linux-musl ripgrep-v13.0.0-13-x86_64-unknown-linux-musl; do
            [[ -f "$tmp/vscode-ripgrep-cache-$v/$asset.tar.gz" ]] || tar czf "$tmp/vscode-ripgrep-cache-$v/$asset.tar.gz" -C /usr/bin rg
        done
    done
    log "npm install code-server + playwright-core (a few minutes the first time)"
    # code-server's postinstall.sh refuses to run unless npm_config_unsafe_perm is set (npm 11 warns about it).
    (cd "$e2e_dir" && npm_config_yes=true npm_config_unsafe_perm=true npm_config_dangerously_allow_all_scripts=true \
        npm "$([[ -f package-lock.json ]] && echo ci || echo install)" --foreground-scripts --no-audit --no-fund >&2)
fi
log "setup done after $((SECONDS - start)) s"

# --- the test ----------------------------------------------------------------------------------
# The interpreter of smoke and per-folder-settings: this checkout's .venv, else (a git worktree
# without one) the main checkout's; either way the server's code is this checkout's (e2e.mjs puts
# server/ first on PYTHONPATH).
if [[ -z "${REGRAPHT_PYTHON:-}" ]]; then
    REGRAPHT_PYTHON="$repo/.venv/bin/python"
    main_checkout="$(dirname "$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || echo "$repo/.git")")"
    [[ -x "$REGRAPHT_PYTHON" || ! -x "$main_checkout/.venv/bin/python" ]] || REGRAPHT_PYTHON="$main_checkout/.venv/bin/python"
fi
export REGRAPHT_PYTHON
node "$e2e_dir/e2e.mjs"
log "total $((SECONDS - start)) s"
