"""A PostgreSQL server for the store tests, found or started without the internet.

:func:`fresh_database` returns a :class:`PostgresStore` on a new, empty database each call,
dropped when the store closes (or, at the latest, when the interpreter exits). The server
is the one ``GEOMINT_TEST_POSTGRES_URL`` names (its user needs CREATEDB), or else one this
module starts once per test session from the distribution's binaries
(``/usr/lib/postgresql/*/bin`` on Debian): a throwaway cluster in a temporary folder,
listening only on a UNIX socket there, trust authentication, ``fsync`` off, stopped and
deleted at exit. As root it runs as the ``postgres`` system user, since PostgreSQL refuses
to run as root.

When no server can be had, the test is skipped with the reason, or fails with it when the
``CI`` environment variable is set: CI must run the PostgreSQL leg for real.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import itertools
import os
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import NoReturn
from urllib.parse import quote, urlencode

import psycopg
import pytest
from psycopg import conninfo, sql

from geomint.store.postgres import PostgresStore, describe_url

__all__ = ["DURABLE_ENV", "URL_ENV", "fresh_database", "server_url"]

#: Names an existing server to test against instead of starting one.
URL_ENV = "GEOMINT_TEST_POSTGRES_URL"
#: Set (to anything) to start the server durable and on disk, as benchmarks need.
DURABLE_ENV = "GEOMINT_TEST_POSTGRES_DURABLE"

_PREFIX = "geomint-pg-"
_PORT = 5432  # only names the socket file: the server listens in its own folder
_SETTINGS = {
    # A throwaway cluster: durability buys nothing here and costs seconds.
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "listen_addresses": "",
    "max_connections": "200",
}


class _UnavailableError(Exception):
    """No server can be found or started; the message says why."""


class _Server:
    """A server this session may create databases on."""

    def __init__(self, admin_url: str, root: Path | None = None) -> None:
        self.admin_url = admin_url
        self.root = root  # the cluster's folder when this session started the server
        self._lock = threading.Lock()
        # Unique across sessions that share a server, and easy to trace to this one.
        session = f"{os.getpid()}_{secrets.token_hex(3)}"
        self._names = (f"geomint_test_{session}_{i}" for i in itertools.count())
        self._live: set[str] = set()
        self._admin: psycopg.Connection[tuple[object, ...]] | None = None

    def _query(self, query: sql.Composed | str, *params: object) -> object:
        """Run ``query`` on the admin database; return the first column of its first row."""
        if self._admin is None or self._admin.closed:
            self._admin = psycopg.connect(self.admin_url, autocommit=True, connect_timeout=10)
        cursor = self._admin.execute(query, params or None)
        row = cursor.fetchone() if cursor.description else None
        return row[0] if row else None

    def url_of(self, dbname: str) -> str:
        """Return a ``postgresql://`` URL of the database ``dbname`` on this server."""
        params = {k: str(v) for k, v in conninfo.conninfo_to_dict(self.admin_url).items() if v}
        params.pop("dbname", None)
        return f"postgresql:///{quote(dbname)}?{urlencode(params, safe='/')}"

    def create_database(self) -> str:
        with self._lock:
            name = next(self._names)
            self._query(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            self._live.add(name)
        return name

    def drop_database(self, name: str) -> None:
        with self._lock:
            if name not in self._live:
                return
            self._live.discard(name)
            # DROP polls every 100 ms for sessions still leaving; wait for them more finely.
            for _ in range(200):
                if not self._query(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", name
                ):
                    break
                time.sleep(0.005)
            self._query(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    def shutdown(self) -> None:
        """Drop what this session created; stop the server if this session started it."""
        if self.root is None:
            for name in list(self._live):
                with contextlib.suppress(psycopg.Error):
                    self.drop_database(name)
        if self._admin is not None:
            self._admin.close()
        if self.root is not None:
            _stop_cluster(self.root)


class _TestStore(PostgresStore):
    """A store whose database is dropped when it closes."""

    def __init__(self, server: _Server, dbname: str) -> None:
        self._server = server
        self.dbname = dbname
        try:
            super().__init__(server.url_of(dbname))
        except BaseException:
            server.drop_database(dbname)
            raise

    def close(self) -> None:
        super().close()
        self._server.drop_database(self.dbname)


_server: _Server | None = None
_failure: str | None = None
_server_lock = threading.Lock()


def fresh_database() -> PostgresStore:
    """Return a store on a new, empty database; skip (or fail on CI) without a server."""
    server = _get_server()
    return _TestStore(server, server.create_database())


def server_url() -> str:
    """Return the URL of the test server's admin database, starting the server if needed."""
    return _get_server().admin_url


def _get_server() -> _Server:
    global _server, _failure
    with _server_lock:
        if _server is None and _failure is None:
            try:
                _server = _connect_or_start()
            except _UnavailableError as exc:
                _failure = str(exc)
            else:
                atexit.register(_server.shutdown)
        if _server is None:
            _give_up(_failure or "no PostgreSQL server")
        return _server


def _give_up(reason: str) -> NoReturn:
    message = f"PostgreSQL tests cannot run: {' '.join(reason.split())}"
    if os.environ.get(URL_ENV):
        fix = f"fix {URL_ENV}, or unset it to let the tests start a server"
    else:
        fix = f"install PostgreSQL (apt-get install postgresql) or set {URL_ENV}"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI must run them: {fix}", pytrace=False)
    pytest.skip(f"{message}; {fix}")


def _connect_or_start() -> _Server:
    url = os.environ.get(URL_ENV)
    if url:
        try:
            psycopg.connect(url, connect_timeout=10).close()
        except psycopg.Error as exc:
            raise _UnavailableError(
                f"{URL_ENV}={describe_url(url)} does not connect: {exc}"
            ) from None
        return _Server(url)
    root = _start_cluster(_find_bindir())
    socket = urlencode({"host": str(root), "port": _PORT, "user": "postgres"}, safe="/")
    return _Server(f"postgresql:///postgres?{socket}", root=root)


# -- a cluster of our own -----------------------------------------------------------------


def _find_bindir() -> Path:
    """Return the folder holding ``initdb`` and ``pg_ctl``, newest version first."""
    candidates = []
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).parent)
    versioned = glob.glob("/usr/lib/postgresql/*/bin") + glob.glob("/usr/pgsql-*/bin")

    def version(path: str) -> int:
        found = re.search(r"(\d+)", path)
        return int(found.group(1)) if found else 0

    candidates += [Path(p) for p in sorted(versioned, key=version, reverse=True)]
    candidates.append(Path("/usr/local/pgsql/bin"))
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    raise _UnavailableError(
        "no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin"
    )


def _run_as() -> list[str]:
    """Return the command prefix that drops root, which PostgreSQL refuses to run as."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise _UnavailableError(
            "running as root, and there is no 'postgres' user to run the server as "
            "(the Debian postgresql package creates it)"
        ) from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise _UnavailableError("running as root, and runuser is missing to drop to 'postgres'")
    return [runuser, "-u", "postgres", "--"]


def _start_cluster(bindir: Path) -> Path:
    _remove_orphans()
    prefix = _run_as()
    root = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=_scratch()))
    (root / "owner.pid").write_text(str(os.getpid()))
    if prefix:
        shutil.chown(root, "postgres", "postgres")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    settings = dict(_SETTINGS)
    if os.environ.get(DURABLE_ENV):
        settings.update(fsync="on", synchronous_commit="on", full_page_writes="on")
    options = " ".join(f"-c {key}='{value}'" for key, value in settings.items())
    steps = [
        [str(bindir / "initdb"), "-D", str(root / "data"), "--auth=trust", "--username=postgres",
         "--encoding=UTF8", "--locale=C", "--no-sync"],
        [str(bindir / "pg_ctl"), "-D", str(root / "data"), "-l", str(root / "server.log"),
         "-w", "-t", "60", "-o", f"-k {root} -p {_PORT} {options}", "start"],
    ]  # fmt: skip
    for step in steps:
        done = subprocess.run(  # noqa: PLW1510 - the return code is checked below
            prefix + step, cwd=root, env=env, capture_output=True, text=True, timeout=120
        )
        if done.returncode != 0:
            log = root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            _stop_cluster(root)
            raise _UnavailableError(
                f"{Path(step[0]).name} failed ({done.returncode}): "
                f"{(done.stderr or done.stdout).strip()[-2000:]} {tail}".strip()
            )
    return root


def _stop_cluster(root: Path) -> None:
    pid_file = root / "data" / "postmaster.pid"
    with contextlib.suppress(ValueError, OSError):
        # SIGQUIT is an immediate shutdown: nothing here is worth a checkpoint. The server
        # removes its pid file as it exits (its zombie may linger until init reaps it).
        os.kill(int(pid_file.read_text().split()[0]), signal.SIGQUIT)
        for _ in range(500):
            if not pid_file.exists():
                break
            time.sleep(0.01)
    shutil.rmtree(root, ignore_errors=True)


def _scratch() -> Path:
    """Return where the cluster lives: memory if there is room, since creating a database
    makes some 300 files and that takes a quarter of a second on a disk."""
    shm = Path("/dev/shm")
    if os.environ.get(DURABLE_ENV):
        return Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        stat = os.statvfs(shm)
        if os.access(shm, os.W_OK | os.X_OK) and stat.f_bavail * stat.f_frsize > 1 << 30:
            return shm
    return Path(tempfile.gettempdir())


def _remove_orphans() -> None:
    """Stop clusters left by test sessions that were killed before their exit handlers."""
    for folder in _scratch().glob(_PREFIX + "*"):
        try:
            if time.time() - folder.stat().st_mtime < 60:
                continue  # perhaps another session that has not written its owner yet
            os.kill(int((folder / "owner.pid").read_text()), 0)
        except (OSError, ValueError):
            _stop_cluster(folder)
