"""The workspace is a pure fold: what each event does, and what cannot follow what."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from geomint.provenance import Conflict, EntryVersion, Value
from geomint.state import (
    BODY_ADAPTER,
    EVENT_ADAPTER,
    AnalysisRecorded,
    ApprovalAsked,
    ApprovalGiven,
    ApprovalRefused,
    BlobRef,
    ChatCreated,
    ChatDeleted,
    ChatRenamed,
    CorruptLogError,
    EntryDisplayChanged,
    EntryWritten,
    Event,
    EventBody,
    FetchMade,
    FetchMissed,
    MessageAdded,
    ObservationRecorded,
    ToolFailed,
    ValueMinted,
    Workspace,
    fold,
)

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
BLOB = BlobRef(sha256="ab" * 32, size=10)


def events(*bodies: EventBody, chat: str = "c1", run: str = "r1") -> list[Event]:
    return [
        Event(seq=i, at=T0 + timedelta(seconds=i), chat_id=chat, run_id=run, body=b)
        for i, b in enumerate(bodies, start=1)
    ]


def written(entry_id: str, version: int = 1, label: str = "cafés") -> EntryWritten:
    kind = entry_id.rsplit("-", 1)[0]
    return EntryWritten(entry_id=entry_id, kind=kind, version=version, label=label, blob=BLOB)  # type: ignore[arg-type]


def value(value_id: str, figure: float = 10, unit: str = "people") -> Value:
    return Value(id=value_id, label=f"figure {value_id}", value=figure, unit=unit, minted_at=T0)


def user(text: str, message_id: str = "m1") -> MessageAdded:
    return MessageAdded(message_id=message_id, role="user", parts=({"kind": "text", "text": text},))


def test_entries_by_kind_with_versions_and_display() -> None:
    ws = fold(
        events(
            ChatCreated(),
            written("places-1"),
            written("routes-1", label="to work"),
            written("places-1", version=2, label="cafés, open now"),
            EntryDisplayChanged(entry_id="places-1", visible=False),
            written("byod-1", label="my parcels"),
        ),
        "c1",
    )
    assert [e.entry_id for e in ws.places] == ["places-1"]
    assert ws.places[0].version == 2
    assert ws.places[0].latest.label == "cafés, open now"
    assert [v.label for v in ws.places[0].versions] == ["cafés", "cafés, open now"]
    assert ws.places[0].visible is False
    assert [e.entry_id for e in ws.routes] == ["routes-1"]
    assert [e.entry_id for e in ws.byod] == ["byod-1"]
    assert ws.ranges == ws.incidents == ws.geometries == ws.traffic_area_analytics == ()
    assert ws.next_entry_id("places") == "places-2"
    assert ws.next_entry_id("ranges") == "ranges-1"


def test_a_removed_entry_is_hidden_and_showing_it_puts_it_back() -> None:
    def after(*changes: EntryDisplayChanged) -> tuple[bool, bool]:
        entry = fold(events(ChatCreated(), written("places-1"), *changes), "c1").places[0]
        return entry.visible, entry.removed

    off = EntryDisplayChanged(entry_id="places-1", removed=True)
    assert after() == (True, False)
    assert after(off) == (False, True)
    assert after(off, EntryDisplayChanged(entry_id="places-1", removed=False)) == (True, False)
    # Shown again (a display tool, the checkbox): back on the map and in the list.
    assert after(off, EntryDisplayChanged(entry_id="places-1", visible=True)) == (True, False)
    # Hiding a removed entry leaves it removed; putting it back hidden keeps it hidden.
    assert after(off, EntryDisplayChanged(entry_id="places-1", visible=False)) == (False, True)
    back_hidden = EntryDisplayChanged(entry_id="places-1", removed=False, visible=False)
    assert after(off, back_hidden) == (False, False)


def test_an_unset_removed_is_left_out_of_the_stored_event() -> None:
    # A chat written before `removed` existed is written back byte for byte.
    hidden = EntryDisplayChanged(entry_id="places-1", visible=False)
    assert "removed" not in BODY_ADAPTER.dump_python(hidden, mode="json")
    removed = EntryDisplayChanged(entry_id="places-1", removed=True)
    assert BODY_ADAPTER.dump_python(removed, mode="json")["removed"] is True
    assert BODY_ADAPTER.validate_json(BODY_ADAPTER.dump_json(removed)) == removed


def test_title_and_order_are_computed_from_messages() -> None:
    long_question = "Which schools are more than 800 m from a bus stop, " * 3
    ws = fold(
        events(
            ChatCreated(),
            MessageAdded(message_id="s", role="system", parts=({"kind": "text", "text": "x"},)),
            user(long_question),
            MessageAdded(message_id="a", role="assistant", parts=({"kind": "text", "text": "…"},)),
        ),
        "c1",
    )
    assert ws.title is not None and len(ws.title) == 80 and ws.title.endswith("…")
    assert ws.title.startswith("Which schools are more than 800 m from a bus stop, Which")
    assert ws.message_count == 3
    assert ws.last_message_at == T0 + timedelta(seconds=4)


def upload(name: str, message_id: str = "u1") -> MessageAdded:
    part = {"kind": "upload", "name": name, "entry_id": "byod-1", "label": name}
    return MessageAdded(message_id=message_id, role="user", parts=(part,))


def test_a_persons_title_wins_over_the_derived_one_until_renamed_again() -> None:
    log = events(ChatCreated(), user("Cafés near me"), ChatRenamed(title="Coffee"))
    ws = fold(log, "c1")
    assert (ws.title, ws.named, ws.first_question) == ("Coffee", "Coffee", "Cafés near me")
    later = fold(
        events(*(e.body for e in log), user("And bakeries?", "m2"), ChatRenamed(title="Bakeries")),
        "c1",
    )
    assert later.title == "Bakeries" and later.message_count == 2
    # A rename is not a message: the chat's date (and place in the list) stays put.
    assert ws.last_message_at == T0 + timedelta(seconds=2)
    assert fold(events(ChatCreated(), ChatRenamed(title="Plans")), "c1").title == "Plans"


def test_an_upload_only_chat_is_titled_by_its_first_files_name() -> None:
    ws = fold(events(ChatCreated(), upload("bus stops.csv"), upload("trams.csv", "u2")), "c1")
    assert ws.title == "bus stops.csv"
    # A question says more than a file's name, whichever came first (as chats always read).
    asked = fold(events(ChatCreated(), upload("bus stops.csv"), user("Count them")), "c1")
    assert asked.title == "Count them"
    long = fold(events(upload("x" * 120 + ".geojson")), "c1")
    assert long.title is not None and len(long.title) == 80 and long.title.endswith("…")


@pytest.mark.parametrize(
    ("title", "problem"),
    [
        ("", "a chat title cannot be empty"),
        (" padded", "a chat title cannot begin or end with spaces"),
        ("y" * 201, "a chat title may be at most 200 characters; this one is 201"),
        ("tab\there", "it cannot hold control characters (U+0009)"),
        ("\u2067hidden", "cannot hold text-direction overrides (U+2067)"),
        ("\ud800", "it cannot hold control characters (U+D800)"),
    ],
    ids=["empty", "padded", "too-long", "tab", "bidi-isolate", "lone-surrogate"],
)
def test_a_rename_event_holds_only_a_title(title: str, problem: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(problem)):
        ChatRenamed(title=title)
    assert ChatRenamed(title="y" * 200).title == "y" * 200


def test_a_deleted_chat_cannot_be_renamed() -> None:
    ws = fold(events(ChatCreated(), ChatDeleted()), "c1")
    assert ws.refusal(ChatRenamed(title="Back")) == "chat 'c1' was deleted"


def test_fetches_misses_failures_and_analyses() -> None:
    analysis = AnalysisRecorded(
        analysis_id="a1",
        code="return 1",
        code_hash="0" * 64,
        inputs=(EntryVersion(entry_id="places-1", version=1),),
        monitored=True,
    )
    ws = fold(
        events(
            written("places-1"),
            FetchMade(tool="search_places", provider="offline", entry_id="places-1"),
            FetchMissed(tool="search_places", provider="offline", reason="no cafés in Ny-Ålesund"),
            ToolFailed(tool="route", error="no road"),
            analysis,
        ),
        "c1",
    )
    assert ws.fetches == 2
    assert [m.reason for m in ws.misses] == ["no cafés in Ny-Ålesund"]
    assert [f.error for f in ws.failures] == ["no road"]
    assert ws.monitored == (analysis,) and ws.trackers == ()
    assert ws.next_analysis_id() == "a2"


def test_the_ledger_and_observations_fold() -> None:
    v1, v2 = value("v1", 120), value("v2", 100)
    conflict = Conflict(a=v1, b=v2, reason="census vs model")
    ws = fold(
        events(
            ValueMinted(value=v1), ValueMinted(value=v2), ObservationRecorded(conflict=conflict)
        ),
        "c1",
    )
    assert [v.id for v in ws.ledger.values] == ["v1", "v2"]
    assert ws.ledger.next_value_id == "v3"
    assert ws.observations[0].ratio == 1.2


def test_approvals() -> None:
    ws = fold(
        events(
            ApprovalAsked(approval_id="p1", tool="send_email"),
            ApprovalAsked(approval_id="p2", tool="delete_layer"),
            ApprovalGiven(approval_id="p1"),
        ),
        "c1",
    )
    assert [a.asked.approval_id for a in ws.pending_approvals] == ["p2"]
    assert ws.approvals["p1"].answer == "given"
    assert ws.refusal(ApprovalRefused(approval_id="p1")) == "approval 'p1' was already given"
    assert ws.refusal(ApprovalGiven(approval_id="p9")) == "no approval 'p9' was asked in this chat"


def test_folding_in_parts_equals_folding_at_once() -> None:
    log = events(
        ChatCreated(), user("hello"), written("places-1"), ValueMinted(value=value("v1")),
        written("places-1", version=2), ChatDeleted(),
    )  # fmt: skip
    whole = fold(log, "c1")
    for cut in range(len(log) + 1):
        assert fold(log[cut:], fold(log[:cut], "c1")) == whole
    assert whole.deleted is True
    assert Workspace.model_validate_json(whole.model_dump_json()) == whole


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            written("places-1", version=3),
            "places-1 version 3 cannot follow version 1; write version 2",
        ),
        (
            written("routes-1", version=2),
            "routes-1 version 2 cannot follow nothing; write version 1",
        ),
        (
            EntryDisplayChanged(entry_id="ranges-4", visible=True),
            "no entry 'ranges-4' in this chat",
        ),
        (ValueMinted(value=value("v1")), "cannot apply v1: v1 was already minted in this chat"),
        (
            AnalysisRecorded(analysis_id="a1", code="", code_hash="0" * 64),
            "analysis a1 was already recorded",
        ),
        (
            ObservationRecorded(conflict=Conflict(a=value("v1"), b=value("v9"), reason="x")),
            "v9 was never minted in this chat",
        ),
    ],
)
def test_what_cannot_follow_is_refused_with_a_reason(body: EventBody, reason: str) -> None:
    ws = fold(
        events(
            written("places-1"),
            ValueMinted(value=value("v1")),
            AnalysisRecorded(analysis_id="a1", code="", code_hash="0" * 64),
        ),
        "c1",
    )
    refusal = ws.refusal(body)
    assert refusal is not None and refusal.startswith(reason)


def test_an_observation_checks_values_minted_before_a_snapshot() -> None:
    log = events(
        ValueMinted(value=value("v1")), ValueMinted(value=value("v2")),
        ObservationRecorded(conflict=Conflict(a=value("v1"), b=value("v2"), reason="x")),
    )  # fmt: skip
    snapshot = Workspace.model_validate_json(fold(log[:2], "c1").model_dump_json())
    assert fold(log[2:], snapshot) == fold(log, "c1")


def test_a_deleted_chat_takes_nothing_more() -> None:
    ws = fold(events(ChatCreated(), ChatDeleted()), "c1")
    assert ws.refusal(user("still there?")) == "chat 'c1' was deleted"


@pytest.mark.parametrize(
    ("log", "message"),
    [
        (events(ChatCreated())[0:1] * 2, "event 1 follows event 1: the log has a gap"),
        (events(ChatCreated(), chat="other"), "event 1 belongs to chat 'other', not 'c1'"),
        (events(written("places-1", version=2)), "places-1 version 2 where version 1 was due"),
        (
            events(ValueMinted(value=value("v2")), ValueMinted(value=value("v1"))),
            "v1 minted after v2: ids only grow",
        ),
        (events(ApprovalGiven(approval_id="x")), "approval 'x' answered out of turn"),
        (
            events(
                ApprovalAsked(approval_id="p1", tool="delete_layer"),
                ApprovalGiven(approval_id="p1"),
                ApprovalAsked(approval_id="p1", tool="delete_layer"),
            ),
            "approval 'p1' asked twice",
        ),
        (
            events(ChatCreated(), ChatDeleted(), user("back?")),
            "event 3 follows the chat's deletion",
        ),
        (events(ChatDeleted(), ChatDeleted()), "event 2 follows the chat's deletion"),
        (
            events(
                ValueMinted(value=value("v1")),
                ObservationRecorded(conflict=Conflict(a=value("v1"), b=value("v2"), reason="x")),
            ),
            "observation of v2, which was never minted",
        ),
    ],
)
def test_a_contradictory_log_does_not_fold(log: list[Event], message: str) -> None:
    with pytest.raises(CorruptLogError, match=message):
        fold(log, "c1")


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"type": "entry_deleted"}, "does not match any of the expected tags"),
        ({"type": "fetch_missed", "tool": "t", "provider": "p"}, "reason\n  Field required"),
        (
            {"type": "fetch_missed", "tool": "t", "provider": "p", "reason": "x", "extra": 1},
            "Extra inputs are not permitted",
        ),
        (
            {"type": "entry_written", "entry_id": "routes-1", "kind": "places", "version": 1,
             "label": "x", "blob": BLOB.model_dump()},
            "entry id 'routes-1' does not start with its kind 'places'",
        ),
        ({"type": "message_added", "message_id": "m", "role": "user", "parts": [{"text": "x"}]},
         "parts[0] needs a 'kind' string"),
    ],
)  # fmt: skip
def test_bad_event_bodies_are_refused(raw: dict[str, object], fragment: str) -> None:
    with pytest.raises(ValidationError) as caught:
        BODY_ADAPTER.validate_python(raw)
    assert fragment in str(caught.value)


def test_events_round_trip_through_json() -> None:
    for event in events(
        ChatCreated(),
        user("hi"),
        written("places-1"),
        ValueMinted(value=value("v1")),
        ChatRenamed(title="Hi, cafés"),
    ):
        assert EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(event)) == event


def test_an_event_needs_an_aware_timestamp() -> None:
    with pytest.raises(ValidationError, match="timezone"):
        Event(seq=1, at=datetime(2026, 1, 1), chat_id="c", run_id="r", body=ChatCreated())
