#!/usr/bin/env bash
# The Python virtual environments the tests run Python in, made from their
# pinned requirements (PyPI) under the target directory's tmp/: the tests'
# own (python/requirements-test.txt), LangGraph's and the MCP servers'
# (examples/python/). A venv is made again only when its requirements file
# changed. `.ci/run` runs this before `cargo test`; without it, the tests
# that need a venv say so and skip. Needs python3 with venv.
#
# Usage: bash tests/python-venvs.sh   (a few minutes the first time)
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
