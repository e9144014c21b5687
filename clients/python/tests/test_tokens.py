"""Tokens: a revoked token is a typed error naming the cause."""

import os
import subprocess
import tempfile

import pytest

import forkspace
from conftest import forkspace_binary, start_server, stop_server


def _cli(binary, env, *args):
    return subprocess.run([binary, *args], env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def secured():
    """A second server, on a store holding an admin token and a revoked one."""
    binary = forkspace_binary()
    home = tempfile.mkdtemp(prefix="forkspace-pytest-tokens-")
    env = dict(os.environ, FORKSPACE_HOME=os.path.join(home, "store"), FORKSPACE_SERVER="", FORKSPACE_TOKEN="")
    _cli(binary, env, "init")
    admin = _cli(binary, env, "token", "create", "--tenant", "*", "--perm", "all", "--label", "admin")
    revoked = _cli(binary, env, "token", "create", "--perm", "read", "--label", "gone")
    revoked_id = revoked.split("_")[1]
    _cli(binary, env, "token", "revoke", revoked_id)
    proc, url = start_server(binary, env)
    yield {"url": url, "admin": admin, "revoked": revoked}
    stop_server(proc, home)


def test_revoked_token_is_unauthenticated(secured):
    with pytest.raises(forkspace.Unauthenticated) as ei:
        list(forkspace.Client(secured["url"], token=secured["revoked"]).workspaces())
    assert ei.value.status == 401
    assert "revoked" in str(ei.value)
    # The secret is never echoed back in the error.
    assert secured["revoked"] not in str(ei.value)


def test_no_token_is_unauthenticated(secured):
    with pytest.raises(forkspace.Unauthenticated):
        list(forkspace.Client(secured["url"], token="").workspaces())


def test_admin_token_works(secured):
    c = forkspace.Client(secured["url"], token=secured["admin"])
    c.create_workspace("w")
    assert [w["name"] for w in c.workspaces()] == ["w"]
