"""Fixtures: a real toolenv server (the binary at $TOOLENV_BIN, `toolenv` by default)."""

import os
import re
import shutil
import subprocess

import pytest

from toolenv import Client


def toolenv_bin():
    path = os.environ.get("TOOLENV_BIN") or shutil.which("toolenv")
    if not path:
        pytest.exit("set TOOLENV_BIN to the toolenv binary (cargo build; TOOLENV_BIN=target/debug/toolenv)", returncode=2)
    return path


@pytest.fixture(scope="session")
def binary():
    return toolenv_bin()


@pytest.fixture(scope="session")
def server(binary):
    """The address (host:port) of a toolenv server started for the session, with a 12-call budget per episode."""
    process = subprocess.Popen(
        [binary, "serve", "--addr", "127.0.0.1:0", "--no-store", "--time-scale", "0", "--max-calls", "12"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "RUST_LOG": "warn", "NO_COLOR": "1"},
    )
    try:
        lines = []
        for line in process.stderr:
            lines.append(line)
            match = re.search(r"listening on http://(\S+)", line)
            if match:
                break
        else:
            pytest.exit(f"toolenv serve did not start: {''.join(lines)}", returncode=2)
        yield match.group(1)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture()
def client(server):
    with Client(server) as client:
        yield client
