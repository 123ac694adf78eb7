"""The Landlock layer, probed from throwaway forked children.

Each probe runs under Landlock and, as a positive control, without it, so an
operation that fails for an unrelated reason cannot pass as containment.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from geomint.confine._landlock import apply_landlock, landlock_abi

ABI = landlock_abi()

pytestmark = [
    pytest.mark.isolation,
    pytest.mark.skipif(ABI == 0, reason="kernel lacks Landlock (or it is disabled)"),
]

Outcomes = dict[str, str]


def run_in_child(body: Callable[[], Outcomes]) -> tuple[Outcomes, int]:
    """Fork, run *body* in the child, return its outcomes and the wait status."""
    r, w = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns about fork() in a multi-threaded process. The child
        # only runs *body* and leaves with os._exit, so that hazard does not apply.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 0
        try:
            os.close(r)
            payload = json.dumps(body()).encode()
        except BaseException as exc:
            payload, code = json.dumps({"__error__": repr(exc)}).encode(), 3
        try:
            while payload:
                payload = payload[os.write(w, payload) :]
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as reader:
        data = reader.read()
    _, status = os.waitpid(pid, 0)
    return (json.loads(data) if data else {}), status


def attempt(fn: Callable[[], object]) -> str:
    """'ok', or the errno name (or exception type) of the failure."""
    try:
        fn()
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, type(exc).__name__)
    except Exception as exc:
        return type(exc).__name__
    return "ok"


@dataclass
class Tree:
    read: Path
    write: Path
    outside: Path
    port: int


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[Tree]:
    """read/, write/ and outside/ directories, and a TCP listener on 127.0.0.1."""
    for name in ("read", "write", "outside"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "data.txt").write_text(f"{name}\n")
    (tmp_path / "read" / "sibling.txt").write_text("sibling\n")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        port = srv.getsockname()[1]
        yield Tree(tmp_path / "read", tmp_path / "write", tmp_path / "outside", port)


def _write(path: Path) -> None:
    with open(path, "w") as fh:
        fh.write("x")


def _connect(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as c:
        c.settimeout(5)
        c.connect(("127.0.0.1", port))


def probe(t: Tree, *, confined: bool) -> Outcomes:
    """Body run in the child: optionally apply Landlock, then try everything."""
    if confined:
        abi = apply_landlock(
            read_paths=[str(t.read), "/does/not/exist"], write_paths=[str(t.write)]
        )
        assert abi == ABI
    out = {
        "read_inside": attempt((t.read / "data.txt").read_text),
        "list_inside": attempt(lambda: os.listdir(t.read)),
        "read_outside": attempt((t.outside / "data.txt").read_text),
        "list_outside": attempt(lambda: os.listdir(t.outside)),
        "write_in_read_dir": attempt(lambda: _write(t.read / "new.txt")),
        "write_outside": attempt(lambda: _write(t.outside / "new.txt")),
        "write_inside": attempt(lambda: _write(t.write / "new.txt")),
        "read_back_inside": attempt((t.write / "new.txt").read_text),
        "mkdir_inside": attempt((t.write / "sub").mkdir),
        "rmdir_inside": attempt((t.write / "sub").rmdir),
        "unlink_inside": attempt((t.write / "new.txt").unlink),
        "tcp_connect": attempt(lambda: _connect(t.port)),
        "signal_parent": attempt(lambda: os.kill(os.getppid(), 0)),
        "signal_self": attempt(lambda: os.kill(os.getpid(), 0)),
    }
    if Path("/etc/hostname").exists():
        out["read_etc_hostname"] = attempt(lambda: Path("/etc/hostname").read_text())
    return out


def test_control_without_landlock_everything_works(tree: Tree) -> None:
    out, status = run_in_child(lambda: probe(tree, confined=False))
    assert os.waitstatus_to_exitcode(status) == 0, out
    assert out == dict.fromkeys(out, "ok")


def test_landlock_confines_filesystem(tree: Tree) -> None:
    out, status = run_in_child(lambda: probe(tree, confined=True))
    assert os.waitstatus_to_exitcode(status) == 0, out
    for key in ("read_inside", "list_inside", "signal_self"):
        assert out[key] == "ok", key
    for key in ("write_inside", "read_back_inside", "mkdir_inside", "rmdir_inside"):
        assert out[key] == "ok", key
    assert out["unlink_inside"] == "ok"
    for key in ("read_outside", "list_outside", "write_in_read_dir", "write_outside"):
        assert out[key] == "EACCES", key
    assert out.get("read_etc_hostname", "EACCES") == "EACCES"
    assert not (tree.outside / "new.txt").exists()
    assert not (tree.read / "new.txt").exists()


@pytest.mark.skipif(ABI < 4, reason=f"Landlock ABI {ABI} < 4 cannot restrict TCP")
def test_landlock_denies_tcp_connect(tree: Tree) -> None:
    out, _ = run_in_child(lambda: probe(tree, confined=True))
    assert out["tcp_connect"] == "EACCES"


@pytest.mark.skipif(ABI < 6, reason=f"Landlock ABI {ABI} < 6 has no signal scoping")
def test_landlock_scopes_signals(tree: Tree) -> None:
    out, _ = run_in_child(lambda: probe(tree, confined=True))
    assert out["signal_parent"] == "EPERM"
    assert out["signal_self"] == "ok"


def test_rule_on_a_single_file(tree: Tree) -> None:
    def body() -> Outcomes:
        apply_landlock(read_paths=[str(tree.read / "data.txt")], write_paths=[], scope=False)
        return {
            "the_file": attempt((tree.read / "data.txt").read_text),
            "its_sibling": attempt((tree.read / "sibling.txt").read_text),
            "its_dir": attempt(lambda: os.listdir(tree.read)),
        }

    out, status = run_in_child(body)
    assert os.waitstatus_to_exitcode(status) == 0, out
    assert out == {"the_file": "ok", "its_sibling": "EACCES", "its_dir": "EACCES"}


@pytest.mark.skipif(ABI >= 8, reason="ABI 8+ restricts every thread (TSYNC)")
@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc to see threads")
def test_refuses_to_leave_other_threads_unconfined(tree: Tree) -> None:
    def body() -> Outcomes:
        stop = threading.Event()
        thread = threading.Thread(target=stop.wait)
        thread.start()
        try:
            result = attempt(lambda: apply_landlock(read_paths=[], write_paths=[]))
        finally:
            stop.set()
            thread.join()
        return {
            "apply": result,
            "outside_still_readable": attempt(lambda: os.listdir(tree.outside)),
        }

    out, _ = run_in_child(body)
    assert out == {"apply": "EBUSY", "outside_still_readable": "ok"}
