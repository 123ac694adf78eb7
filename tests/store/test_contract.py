"""What every store and the Chats API on top of it must do, run against each store."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from geomint.errors import UsageError
from geomint.provenance import Value
from geomint.state import (
    BlobRef,
    ChatCreated,
    EntryWritten,
    Event,
    FetchMissed,
    MessageAdded,
    ValueMinted,
)
from geomint.store import (
    Chats,
    ConcurrentAppendError,
    MemoryStore,
    NoSuchChatError,
    RefusedEventError,
    Store,
)

MISS = FetchMissed(tool="search_places", provider="offline", reason="nothing there")


def user(text: str, message_id: str) -> MessageAdded:
    return MessageAdded(message_id=message_id, role="user", parts=({"kind": "text", "text": text},))


def test_append_numbers_and_stamps(store: Store) -> None:
    before = datetime.now(UTC)
    first = store.append("c1", "r1", [ChatCreated(), MISS])
    second = store.append("c1", "r2", [MISS])
    assert [e.seq for e in (*first, *second)] == [1, 2, 3]
    assert all(before <= e.at <= datetime.now(UTC) for e in (*first, *second))
    assert list(store.read("c1")) == [*first, *second]
    assert [e.seq for e in store.read("c1", after=1)] == [2, 3]
    assert [e.seq for e in store.read("c1", run_id="r2")] == [3]
    assert store.last_seq("c1") == 3
    assert store.last_seq("nobody") == 0
    assert list(store.read("nobody")) == []


def test_chats_are_numbered_separately(store: Store) -> None:
    store.append("a", "r", [ChatCreated()])
    store.append("b", "r", [ChatCreated(), MISS])
    assert (store.last_seq("a"), store.last_seq("b")) == (1, 2)
    assert store.chat_ids() == ["a", "b"]


def test_expected_last_seq_guards_appends(store: Store) -> None:
    store.append("c1", "r", [ChatCreated()])
    with pytest.raises(ConcurrentAppendError, match="moved on from event 0 to 1"):
        store.append("c1", "r", [MISS], expected_last_seq=0)
    assert store.last_seq("c1") == 1
    assert store.append("c1", "r", [MISS], expected_last_seq=1)[0].seq == 2


def test_a_refused_append_does_not_create_the_chat(store: Store) -> None:
    with pytest.raises(ConcurrentAppendError):
        store.append("ghost", "r", [MISS], expected_last_seq=3)
    assert (store.chat_ids(), store.last_seq("ghost")) == ([], 0)


def test_an_empty_append_is_a_usage_error(store: Store) -> None:
    with pytest.raises(UsageError, match="at least one event"):
        store.append("c1", "r", [])


def test_blobs_are_stored_once_by_content(store: Store) -> None:
    data = b'{"type":"FeatureCollection","features":[]}'
    ref = store.put_blob("c1", data, "application/geo+json")
    assert store.put_blob("c1", data, "application/geo+json") == ref
    assert ref.size == len(data)
    assert store.get_blob("c1", ref) == data
    with pytest.raises(KeyError):
        store.get_blob("other-chat", ref)


def test_snapshots_keep_the_newest(store: Store) -> None:
    store.append("c1", "r", [ChatCreated(), *[MISS] * 9])
    store.save_snapshot("c1", 10, "t1", b"ten")
    store.save_snapshot("c1", 5, "t1", b"five")
    assert store.load_snapshot("c1", "t1") == (10, b"ten")
    assert store.load_snapshot("c1", "t2") is None


def test_a_snapshot_is_saved_only_for_a_chat_that_reached_it(store: Store) -> None:
    store.save_snapshot("ghost", 1, "t", b"no chat")
    store.append("c1", "r", [ChatCreated(), MISS])
    store.save_snapshot("c1", 3, "t", b"ahead of the log")
    assert (store.load_snapshot("ghost", "t"), store.load_snapshot("c1", "t")) == (None, None)
    store.save_snapshot("c1", 2, "t", b"two")
    assert store.load_snapshot("c1", "t") == (2, b"two")
    store.purge("c1")
    store.save_snapshot("c1", 2, "t", b"folded before the purge")
    assert (store.chat_ids(), store.load_snapshot("c1", "t")) == ([], None)


def test_an_invalid_append_stores_nothing(store: Store) -> None:
    with pytest.raises(ValueError, match="run_id"):
        store.append("c1", "r" * 129, [ChatCreated()])
    with pytest.raises(ValueError, match="chat_id"):
        store.append("has space", "r", [ChatCreated()])
    assert (store.chat_ids(), store.last_seq("c1")) == ([], 0)


def test_an_import_that_does_not_start_a_chat_is_refused(store: Store) -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(UsageError, match="at least one event"):
        store.import_events("c1", [])
    with pytest.raises(UsageError, match="must begin with a chat_created event, not fetch"):
        store.import_events("c1", [Event(seq=1, at=at, chat_id="c1", run_id="r", body=MISS)])
    with pytest.raises(UsageError, match="belong to chat 'c2', not 'c1'"):
        store.import_events(
            "c1", [Event(seq=1, at=at, chat_id="c2", run_id="r", body=ChatCreated())]
        )
    assert store.chat_ids() == []


def test_purge_removes_everything(store: Store) -> None:
    store.append("c1", "r", [ChatCreated()])
    ref = store.put_blob("c1", b"x", "text/plain")
    store.save_snapshot("c1", 1, "t", b"s")
    store.purge("c1")
    assert (store.last_seq("c1"), store.chat_ids(), store.load_snapshot("c1", "t")) == (0, [], None)
    with pytest.raises(KeyError):
        store.get_blob("c1", ref)


def test_threads_appending_to_one_chat_lose_nothing(store: Store) -> None:
    store.append("c1", "r", [ChatCreated()])

    def writer(number: int) -> None:
        for i in range(25):
            reason = f"thread {number} event {i}"
            store.append("c1", f"t{number}", [FetchMissed(tool="t", provider="p", reason=reason)])

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    log = list(store.read("c1"))
    assert [e.seq for e in log] == list(range(1, 202))
    for n in range(8):
        mine = [e.body.reason for e in log if e.run_id == f"t{n}"]  # type: ignore[union-attr]
        assert mine == [f"thread {n} event {i}" for i in range(25)]


# -- the Chats API -----------------------------------------------------------------------


def test_create_open_and_ids(chats: Chats) -> None:
    ws = chats.create("trip-planning")
    assert (ws.chat_id, ws.last_seq) == ("trip-planning", 1)
    generated = chats.create()
    assert len(generated.chat_id) == 16 and generated.chat_id != ws.chat_id
    with pytest.raises(UsageError, match="a chat with id 'trip-planning' already exists"):
        chats.create("trip-planning")
    with pytest.raises(UsageError, match="must be 1-64 letters, digits"):
        chats.create("no spaces/please")
    with pytest.raises(NoSuchChatError, match="no chat 'missing' in this store"):
        chats.open("missing")


def test_a_refused_event_appends_nothing(chats: Chats) -> None:
    chats.create("c1")
    stray = EntryWritten(
        entry_id="places-1", kind="places", version=2, label="x", blob=_ref(chats, "c1")
    )
    with pytest.raises(RefusedEventError) as caught:
        chats.append("c1", "r1", [user("hi", "m1"), stray])
    assert str(caught.value) == (
        "event 1 (entry_written) refused: places-1 version 2 cannot follow nothing; "
        "write version 1; nothing was appended"
    )
    assert chats.open("c1").last_seq == 1


def test_a_value_id_that_was_never_minted_cannot_be_reused(chats: Chats) -> None:
    chats.create("c1")
    at = datetime(2026, 1, 1, tzinfo=UTC)
    chats.append("c1", "r", [ValueMinted(value=Value(id="v1", label="a", value=1, minted_at=at))])
    with pytest.raises(RefusedEventError, match="v1 was already minted in this chat"):
        chats.append(
            "c1", "r", [ValueMinted(value=Value(id="v1", label="b", value=2, minted_at=at))]
        )


def test_list_orders_by_newest_message_and_hides_deleted(chats: Chats) -> None:
    for chat_id, question in [("a", "first question"), ("b", "second question")]:
        chats.create(chat_id)
        chats.append(chat_id, "r", [user(question, "m1")])
    chats.append("a", "r", [user("a follow-up", "m2")])
    assert [(c.chat_id, c.title, c.message_count) for c in chats.list_chats()] == [
        ("a", "first question", 2),
        ("b", "second question", 1),
    ]
    chats.delete("a")
    assert [c.chat_id for c in chats.list_chats()] == ["b"]
    assert [c.chat_id for c in chats.list_chats(include_deleted=True)] == ["a", "b"]
    with pytest.raises(RefusedEventError, match="chat 'a' was deleted"):
        chats.append("a", "r", [user("anyone?", "m3")])
    assert chats.purge_deleted() == ["a"]
    assert chats.store.chat_ids() == ["b"]


def test_a_rename_is_stored_read_back_exported_and_checked(chats: Chats) -> None:
    chats.create("c1")
    chats.append("c1", "r", [user("first question", "m1")])
    assert chats.rename("c1", "My chat").title == "My chat"
    for i in range(6):  # past a snapshot: the title is folded in, not recomputed
        chats.append("c1", "r", [user(f"question {i}", f"n{i}")])
    assert [c.title for c in chats.list_chats()] == ["My chat"]
    assert chats.open("c1").first_question == "first question"
    copy = chats.import_(chats.export("c1"), chat_id="c2")
    assert chats.open(copy).title == "My chat"
    with pytest.raises(RefusedEventError, match="a chat title cannot be empty"):
        chats.rename("c1", "")
    chats.delete("c1")
    with pytest.raises(RefusedEventError, match="chat 'c1' was deleted"):
        chats.rename("c1", "Back")
    with pytest.raises(NoSuchChatError):
        chats.rename("nowhere", "Mine")


def test_snapshots_are_used_and_a_damaged_one_is_ignored(chats: Chats) -> None:
    chats.create("c1")
    for i in range(12):
        chats.append("c1", "r", [user(f"question {i}", f"m{i}")])
    full = chats.open("c1")
    held = chats.store.load_snapshot("c1", _tag())
    assert held is not None and held[0] >= 6
    chats.store.save_snapshot("c1", full.last_seq, _tag(), b"{not json")
    assert chats.store.load_snapshot("c1", _tag()) == (full.last_seq, b"{not json")
    assert chats.open("c1") == full


def test_a_snapshot_folded_while_the_chat_is_purged_does_not_outlive_it(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    chats = Chats(store, snapshot_after=10**6)  # no snapshot yet
    chats.create("x")
    chats.append("x", "r", [user("old secret", "m1")])
    chats.delete("x")
    real_read = store.read

    def read_then_purge(chat_id: str, **kw: Any) -> Iterator[Event]:
        events = list(real_read(chat_id, **kw))  # open() has read the log ...
        monkeypatch.setattr(store, "read", real_read)
        assert Chats(store).purge_deleted() == ["x"]  # ... when retention purges it
        yield from events

    monkeypatch.setattr(store, "read", read_then_purge)
    assert Chats(store, snapshot_after=1).open("x").deleted  # and saves a snapshot
    assert (store.chat_ids(), store.load_snapshot("x", _tag())) == ([], None)
    reused = chats.create("x")
    assert (reused.last_seq, reused.deleted, reused.title) == (1, False, None)
    assert chats.append("x", "r", [user("hi", "m1")]).title == "hi"


def test_open_ignores_a_snapshot_past_the_end_of_the_log() -> None:
    # Written before saves were checked: a purge raced it and the id was reused.
    store = MemoryStore()
    chats = Chats(store, snapshot_after=1)
    chats.create("x")
    chats.append("x", "r", [user("old secret", "m1")])
    stale = chats.open("x")
    store.purge("x")
    chats.create("x")
    store._snapshots["x"] = (stale.last_seq, _tag(), stale.model_dump_json().encode())
    assert chats.open("x").title is None


def test_export_and_import_restore_the_chat_exactly(chats: Chats) -> None:
    chats.create("c1")
    ref = chats.store.put_blob("c1", b'{"features": []}', "application/geo+json")
    entry = EntryWritten(entry_id="byod-1", kind="byod", version=1, label="parcels", blob=ref)
    chats.append("c1", "r1", [user("load my parcels", "m1"), entry])
    exported = json.loads(json.dumps(chats.export("c1")))
    assert chats.import_(exported, chat_id="copy") == "copy"
    original, copy = chats.open("c1"), chats.open("copy")
    assert copy.model_copy(update={"chat_id": "c1"}) == original
    assert [e.model_copy(update={"chat_id": "c1"}) for e in chats.trace("copy")] == chats.trace(
        "c1"
    )
    assert chats.read_blob("copy", ref) == b'{"features": []}'
    with pytest.raises(UsageError, match="chat 'copy' already exists"):
        chats.import_(exported, chat_id="copy")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"format": "zip"}, "not a geomint chat export"),
        ({"format": "geomint-chat", "chat_id": "x"}, "the chat export is damaged"),
        (
            {"format": "geomint-chat", "chat_id": "x", "events": [{"seq": 1}]},
            "the chat export is damaged",
        ),
    ],
)
def test_a_bad_import_is_refused_and_stores_nothing(
    chats: Chats, data: dict[str, object], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        chats.import_(data)
    assert chats.store.chat_ids() == []


@pytest.mark.parametrize(
    ("chat_id", "data"),
    [
        ("../../etc", {}),
        ("has space", {}),
        ("x" * 65, {}),
        ("", {}),
        (None, {"chat_id": None}),
        (None, {"chat_id": 7}),
    ],
)
def test_an_import_under_an_invalid_chat_id_is_refused(
    chats: Chats, chat_id: str | None, data: dict[str, object]
) -> None:
    chats.create("real")
    exported = {**chats.export("real"), **data}
    with pytest.raises(UsageError, match=r"cannot import under chat id .*URL-safe"):
        chats.import_(exported, chat_id=chat_id)
    assert chats.store.chat_ids() == ["real"]


def test_an_export_without_events_or_chat_created_is_refused(chats: Chats) -> None:
    with pytest.raises(UsageError, match="the chat export has no events"):
        chats.import_({"format": "geomint-chat", "chat_id": "empty", "events": []})
    chats.create("real")
    chats.append("real", "r", [user("hi", "m1")])
    exported = chats.export("real")
    headless = {**exported, "events": exported["events"][1:]}
    with pytest.raises(UsageError, match="begins with message_added, not chat_created"):
        chats.import_(headless, chat_id="copy")
    assert chats.store.chat_ids() == ["real"]
    assert [c.chat_id for c in chats.list_chats()] == ["real"]
    assert chats.purge_deleted() == []


def test_an_export_of_two_chats_is_refused(chats: Chats) -> None:
    chats.create("a")
    chats.create("b")
    chats.append("a", "r", [user("hi", "m1")])
    mixed = chats.export("a")
    mixed["events"][1] = {**chats.export("b")["events"][0], "seq": 2}
    with pytest.raises(UsageError, match=r"belong to 2 chats \('a', 'b'\)"):
        chats.import_(mixed, chat_id="copy")
    assert chats.store.chat_ids() == ["a", "b"]


def test_a_refused_import_leaves_no_blob_behind(chats: Chats) -> None:
    chats.create("real")
    exported = chats.export("real")
    junk = _blob(b"junk")
    with pytest.raises(UsageError, match="chat 'real' already exists"):
        chats.import_({**exported, "blobs": dict([junk])}, chat_id="real")
    with pytest.raises(UsageError, match=r"blob 0{12}\.\.\. does not match"):
        chats.import_(
            {**exported, "blobs": dict([_blob(b"a"), ("0" * 64, junk[1])])}, chat_id="orphan"
        )
    assert chats.store.chat_ids() == ["real"]
    for chat_id, data in [("real", b"junk"), ("orphan", b"a")]:
        with pytest.raises(KeyError):
            chats.store.get_blob(chat_id, BlobRef(sha256=_sha(data), size=len(data)))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _blob(data: bytes) -> tuple[str, dict[str, str]]:
    return _sha(data), {"media_type": "text/plain", "data": base64.b64encode(data).decode()}


def _ref(chats: Chats, chat_id: str):  # type: ignore[no-untyped-def]
    return chats.store.put_blob(chat_id, b"{}", "application/geo+json")


def _tag() -> str:
    from geomint.store.chats import _snapshot_tag

    return _snapshot_tag()
