"""No test of the HTTP client reaches the internet.

Most tests answer requests through the transport seam (a ``ScriptedTransport``) and open
no socket at all; the tests of the connection layer talk to a server on 127.0.0.1 that
they start. Either way, the suite's guard (``network`` in ``tests/conftest.py``) fails any
test that connects anywhere else; ``connections`` hands the connects it saw to a test that
asserts on them.

This folder has no ``__init__.py`` on purpose: pytest would then import these modules as
a package named ``http``, in place of the standard library's.
"""

from __future__ import annotations

from typing import Any

import pytest

from geomint.testing import NetworkGuard


@pytest.fixture
def connections(network: NetworkGuard) -> list[Any]:
    """Every connect this test tried to an internet address, as given to ``connect``."""
    return network.attempts
