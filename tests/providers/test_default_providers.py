"""Which providers an agent gets from the environment."""

from __future__ import annotations

import pytest

from geomint.errors import UsageError
from geomint.providers import OfflineProvider, OsmProvider, TomTomProvider, default_providers


def test_no_configuration_means_offline() -> None:
    providers = default_providers({})
    assert isinstance(providers.router, OfflineProvider)
    assert providers.traffic is None  # offline has no traffic


def test_a_tomtom_key_means_tomtom() -> None:
    providers = default_providers({"TOMTOM_API_KEY": "k"})
    assert isinstance(providers.places, TomTomProvider)
    assert isinstance(providers.traffic, TomTomProvider)


def test_geomint_provider_chooses_and_self_hosted_urls_are_taken() -> None:
    providers = default_providers(
        {
            "GEOMINT_PROVIDER": "osm",
            "GEOMINT_NOMINATIM_URL": "http://10.0.0.5:8080/",
            "TOMTOM_API_KEY": "ignored",
        }
    )
    assert isinstance(providers.geocoder, OsmProvider)
    assert providers.geocoder.nominatim.base_url == "http://10.0.0.5:8080"
    assert providers.traffic is None
    assert isinstance(
        default_providers({"GEOMINT_PROVIDER": "offline", "TOMTOM_API_KEY": "k"}).router,
        OfflineProvider,
    )


def test_tomtom_without_a_key_and_unknown_choices_are_refused() -> None:
    with pytest.raises(UsageError, match="TOMTOM_API_KEY"):
        default_providers({"GEOMINT_PROVIDER": "tomtom"})
    with pytest.raises(UsageError, match="offline, tomtom, osm"):
        default_providers({"GEOMINT_PROVIDER": "google"})
