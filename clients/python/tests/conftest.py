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


@pytest.fixture(scope="session")
def server():
    binary = os.environ.get("FORKSPACE_BIN") or shutil.which("forkspace")
    if not binary:
        pytest.fail("set FORKSPACE_BIN to a forkspace binary (or put forkspace on PATH)")
    home = tempfile.mkdtemp(prefix="forkspace-pytest-")
    env = dict(os.environ, FORKSPACE_HOME=os.path.join(home, "store"))
    subprocess.run([binary, "init"], env=env, check=True, capture_output=True)
    proc = subprocess.Popen([binary, "serve", "--addr", "127.0.0.1:0"], env=env,
                            stderr=subprocess.PIPE, text=True)
    url = None
    for line in proc.stderr:
        if "serving MCP at " in line:
            url = line.split("serving MCP at ", 1)[1].strip().removesuffix("/mcp")
            break
    if url is None:
        proc.kill()
        pytest.fail("forkspace serve did not report its address")
    yield {"url": url, "binary": binary, "env": env}
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(home, ignore_errors=True)


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
