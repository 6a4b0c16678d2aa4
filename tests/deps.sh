#!/usr/bin/env bash
# What the tests take from the package registries, made once per checkout
# under the target directory's tmp/, so that a test installs nothing:
# - the Python virtual environments, from their pinned requirements (PyPI):
#   the tests' own (python/requirements-test.txt), LangGraph's and the MCP
#   servers' (examples/python/); a venv is made again only when its
#   requirements file changed;
# - the npm MCP server the chaos proxy's test drives (when npm is here), at
#   the exact version tests/fixtures/npm-mcp-servers.txt names.
# `.ci/run` runs this before `cargo test`; without it, the tests that need
# these say so and skip. Needs python3 with venv.
#
# Usage: bash tests/deps.sh   (a few minutes the first time)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=${CARGO_TARGET_DIR:-target}/tmp
mkdir -p "$tmp"
make_venv() { # name, requirements file
    local venv=$tmp/$1
    if [ -x "$venv/bin/python" ] && cmp -s "$2" "$venv/installed-requirements.txt"; then
        return
    fi
    echo "making $venv from $2"
    python3 -m venv --clear "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$2"
    cp "$2" "$venv/installed-requirements.txt"
}
make_venv python-venv python/requirements-test.txt
make_venv python-venv-langgraph examples/python/requirements-langgraph.txt
make_venv python-venv-mcp-servers examples/python/requirements-mcp-servers.txt

npm_package() { # directory, file holding name@version
    local spec
    spec=$(tr -d '[:space:]' < "$2")
    local prefix=$tmp/$1
    if [ "$(cat "$prefix/installed.txt" 2>/dev/null)" = "$spec" ]; then
        return
    fi
    if ! command -v npm >/dev/null 2>&1; then
        echo "npm is not installed: the test of $spec will skip (.ci/run installs Debian's npm)"
        return
    fi
    echo "installing $spec under $prefix"
    npm install --silent --no-audit --no-fund --prefix "$prefix" "$spec"
    printf '%s' "$spec" > "$prefix/installed.txt"
}
npm_package npm-mcp-servers tests/fixtures/npm-mcp-servers.txt
