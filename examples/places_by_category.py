# Count the places of each category and chart them; mint the total as a figure.
from collections import Counter

counts = Counter()
for fc in (places_by_entry or {}).values():
    for feature in fc["features"]:
        for category in feature["properties"].get("categories", []):
            counts[category] += 1

mint.value(sum(counts.values()), "places counted", unit="places")
labels, values = zip(*counts.most_common()) if counts else ((), ())
return {
    "type": "bar",
    "data": {
        "labels": list(labels),
        "datasets": [{"label": "Places", "data": list(values)}],
    },
}
