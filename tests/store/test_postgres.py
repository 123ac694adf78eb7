"""What only the PostgreSQL store does: migrations on a shared server, newer schemas."""

from __future__ import annotations

import psycopg
import pytest
from tests.store.postgres_server import fresh_database

from geomint.state import ChatCreated, FetchMissed
from geomint.store import SchemaTooNewError, StoreUnavailableError
from geomint.store._migrations import POSTGRES
from geomint.store.postgres import PostgresStore

pytestmark = pytest.mark.postgres


def test_a_database_at_the_first_migration_is_migrated_and_keeps_its_events() -> None:
    store = fresh_database()
    try:
        store.append(
            "c1", "r", [ChatCreated(), FetchMissed(tool="t", provider="p", reason="1e300")]
        )
        with psycopg.connect(store.url, autocommit=True) as conn:
            # Put the database back to how 0001 left it: bodies as JSONB, no later table.
            conn.execute("DELETE FROM migrations WHERE name <> %s", (POSTGRES[0][0],))
            conn.execute("ALTER TABLE events ALTER COLUMN body TYPE JSONB USING body::jsonb")
            conn.execute("DROP TABLE sources, source_countries, source_writes")
        reopened = PostgresStore(store.url)
        assert reopened.migrations() == [name for name, _ in POSTGRES]
        assert [e.seq for e in reopened.read("c1")] == [1, 2]
        assert reopened.append("c1", "r", [ChatCreated()])[0].seq == 3
        reopened.close()
    finally:
        store.close()


def test_a_newer_schema_is_refused_untouched() -> None:
    store = fresh_database()
    try:
        store.append("c1", "r", [ChatCreated()])
        with psycopg.connect(store.url, autocommit=True) as conn:
            conn.execute("INSERT INTO migrations (name) VALUES ('0999_from_the_future')")
        with pytest.raises(SchemaTooNewError, match="0999_from_the_future"):
            PostgresStore(store.url)
        assert store.last_seq("c1") == 1
    finally:
        store.close()


def test_an_unreachable_server_names_the_url_without_its_password(tmp_path: object) -> None:
    url = f"postgresql://ana:secret@/geomint?host={tmp_path}&connect_timeout=1"
    with pytest.raises(StoreUnavailableError) as caught:
        PostgresStore(url)
    assert "secret" not in str(caught.value)
    assert "ana@" in str(caught.value)
