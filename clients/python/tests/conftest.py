"""Fixtures: a real `forkspace serve` on a fresh store, started once.

The binary is $FORKSPACE_BIN (the Go test that runs this suite builds
it), or `forkspace` on PATH.
"""

import os
import shutil
import subprocess
import tempfile
import uuid

import pytest

import forkspace


def forkspace_binary():
    binary = os.environ.get("FORKSPACE_BIN") or shutil.which("forkspace")
    if not binary:
        pytest.fail("set FORKSPACE_BIN to a forkspace binary (or put forkspace on PATH)")
    return binary


def start_server(binary, env):
    """Runs `forkspace serve` on a loopback port of the store env names;
    returns the process and the server's base URL."""
    proc = subprocess.Popen([binary, "serve", "--addr", "127.0.0.1:0"], env=env,
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if "serving MCP at " in line:
            return proc, line.split("serving MCP at ", 1)[1].strip().removesuffix("/mcp")
    proc.kill()
    pytest.fail("forkspace serve did not report its address")


def stop_server(proc, home):
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def server():
    binary = forkspace_binary()
    home = tempfile.mkdtemp(prefix="forkspace-pytest-")
    env = dict(os.environ, FORKSPACE_HOME=os.path.join(home, "store"))
    subprocess.run([binary, "init"], env=env, check=True, capture_output=True)
    proc, url = start_server(binary, env)
    yield {"url": url, "binary": binary, "env": env}
    stop_server(proc, home)


@pytest.fixture
def client(server):
    return forkspace.Client(server["url"], token="")


@pytest.fixture
def ws(client):
    w = client.create_workspace("py-" + uuid.uuid4().hex[:10])
    yield w
    try:
        w.delete()
    except forkspace.NotFound:
        pass
