"""Gate 1's policy, kept as data: what model-written code may import, call and reach.

Everything the static verifier (:mod:`geomint.sandbox.prepare`) refuses is listed here,
each with the reason a model reads. The verifier is a tripwire that gives clear messages;
the kernel boundary (Gate 2) is what contains code that slips past it.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

__all__ = [
    "ALLOWED_DUNDER_ATTRIBUTES",
    "ALLOWED_MODULES",
    "ALLOWED_PRIVATE_ATTRIBUTES",
    "ATTRIBUTE_BUILTINS",
    "BIDI_CONTROLS",
    "DENIED_ATTRIBUTES",
    "DENIED_ATTRIBUTE_EXCEPTIONS",
    "DENIED_CALLS",
    "DENIED_SUBMODULES",
    "FILE_WRITER_METHODS",
    "INJECTED_LIBRARIES",
    "INTERNAL_ATTRIBUTES",
    "LIMITS",
    "MODULE_HINTS",
    "PREIMPORTED_MODULES",
    "RASTER_NAMES",
    "REBINDING_LOOKUPS",
    "TEXT_CODEC_ATTRIBUTES",
    "TEXT_CODEC_MODULES",
]

#: Libraries every body already has under these names; importing them again is harmless.
INJECTED_LIBRARIES: Final = MappingProxyType(
    {
        "shapely": "shapely",
        "h3": "h3",
        "np": "numpy",
        "pd": "pandas",
        "gpd": "geopandas",
        "pyproj": "pyproj",
        "geo": "geomint.geo",
    }
)

#: The raster operations every body has by name (see :mod:`geomint.sandbox._rasters`).
RASTER_NAMES: Final = ("Raster", "load", "zonal_stats", "cell_area")

#: Top-level modules (and all their submodules) that ``import`` may name.
ALLOWED_MODULES: Final = frozenset(
    {
        # analysis libraries, pre-imported in the worker
        "numpy", "pandas", "shapely", "h3", "pyproj", "geopandas", "geomint.geo",
        # pure standard library
        "math", "cmath", "statistics", "collections", "itertools", "functools",
        "operator", "datetime", "time", "calendar", "zoneinfo", "re", "json", "heapq",
        "bisect", "random", "decimal", "fractions", "numbers", "string", "textwrap",
        "difflib", "unicodedata", "typing", "dataclasses", "enum", "copy", "pprint",
        "array", "uuid", "hashlib", "base64", "colorsys", "dateutil",
    }
)  # fmt: skip

#: Imported by the worker before it forks, beside the injected libraries. A child runs as
#: an unprivileged uid that may be unable to read the interpreter's own directory (a
#: Python under /root, mode 0700), so a module first imported in the child can fail
#: there: everything ``import`` allows, and the submodules analysis code names, is loaded
#: ahead. It also makes those imports free in every call.
PREIMPORTED_MODULES: Final = (
    "math", "cmath", "statistics", "collections", "collections.abc", "itertools",
    "functools", "operator", "datetime", "time", "calendar", "zoneinfo", "re", "json",
    "heapq", "bisect", "random", "decimal", "fractions", "numbers", "string", "textwrap",
    "difflib", "unicodedata", "typing", "dataclasses", "enum", "copy", "pprint", "array",
    "uuid", "hashlib", "base64", "colorsys", "dateutil", "dateutil.parser",
    "dateutil.relativedelta", "dateutil.tz", "dateutil.rrule", "shapely.ops",
    "shapely.wkt", "shapely.wkb", "shapely.geometry", "shapely.affinity",
    "shapely.validation", "shapely.strtree", "shapely.prepared", "shapely.coords",
    "pyproj.transformer", "pyproj.geod", "pyproj.crs", "numpy.random", "numpy.linalg",
    "numpy.ma", "numpy.polynomial", "pandas.api.types", "pandas.tseries.offsets",
    "geopandas.tools", "h3.api.basic_str",
    # What the raster operations load on first use (geomint.geo.raster).
    "rasterio.warp", "rasterio.enums", "affine", "exactextract", "exactextract.raster",
)  # fmt: skip

#: Submodules of allowed packages that are refused all the same: they load native code,
#: build extensions or run compilers. The value is the reason.
DENIED_SUBMODULES: Final = MappingProxyType(
    {
        "numpy.ctypeslib": "it loads native libraries; compute with numpy arrays directly",
        "numpy.f2py": "it compiles and loads native code",
        "numpy.distutils": "it builds native extensions",
    }
)

#: Suggestions for modules a model often reaches for, shown with the refusal.
MODULE_HINTS: Final = MappingProxyType(
    {
        "turf": "there is no turf in Python: use `geo` (metre-true helpers) or `shapely`",
        "geojson": "GeoJSON here is plain dicts; use `shapely.geometry.shape(...)` to convert",
        "requests": "code cannot reach the network: call a data tool first, then pass its entry id",
        "httpx": "code cannot reach the network: call a data tool first, then pass its entry id",
        "urllib": "code cannot reach the network: call a data tool first, then pass its entry id",
        "os": "code has no file system or process access; the data arrives as arguments",
        "sys": "code has no interpreter access; the data arrives as arguments",
        "subprocess": "code cannot start processes",
        "sklearn": "scikit-learn is not available: use `geo.cluster(...)` for DBSCAN, or numpy",
        "scipy": "scipy is not available: use numpy, shapely (STRtree) or h3 buckets",
        "matplotlib": "draw charts by returning a Chart.js config with output_format='chart'",
        "h3.api": "use the `h3` module as injected (h3 v4 names such as latlng_to_cell)",
    }
)

#: Builtins that give code a way around every other rule; always refused when called
#: or even named.
DENIED_CALLS: Final = MappingProxyType(
    {
        "eval": "`eval` runs arbitrary code; compute the value directly",
        "exec": "`exec` runs arbitrary code; write the statements directly",
        "compile": "`compile` builds code objects; write the statements directly",
        "__import__": "use a plain `import` of an allowed module",
        "open": "code has no file access; the data arrives as arguments",
        "globals": "the injected names are plain arguments: use them by name",
        "locals": "the injected names are plain arguments: use them by name",
        "vars": "read attributes by name instead of through `vars`",
        "breakpoint": "there is no debugger in the sandbox",
        "input": "there is no one to answer `input`; the data arrives as arguments",
        "memoryview": "raw memory views are not available",
        "exit": "end the body with `return <value>` instead of exiting",
        "quit": "end the body with `return <value>` instead of exiting",
        "help": "`help` is not available; the tool description lists what is injected",
        "delattr": "delete attributes by name (`del obj.name`) instead",
    }
)

#: Attribute names refused anywhere (``x.name``), because they open files, URLs, pickles,
#: or reach interpreter internals. The value is the reason.
DENIED_ATTRIBUTES: Final = MappingProxyType(
    {
        **dict.fromkeys(
            (
                "load", "loads", "save", "savez", "savez_compressed", "savetxt",
                "loadtxt", "genfromtxt", "fromfile", "tofile", "memmap", "DataSource",
                "fromregex", "open_memmap", "from_file", "to_file", "to_pickle",
                "read_pickle", "to_parquet", "to_feather", "to_hdf", "to_sql",
                "to_excel", "to_stata", "to_orc", "to_clipboard", "read_file",
                "read_parquet", "read_feather", "read_postgis", "ExcelWriter",
                "HDFStore", "dump", "dumps", "read_array", "write_array",
                # pandas readers: every one takes a path or a URL
                "read_csv", "read_table", "read_fwf", "read_json", "read_html", "read_xml",
                "read_excel", "read_sql", "read_sql_query", "read_sql_table", "read_hdf",
                "read_sas", "read_spss", "read_stata", "read_orc", "read_clipboard",
                "read_gbq", "to_gbq",
            ),
            "reads or writes files (or pickles); the data arrives as arguments and results "
            "are returned",
        ),
        "attrgetter": "`operator.attrgetter` reaches attributes by string; use `obj.name`",
        "methodcaller": "`operator.methodcaller` calls methods by string; call `obj.name()`",
        "Formatter": "`string.Formatter` reaches attributes through format fields",
        "format_map": "use an f-string instead of `format_map`",
        "ctypeslib": "numpy.ctypeslib loads native libraries; compute with arrays directly",
        "ctypes": "raw memory access is not available; compute with the arrays directly",
        "f2py": "numpy.f2py compiles and loads native code",
        "system": "code cannot start processes",
        "popen": "code cannot start processes",
        # Modules re-exported as attributes of allowed ones (``pandas.io.common.os``,
        # ``typing.sys``, ``json.codecs``): the side doors to what ``import`` refuses.
        **dict.fromkeys(
            (
                "os", "sys", "codecs", "io", "builtins", "importlib", "subprocess",
                "socket", "shutil", "pathlib", "pickle", "marshal", "gc", "inspect",
                "mmap", "signal", "posix", "threading", "multiprocessing", "urllib",
                "http", "tempfile", "glob", "ssl", "select", "resource", "fcntl", "pty",
                # found by walking the allowed modules (tests/sandbox/test_code_paths.py):
                # ``enum.bltns`` is the real builtins, ``typing.types`` builds functions
                # and code objects, ``pydoc`` and ``pkgutil`` import modules by name,
                # ``encodings`` imports codec modules by name, the rest read files
                "bltns", "types", "pydoc", "pkgutil", "zipimport", "platform",
                "sysconfig", "metadata", "linecache", "tokenize", "logging", "traceback",
                "tarfile", "zipfile", "gzip", "bz2", "lzma", "pwd", "grp", "atexit",
                "encodings", "pa", "pyarrow", "certifi", "posixpath", "genericpath",
                "locale", "dis",
                # GDAL's readers, which geopandas holds once anything has loaded them
                "pyogrio", "fiona",
            ),
            "it is a module with file, process or interpreter access, which code here "
            "does not have; the data arrives as arguments",
        ),
    }
)  # fmt: skip

#: Denied attribute names that are an allowed module on these bases: ``pd.api.types`` is
#: pandas' dtype checks, ``typing.types`` is the standard library's ``types``.
DENIED_ATTRIBUTE_EXCEPTIONS: Final = MappingProxyType({"types": frozenset({"api"})})

#: Builtins that read or write attributes by name: only called directly, with a literal
#: name, so ``g = getattr`` or ``reduce(getattr, ...)`` cannot hide the name read.
ATTRIBUTE_BUILTINS: Final = frozenset({"getattr", "setattr", "hasattr"})

#: ``dumps``/``loads`` are plain text codecs on these modules (``json.loads``,
#: ``shapely.wkt.loads``); on anything else (``pickle.loads``, ``np.load``) they stay refused.
TEXT_CODEC_MODULES: Final = frozenset({"json", "wkt", "wkb"})
TEXT_CODEC_ATTRIBUTES: Final = frozenset({"dumps", "loads"})

#: Methods that write a file when given a path, and return text when called without one.
FILE_WRITER_METHODS: Final = frozenset(
    {"to_csv", "to_json", "to_html", "to_latex", "to_markdown", "to_string", "to_xml"}
)

#: Frame, generator, traceback and code-object internals: the usual ways out of a Python
#: sandbox. Refused as attributes whatever object they are read from.
INTERNAL_ATTRIBUTES: Final = frozenset(
    {
        "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "f_trace",
        "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await",
        "ag_frame", "ag_code", "ag_await", "tb_frame", "tb_next", "co_code",
        "co_consts", "co_names", "func_globals", "func_code", "im_func", "im_self",
        "mro", "with_traceback",
    }
)  # fmt: skip

#: The few dunder attributes analysis code legitimately reads; every other ``__x__`` is
#: refused. ``__geo_interface__`` is the GeoJSON protocol of shapely and geopandas.
ALLOWED_DUNDER_ATTRIBUTES: Final = frozenset(
    {"__init__", "__name__", "__len__", "__iter__", "__geo_interface__"}
)

#: Single-underscore attributes that are public API by convention (namedtuple's).
ALLOWED_PRIVATE_ATTRIBUTES: Final = frozenset({"_asdict", "_replace", "_fields", "_make"})

#: Calls whose result is the injected value itself: ``x = globals()["x"]`` is dropped.
REBINDING_LOOKUPS: Final = frozenset({"globals", "locals", "vars"})

#: Bidirectional control characters (Trojan Source, CVE-2021-42574): refused anywhere in
#: code, strings included, because they reorder how the code displays.
BIDI_CONTROLS: Final = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)

#: Size limits: a body past these is refused before it is parsed further.
LIMITS: Final = MappingProxyType(
    {
        "max_code_chars": 50_000,
        "max_lines": 1_500,
        "max_ast_nodes": 20_000,
        "max_nesting": 40,
        "max_literal_chars": 20_000,
        "max_int_literal_digits": 100,
        "max_repeat_factor": 10_000_000,
    }
)
