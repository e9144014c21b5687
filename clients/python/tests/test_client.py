"""The Python client against a real server: every call, and bad input."""

import io
import os
import tarfile
import threading

import pytest

import forkspace


def test_files_roundtrip(ws):
    e = ws.write_text("b.txt", "hello\n")
    assert e.type == "file" and e.size == 6 and e.etag
    assert ws.read_text("b.txt") == "hello\n"
    assert ws.read_bytes("b.txt", offset=1, length=3) == b"ell"
    ws.mkdir("d/e", parents=True)
    ws.write("d/e/f.bin", bytes(range(256)))
    assert [x.name for x in ws.listdir("")] == ["b.txt", "d"]
    assert ws.stat("d/e/f.bin").size == 256
    ws.rename("b.txt", "d/c.txt")
    assert not ws.exists("b.txt") and ws.exists("d/c.txt")
    with pytest.raises(forkspace.DirectoryNotEmpty):
        ws.remove("d")
    ws.remove("d", recursive=True)
    assert list(ws.listdir("")) == []


def test_listdir_pages(ws):
    ws.mkdir("many")
    for i in range(25):
        ws.write(f"many/f{i:03d}", b"x")
    names = [e.name for e in ws.listdir("many", page_size=7)]
    assert names == [f"f{i:03d}" for i in range(25)]


def test_streaming_upload_and_download(ws, tmp_path):
    size = 24 * 1024 * 1024 + 123
    src = tmp_path / "big.bin"
    with open(src, "wb") as f:
        f.write(os.urandom(size))
    e = ws.upload(str(src), "big.bin")
    assert e.size == size
    dst = tmp_path / "back.bin"
    assert ws.download("big.bin", str(dst)) == size
    assert dst.read_bytes() == src.read_bytes()


def test_conditional_writes(ws):
    e = ws.write("c.txt", b"one", create_only=True)
    with pytest.raises(forkspace.PreconditionFailed):
        ws.write("c.txt", b"two", create_only=True)
    ws.write("c.txt", b"two", if_match=e.etag)
    with pytest.raises(forkspace.PreconditionFailed):
        ws.write("c.txt", b"three", if_match=e.etag)
    assert ws.read_bytes("c.txt") == b"two"


def test_errors_are_typed(client, ws):
    with pytest.raises(forkspace.NotFound) as ei:
        ws.read_bytes("missing.txt")
    assert ei.value.status == 404 and ei.value.code == "not_found"
    with pytest.raises(forkspace.NotFound):
        client.workspace("no-such-workspace").info()
    with pytest.raises(forkspace.AlreadyExists):
        client.create_workspace(ws.name)
    with pytest.raises(forkspace.InvalidArgument):
        client.create_workspace("bad/name")
    with pytest.raises(forkspace.IsADirectory):
        ws.mkdir("dir")
        ws.read_bytes("dir")
    with pytest.raises(forkspace.RangeNotSatisfiable):
        ws.write("r.txt", b"abc")
        ws.read_bytes("r.txt", offset=10, length=2)
    with pytest.raises(ValueError):
        forkspace.Client("ftp://example.com")


def test_quota_write_is_atomic(client):
    small = client.create_workspace("py-quota", max_bytes=1000)
    small.write("keep.txt", b"k" * 100)
    with pytest.raises(forkspace.QuotaExceeded):
        small.write("big.bin", io.BytesIO(b"x" * 5000))
    with pytest.raises(forkspace.QuotaExceeded):
        small.write("keep.txt", b"y" * 5000)
    assert not small.exists("big.bin")
    assert small.read_bytes("keep.txt") == b"k" * 100
    small.delete()


def test_checkpoints_fork_diff_merge(client, ws):
    ws.write_text("notes.md", "line 1\nline 2\nline 3\n")
    cp = ws.checkpoint("before")
    assert cp["label"] == "before"
    fork = ws.fork(ws.name + "-fork")
    assert fork.parent()
    fork.write_text("notes.md", "line 1 (fork)\nline 2\nline 3\n")
    ws.write_text("notes.md", "line 1\nline 2\nline 3 (head)\n")
    changes = ws.diff(ws.name + "@before")
    assert [c["path"] for c in changes] == ["notes.md"]
    assert "+line 3 (head)" in ws.diff(ws.name + "@before", unified=True)
    res = ws.merge(fork.name)
    assert res["conflicts"] == [] and res["changed"] == ["notes.md"]
    assert ws.read_text("notes.md") == "line 1 (fork)\nline 2\nline 3 (head)\n"
    ws.restore("before")
    assert ws.read_text("notes.md") == "line 1\nline 2\nline 3\n"
    assert ws.at("before").read_text("notes.md") == "line 1\nline 2\nline 3\n"
    with pytest.raises(forkspace.ReadOnly):
        ws.at("before").write_text("x", "y")
    fork.delete()


def test_conflicts_as_data(ws):
    ws.write_text("f.txt", "base\n")
    fork = ws.fork(ws.name + "-c")
    fork.write_text("f.txt", "theirs\n")
    ws.write_text("f.txt", "ours\n")
    with pytest.raises(forkspace.Conflict):
        ws.merge(fork.name, policy="fail")
    assert ws.read_text("f.txt") == "ours\n"
    res = ws.merge(fork.name)
    assert [c["path"] for c in res["conflicts"]] == ["f.txt"]
    conflicts = ws.conflicts()
    assert [c["path"] for c in conflicts] == ["f.txt"]
    assert ws.resolve("f.txt", "theirs") == 0
    assert ws.read_text("f.txt") == "theirs\n"
    fork.delete()


def test_exec_streams_and_changes(ws):
    out = []
    r = ws.exec("echo hi; echo made > made.txt; echo oops >&2; exit 3", on_stdout=out.append)
    assert r.exit_code == 3
    assert b"".join(out) == b"hi\n"
    assert "oops" in r.stderr
    assert ws.read_text("made.txt") == "made\n"


def test_tar_roundtrip(ws):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = b"from a tar"
        info = tarfile.TarInfo("t/x.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    ws.import_tar(buf.getvalue(), to="in")
    assert ws.read_bytes("in/t/x.txt") == b"from a tar"
    out = io.BytesIO()
    ws.export_tar(out, "in")
    out.seek(0)
    with tarfile.open(fileobj=out) as tar:
        assert "t/x.txt" in [m.name.lstrip("./") for m in tar.getmembers()]


def test_memoryfs_mount_and_sync_back(ws):
    mem = forkspace.MemoryFS({"hello.sh": "echo hello\n", "lib/util.py": b"X = 1\n"}, writable=True)
    assert mem.readdir("") == [forkspace.DirEntry("hello.sh", "file"), forkspace.DirEntry("lib", "dir")]
    assert forkspace.mount(ws, "/mnt/tools", mem) == 2
    assert ws.read_text("mnt/tools/lib/util.py") == "X = 1\n"
    r = ws.exec("sh mnt/tools/hello.sh > mnt/tools/out.txt && rm mnt/tools/lib/util.py")
    assert r.exit_code == 0
    report = forkspace.sync_back(ws, "mnt/tools", mem)
    assert report == {"added": ["out.txt"], "changed": [], "deleted": ["lib/util.py"]}
    assert mem.read_file("out.txt") == b"hello\n"
    ro = forkspace.MemoryFS({"a": "b"})
    with pytest.raises(PermissionError):
        ro.write_file("a", b"c")
    with pytest.raises(ValueError):
        forkspace.MemoryFS({"../": "x"})


def test_threads_share_a_client(client, ws):
    errors = []

    def work(k):
        try:
            ws.mkdir(f"t{k}")
            for i in range(20):
                ws.write(f"t{k}/{i}", str(i).encode())
                assert ws.read_bytes(f"t{k}/{i}") == str(i).encode()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_unreachable_server():
    c = forkspace.Client("http://127.0.0.1:1", timeout=2)
    with pytest.raises(forkspace.ConnectionFailed):
        list(c.workspaces())


def test_workspaces_and_space(client, ws):
    names = [w["name"] for w in client.workspaces(page_size=1)]
    assert ws.name in names
    assert ws.info()["name"] == ws.name
    assert any(w["name"] == ws.name for w in client.df()["workspaces"])
    plan = client.gc(dry_run=True)
    assert plan["dry_run"] is True
    entries = client.audit(ws.name, limit=5)
    assert all(e["actor"] == "python" for e in entries if e["tool"].startswith("rest."))
