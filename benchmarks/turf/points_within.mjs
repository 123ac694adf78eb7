// The Turf.js side of benchmarks/bench_geo.py: time pointsWithinPolygon on the same data.
// Usage: node points_within.mjs DATA.json  ->  prints {"ms": ..., "count": ...}
import { readFileSync } from "node:fs";
import { featureCollection, point, polygon, pointsWithinPolygon } from "@turf/turf";

const data = JSON.parse(readFileSync(process.argv[2], "utf8"));
const points = featureCollection(data.points.map((c) => point(c)));
const polygons = featureCollection(data.polygons.map((rings) => polygon(rings)));
const started = performance.now();
const within = pointsWithinPolygon(points, polygons);
const ms = performance.now() - started;
console.log(JSON.stringify({ ms, count: within.features.length }));
