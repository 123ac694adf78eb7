"""A conversation with a child: the host answers its questions, then reads its answer, and a
child that asks too much, too long or out of protocol is cut off. The "child" here is a
thread on the other end of a socket pair, speaking the wire as a confined child does."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from geomint.confine import CallTimeoutError, Child, ChildDiedError, Pool, WorkerStartError, _wire


def _child(behave: Callable[[socket.socket], None]) -> Iterator[Child]:
    host, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)

    def run() -> None:
        try:
            _wire.receive_descriptors(child, limit=0)
            _wire.read_frame(child, limit=1 << 16)
            child.sendall(_wire.READY)
            behave(child)
        except (OSError, EOFError):
            pass  # the host hung up on it, as it should have
        finally:
            child.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield Child(pid=-1, sock=host, pidfd=-1)
    thread.join(timeout=5)


@pytest.fixture
def child(request: pytest.FixtureRequest) -> Iterator[Child]:
    yield from _child(request.param)


def _asks_twice(sock: socket.socket) -> None:
    first = _wire.ask(sock, b"ab", limit=100)
    second = _wire.ask(sock, b"cd", limit=100)
    _wire.write_answer(sock, first + b"|" + second)


@pytest.mark.parametrize("child", [_asks_twice], indirect=True)
def test_each_question_is_answered_and_the_answer_returned(child: Child) -> None:
    asked: list[bytes] = []

    def answer(question: bytes) -> bytes:
        asked.append(question)
        return question.upper()

    reply = child.converse(b"go", timeout_s=5, max_reply=100, answer=answer)

    assert reply == b"AB|CD"
    assert asked == [b"ab", b"cd"]


def _asks_forever(sock: socket.socket) -> None:
    while True:
        _wire.ask(sock, b"more", limit=100)


@pytest.mark.parametrize("child", [_asks_forever], indirect=True)
def test_a_child_asking_past_its_questions_is_cut_off(child: Child) -> None:
    with pytest.raises(OverflowError, match="asked more than 3 questions"):
        child.converse(b"go", timeout_s=5, max_reply=100, answer=lambda q: b"x", max_questions=3)


def _asks_big(sock: socket.socket) -> None:
    _wire.ask(sock, b"x" * 5000, limit=100)


@pytest.mark.parametrize("child", [_asks_big], indirect=True)
def test_a_question_past_its_size_is_refused_unread(child: Child) -> None:
    with pytest.raises(OverflowError, match="question of 5,000 bytes"):
        child.converse(b"go", timeout_s=5, max_reply=100, answer=lambda q: b"x", max_question=1000)


def _untagged(sock: socket.socket) -> None:
    _wire.write_frame(sock, b"!not a tag")


@pytest.mark.parametrize("child", [_untagged], indirect=True)
def test_a_frame_without_a_tag_breaks_the_protocol(child: Child) -> None:
    with pytest.raises(ChildDiedError, match="protocol"):
        child.converse(b"go", timeout_s=5, max_reply=100, answer=lambda q: b"x")


def _silent(sock: socket.socket) -> None:
    sock.recv(1)  # waits until the host hangs up


@pytest.mark.parametrize("child", [_silent], indirect=True)
def test_a_silent_child_is_stopped_at_the_wall_clock(child: Child) -> None:
    with pytest.raises(CallTimeoutError):
        child.converse(b"go", timeout_s=0.2, max_reply=100, answer=lambda q: b"x")


@pytest.mark.parametrize("child", [_asks_twice], indirect=True)
def test_what_the_answer_raises_reaches_the_caller(child: Child) -> None:
    def refuse(question: bytes) -> bytes:
        raise LookupError("no such range")

    with pytest.raises(LookupError, match="no such range"):
        child.converse(b"go", timeout_s=5, max_reply=100, answer=refuse)


def test_a_pool_whose_handler_cannot_load_says_so() -> None:
    pool = Pool(handler="geomint.no_such_handler", children=1, memory_mb=256, cpu_s=5, scratch_mb=1)
    try:
        with pytest.raises(WorkerStartError, match="no_such_handler"):
            pool.child(30.0)
        assert pool.turn(0.1)
        assert not pool.turn(0.05)  # one turn, held
        pool.done()
    finally:
        pool.close()
