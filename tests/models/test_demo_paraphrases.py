"""The demo model answers its example prompts as people put them, not only word for word:
a close paraphrase runs the same script instead of the canned list."""

from __future__ import annotations

import pytest

from geomint.models.demo import DEMO_PROMPTS, match

PARAPHRASES: dict[str, tuple[str, ...]] = {
    "Population of Helsinki against Espoo": (
        "What is the population of Espoo compared with Helsinki?",
        "Compare the populations of Helsinki and Espoo",
        "how many people live in Helsinki and in Espoo",
    ),
    "Population of the Nordic countries in the latest year, as a bar chart": (
        "Bar chart of the populations of the Nordic countries",
        "How many people live in each Nordic country?",
        "chart the population of the Nordics",
    ),
    "Life expectancy in Finland over time as a line chart": (
        "How has life expectancy in Finland changed?",
        "Plot Finnish life expectancy over the years",
        "line chart of life expectancy in Finland",
    ),
    "GDP per capita of Helsinki": (
        "What is Helsinki's GDP per capita?",
        "gdp per person in Helsinki",
        "How rich is Helsinki per head (GDP)?",
    ),
    "Heatmap of the cafés": (
        "Show the cafés as a heat map",
        "make a heatmap of where the cafes are",
        "Where do the cafés cluster? Draw a heatmap",
    ),
    "Extrude the parks by their area": (
        "Extrude the parks, taller the bigger they are",
        "show the parks in 3D by size",
        "Could you extrude each park by how big it is?",
    ),
    "Animate the route from start to end": (
        "Animate the route",
        "can you animate my route from the start?",
        "Animate drawing the route from start to finish",
    ),
    "A hexagon density surface of the restaurants as an overlay": (
        "Hexagon density of the restaurants",
        "a density surface of restaurants over the map",
        "Show restaurant density as hexagons",
    ),
    "Cafés within 10 minutes' walk of the central station": (
        "Which cafés can I walk to in 10 minutes from the central station?",
        "cafes within a ten minute walk of the railway station",
        "Show cafés I can reach on foot from the station",
    ),
    "Route from the central station to the cathedral avoiding motorways": (
        "How do I get from the station to the cathedral?",
        "Directions to Helsinki Cathedral from the central station",
        "Plan a route from the station to the cathedral without motorways",
    ),
    "Which cafés are inside the Esplanade park?": (
        "cafés in Esplanadi park",
        "Which cafes are in the Esplanade?",
        "Are there cafés in Esplanadinpuisto?",
    ),
    "Bar chart of these places by category": (
        "Make a bar chart of the places by category",
        "chart the places by their category",
        "Show a chart of the categories of these places",
    ),
    "Load my bus and tram stops file": (
        "Please load my stops file",
        "Add my bus stops",
        "Open my tram and bus stops file",
    ),
    "How many stops are within 200 m of a café?": (
        "How many bus stops are near a café?",
        "Count the stops within 200 metres of a cafe",
        "how many stops are close to cafés",
    ),
    "Union the park boundaries and show them": (
        "Merge the park outlines",
        "Combine all the parks into one shape",
        "show the union of the parks",
    ),
    "Which of these places are inside a park?": (
        "Which places lie in a park?",
        "What places are within the parks?",
        "list the places in parks",
    ),
    "Colour the places by category": (
        "Color these places by their category",
        "colour-code the places by kind",
        "Show a legend of the place categories",
    ),
    "Show only the cafés on the map": (
        "Hide everything but the cafés",
        "Show just the cafes",
        "only show cafés on the map",
    ),
    "Keep counting my stops whenever the stops layer changes": (
        "Watch my stops layer and recount it",
        "Monitor the number of stops",
        "Recount the stops whenever the layer changes",
    ),
    "Reload my stops file": (
        "Please reload the stops",
        "Refresh the stops file",
        "Load my stops file again",
    ),
    "Switch the map to dark mode": (
        "Make the basemap dark",
        "use a dark map please",
        "Dark mode",
    ),
    "Show the place names in Swedish": (
        "Label the places in Swedish",
        "Names på svenska, please",
        "show swedish place names",
    ),
    "Cafés near me": (
        "cafes around me",
        "Which cafés are nearby?",
        "coffee close to me",
    ),
    "Zonal sum of the point density grid over the parks": (
        "Sum the density raster over each park",
        "zonal statistics of the grid per park",
        "How much of the point density grid falls over the parks?",
    ),
    "Resample the density grid onto a 250 m grid and compare the totals": (
        "Put the density grid onto a coarser grid",
        "resample the raster to 250 metres",
        "Does resampling the grid change its total?",
    ),
    "Search the Earth Search STAC catalogue for elevation data over Helsinki": (
        "Find elevation data in a STAC catalogue",
        "search earth search for a DEM",
        "Which STAC collections have terrain heights?",
    ),
    "What can you do?": (
        "help",
        "What are you able to do?",
        "What do you do?",
    ),
}


def test_every_example_prompt_has_paraphrases() -> None:
    assert set(PARAPHRASES) == {p.text for p in DEMO_PROMPTS}
    assert all(len(said) >= 3 for said in PARAPHRASES.values())


@pytest.mark.parametrize(
    ("prompt", "said"), [(p, s) for p, many in PARAPHRASES.items() for s in many]
)
def test_a_paraphrase_runs_the_prompts_script(prompt: str, said: str) -> None:
    found = match(said)
    assert found is not None and found.text == prompt, (said, found and found.text)


@pytest.mark.parametrize("prompt", [p.text for p in DEMO_PROMPTS])
def test_each_prompt_matches_itself(prompt: str) -> None:
    found = match(prompt)
    assert found is not None and found.text == prompt
