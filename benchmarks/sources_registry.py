"""A large registry for measuring ``find_sources``: the real sources among thousands of
plausible distractors.

:func:`synthesise` makes ``n`` sources that read like the catalogue a national statistics
office or an open-data portal publishes ("Statistics Sweden: population by municipality,
2010-2024"), from the real ones: each distractor copies a real source's connector,
modality and filters and varies the publisher, country, subject, geographic level, years
and licence, so it competes with the real sources on the same words. Some titles are in
the publisher's language (Finnish, Swedish, German...), as their own tables are.

The distractors are not labelled: a query that one of them would answer as well as a real
source (a Swedish population table for "population of Sweden") counts it as a miss, so
recall measured against them is a lower bound.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from geomint.sources.model import Column, Coverage, Profile, Source

__all__ = ["synthesise"]


@dataclass(frozen=True, kw_only=True)
class _Publisher:
    name: str
    country: str  # ISO 3166-1 alpha-3, or "" for an international publisher
    place: str  # the country or area, in English
    licence: str
    programme: str
    levels: tuple[str, ...]
    local: dict[str, str]  # subject key -> a title in the publisher's own language


@dataclass(frozen=True, kw_only=True)
class _Subject:
    key: str
    title: str
    concepts: tuple[str, ...]
    unit: str
    describe: str
    modality: str = "table"


_PUBLISHERS = (
    _Publisher(
        name="Statistics Finland",
        country="FIN",
        place="Finland",
        licence="CC-BY-4.0",
        programme="StatFin database",
        levels=("municipality", "region", "postal code area", "1 km grid cell"),
        local={
            "population": "Väestö kunnittain",
            "unemployment": "Työttömyysaste alueittain",
            "births": "Elävänä syntyneet kunnittain",
            "dwellings": "Asuntokunnat ja asunnot",
            "income": "Tulonsaajien mediaanitulot",
            "cars": "Rekisterissä olevat ajoneuvot kunnittain",
        },
    ),
    _Publisher(
        name="Statistics Sweden (SCB)",
        country="SWE",
        place="Sweden",
        licence="CC0-1.0",
        programme="Statistical Database",
        levels=("municipality", "county", "DeSO area"),
        local={
            "population": "Folkmängd per kommun",
            "unemployment": "Arbetslöshet efter region",
            "births": "Levande födda per kommun",
            "income": "Sammanräknad förvärvsinkomst",
            "migration": "Flyttningar efter region",
        },
    ),
    _Publisher(
        name="Statistics Norway (SSB)",
        country="NOR",
        place="Norway",
        licence="CC-BY-4.0",
        programme="StatBank",
        levels=("municipality", "county"),
        local={"population": "Befolkning per kommune", "cars": "Registrerte kjøretøy"},
    ),
    _Publisher(
        name="Statistics Denmark",
        country="DNK",
        place="Denmark",
        licence="CC-BY-4.0",
        programme="StatBank Denmark",
        levels=("municipality", "region"),
        local={"population": "Befolkningen den 1. i kvartalet"},
    ),
    _Publisher(
        name="Statistics Estonia",
        country="EST",
        place="Estonia",
        licence="CC-BY-4.0",
        programme="statistical database",
        levels=("county", "municipality"),
        local={"population": "Rahvaarv maakonna järgi"},
    ),
    _Publisher(
        name="Destatis (Federal Statistical Office of Germany)",
        country="DEU",
        place="Germany",
        licence="DL-DE-BY-2.0",
        programme="GENESIS-Online",
        levels=("Land", "district (Kreis)", "municipality (Gemeinde)"),
        local={
            "population": "Bevölkerung nach Gemeinden",
            "unemployment": "Arbeitslosenquote nach Kreisen",
            "cars": "Pkw-Bestand je 1000 Einwohner",
        },
    ),
    _Publisher(
        name="INSEE",
        country="FRA",
        place="France",
        licence="etalab-2.0",
        programme="base de données locales",
        levels=("commune", "département", "région"),
        local={"population": "Population légale des communes", "income": "Revenus et pauvreté"},
    ),
    _Publisher(
        name="Istat",
        country="ITA",
        place="Italy",
        licence="CC-BY-4.0",
        programme="I.Stat",
        levels=("comune", "provincia", "regione"),
        local={"population": "Popolazione residente al 1° gennaio"},
    ),
    _Publisher(
        name="INE Spain",
        country="ESP",
        place="Spain",
        licence="CC-BY-4.0",
        programme="INEbase",
        levels=("municipio", "provincia", "comunidad autónoma"),
        local={"population": "Población por municipios", "unemployment": "Tasa de paro"},
    ),
    _Publisher(
        name="Statistics Netherlands (CBS)",
        country="NLD",
        place="the Netherlands",
        licence="CC-BY-4.0",
        programme="StatLine",
        levels=("gemeente", "wijk", "buurt"),
        local={"population": "Bevolking per gemeente"},
    ),
    _Publisher(
        name="Office for National Statistics",
        country="GBR",
        place="the United Kingdom",
        licence="OGL-UK-3.0",
        programme="Nomis",
        levels=("local authority", "output area", "region"),
        local={},
    ),
    _Publisher(
        name="Statistics Canada",
        country="CAN",
        place="Canada",
        licence="OGL-Canada-2.0",
        programme="census profile tables",
        levels=("census division", "province", "census metropolitan area"),
        local={},
    ),
    _Publisher(
        name="Australian Bureau of Statistics",
        country="AUS",
        place="Australia",
        licence="CC-BY-4.0",
        programme="Data by Region",
        levels=("SA2 area", "local government area", "state"),
        local={},
    ),
    _Publisher(
        name="IBGE",
        country="BRA",
        place="Brazil",
        licence="CC-BY-4.0",
        programme="SIDRA",
        levels=("município", "estado"),
        local={"population": "População residente estimada"},
    ),
    _Publisher(
        name="Kenya National Bureau of Statistics",
        country="KEN",
        place="Kenya",
        licence="CC-BY-4.0",
        programme="census reports",
        levels=("county", "sub-county"),
        local={},
    ),
    _Publisher(
        name="Statistics Korea (KOSTAT)",
        country="KOR",
        place="South Korea",
        licence="KOGL-1",
        programme="KOSIS",
        levels=("province", "city or county"),
        local={},
    ),
    _Publisher(
        name="Eurostat",
        country="",
        place="the EU regions",
        licence="CC-BY-4.0",
        programme="regional statistics (NUTS)",
        levels=("NUTS 2 region", "NUTS 3 region"),
        local={},
    ),
    _Publisher(
        name="World Health Organization",
        country="",
        place="every country",
        licence="CC-BY-NC-SA-3.0-IGO",
        programme="Global Health Observatory",
        levels=("country",),
        local={},
    ),
    _Publisher(
        name="OECD",
        country="",
        place="OECD regions",
        licence="CC-BY-4.0",
        programme="Regional Database",
        levels=("TL2 region", "TL3 region"),
        local={},
    ),
    _Publisher(
        name="City of Helsinki",
        country="FIN",
        place="Helsinki",
        licence="CC-BY-4.0",
        programme="Helsinki district statistics",
        levels=("district", "sub-district", "250 m grid cell"),
        local={"population": "Helsingin väestö osa-alueittain"},
    ),
)

_SUBJECTS = (
    _Subject(
        key="population",
        title="population",
        concepts=("population",),
        unit="people",
        describe="the number of residents",
    ),
    _Subject(
        key="population",
        title="population by age and sex",
        concepts=("population", "population_by_age"),
        unit="people",
        describe="residents counted by five-year age group and sex",
    ),
    _Subject(
        key="density",
        title="population density",
        concepts=("population_density",),
        unit="people per km²",
        describe="residents per square kilometre of land",
    ),
    _Subject(
        key="births",
        title="live births",
        concepts=("births", "fertility"),
        unit="births",
        describe="the number of children born alive",
    ),
    _Subject(
        key="deaths",
        title="deaths",
        concepts=("deaths", "mortality"),
        unit="deaths",
        describe="the number of deaths",
    ),
    _Subject(
        key="migration",
        title="net migration",
        concepts=("migration",),
        unit="people",
        describe="people moving in minus people moving out",
    ),
    _Subject(
        key="income",
        title="median household income",
        concepts=("household_income", "income"),
        unit="national currency",
        describe="the median disposable income of households",
    ),
    _Subject(
        key="gdp",
        title="regional GDP per inhabitant",
        concepts=("gdp_per_capita", "regional_accounts"),
        unit="euro per inhabitant",
        describe="gross domestic product divided by the number of inhabitants",
    ),
    _Subject(
        key="unemployment",
        title="unemployment rate",
        concepts=("unemployment_rate", "labour_market"),
        unit="%",
        describe="the share of the labour force without work",
    ),
    _Subject(
        key="employment",
        title="employed persons by industry",
        concepts=("employment", "labour_market"),
        unit="people",
        describe="people in work, by industry of their workplace",
    ),
    _Subject(
        key="life",
        title="life expectancy",
        concepts=("life_expectancy", "health"),
        unit="years",
        describe="the years a newborn is expected to live",
    ),
    _Subject(
        key="cars",
        title="registered passenger cars",
        concepts=("passenger_cars", "transport"),
        unit="cars",
        describe="passenger cars in the vehicle register at the end of the year",
    ),
    _Subject(
        key="accidents",
        title="road traffic accidents with injuries",
        concepts=("road_accidents", "transport"),
        unit="accidents",
        describe="road accidents reported to the police in which someone was injured",
    ),
    _Subject(
        key="dwellings",
        title="dwellings by type of building",
        concepts=("dwellings", "housing"),
        unit="dwellings",
        describe="the housing stock, by detached, terraced and apartment buildings",
    ),
    _Subject(
        key="prices",
        title="house prices per square metre",
        concepts=("house_prices", "housing"),
        unit="currency per m²",
        describe="the average price per square metre of sold dwellings",
    ),
    _Subject(
        key="emissions",
        title="greenhouse gas emissions",
        concepts=("emissions", "climate"),
        unit="t CO2 eq",
        describe="emissions of greenhouse gases in CO2 equivalent",
    ),
    _Subject(
        key="electricity",
        title="electricity consumption",
        concepts=("electricity", "energy"),
        unit="MWh",
        describe="electricity used by households and industry",
    ),
    _Subject(
        key="schools",
        title="pupils in comprehensive schools",
        concepts=("education",),
        unit="pupils",
        describe="pupils enrolled in primary and lower secondary schools",
    ),
    _Subject(
        key="tourism",
        title="nights spent at tourist accommodation",
        concepts=("tourism",),
        unit="nights",
        describe="overnight stays of residents and foreign visitors",
    ),
    _Subject(
        key="crime",
        title="offences recorded by the police",
        concepts=("crime",),
        unit="offences",
        describe="offences the police recorded",
    ),
    _Subject(
        key="stops",
        title="public transport stops",
        concepts=("public_transport", "transport"),
        unit="stops",
        describe="the location of every bus, tram and train stop",
        modality="vector",
    ),
    _Subject(
        key="buildings",
        title="building footprints",
        concepts=("buildings",),
        unit="buildings",
        describe="the outline of each building with its use and year of construction",
        modality="vector",
    ),
    _Subject(
        key="landcover",
        title="land cover",
        concepts=("land_cover", "environment"),
        unit="class",
        describe="land cover classes (forest, field, built-up, water) from satellite imagery",
        modality="raster",
    ),
    _Subject(
        key="popgrid",
        title="population grid",
        concepts=("population", "population_grid"),
        unit="people per cell",
        describe="residents per grid cell, from the population register",
        modality="raster",
    ),
    _Subject(
        key="air",
        title="air quality (PM2.5)",
        concepts=("air_quality", "environment"),
        unit="µg/m³",
        describe="annual mean concentration of fine particulate matter at monitoring stations",
    ),
)

_CAVEATS = (
    "Municipal boundaries follow the latest division; earlier years are recalculated to it.",
    "The latest year is preliminary and is revised the following spring.",
    "Small areas with fewer than ten residents are suppressed for privacy.",
    "Figures are at the end of the year (31 December).",
    "Regions follow the current classification; older codes are mapped where possible.",
    "Counts are rounded to the nearest five.",
)


def synthesise(real: list[Source], n: int, seed: int) -> list[Source]:
    """``n`` distractor sources made from ``real``, the same for the same arguments.

    Args:
        real: The real sources, used as templates (connector, filters, modality).
        n: How many to make.
        seed: The random seed.

    Returns:
        Sources with ids ``synth-00000-...``, none equal to a real id.
    """
    rng = random.Random(seed)
    by_modality = {m: [s for s in real if s.modality == m] or real for m in ("table", "vector")}
    made = []
    for i in range(n):
        publisher = rng.choice(_PUBLISHERS)
        subject = rng.choice(_SUBJECTS)
        level = rng.choice(publisher.levels)
        template = rng.choice(by_modality["vector" if subject.modality == "vector" else "table"])
        start = rng.choice((1960, 1970, 1980, 1987, 1990, 1995, 2000, 2005, 2010, 2015))
        end = rng.choice((2018, 2020, 2021, 2022, 2023, 2024, 2025))
        local = publisher.local.get(subject.key) if rng.random() < 0.5 else None
        place = publisher.place
        title = rng.choice(
            (
                f"{subject.title.capitalize()} by {level}, {start}-{end}",
                f"{place}: {subject.title} by {level}",
                f"{subject.title.capitalize()} in {place} by {level} and year",
                f"{publisher.name}: {subject.title} by {level} {start}/{end}",
            )
        )
        if local:
            title = f"{local} ({subject.title}), {start}-{end}"
        description = (
            f"{subject.describe.capitalize()} in {place} by {level}, "
            f"{'yearly' if rng.random() < 0.7 else 'quarterly'} from {start} to {end}, "
            f"from {publisher.name}'s {publisher.programme}."
        )
        if subject.modality != "table":
            description = (
                f"{subject.describe.capitalize()} in {place}, as of {end}, "
                f"from {publisher.name}'s {publisher.programme}."
            )
        coverage = Coverage(
            countries=(publisher.country,) if publisher.country else (),
            world=publisher.place == "every country",
            areas=(place,) if not publisher.country else (),
            start=start if subject.modality == "table" else end,
            end=end,
        )
        unit_area = "grid cell" if "grid" in level else level
        made.append(
            Source(
                id=f"synth-{i:05d}-{subject.key}",
                title=title,
                publisher=publisher.name,
                licence=publisher.licence,
                evidence="modelled" if subject.modality == "raster" else "observed",
                connector=template.connector,
                coverage=coverage,
                modality=subject.modality,  # type: ignore[arg-type]
                concepts=subject.concepts,
                description=description,
                guidance=rng.choice(_CAVEATS),
                filters=template.filters,
                profile=Profile(
                    shape=f"one row per {unit_area} and year",
                    columns=(
                        Column(name="area", meaning=f"the {unit_area}"),
                        Column(name="year", meaning="the year"),
                        Column(name="value", meaning=subject.title, unit=subject.unit),
                    ),
                    unit=subject.unit,
                ),
            )
        )
    return made
