"""The call sites in reachable library code that turn text into code, and why each is safe.

Checked by ``test_code_paths.py`` against a scan of what a body can reach; a library
upgrade that adds a site (or a module reachable outside the allowlist) fails there until
someone reviews it and records it here.

Statuses:
    guarded: reachable from a body, and closed by Gate 1's policy (the name is refused)
        or checked at call time by the worker's guards (``sandbox/_guards.py``).
    unreachable: a body cannot call it (private, or only behind a name Gate 1 refuses).
    harmless: reachable, but the text cannot come from the body or cannot run code.

The ``getattr`` sites were reviewed by family (pandas' apply-by-name, pandas' internal
dispatch, numpy's and geopandas' delegation), not one by one.
"""

from __future__ import annotations

from typing import Final

STATUSES: Final = frozenset({"guarded", "unreachable", "harmless"})

#: Reasons shared by a family of sites.
_GEOPANDAS_DELEGATES: Final = (
    "geopandas delegates a GeoSeries method to shapely or its GeometryArray by the method's "
    "own name"
)
_NUMPY_DISPATCH: Final = (
    "numpy dispatches a function to the array's own method of the same name (`np.sum(a)` "
    "calls `a.sum`), the name fixed by numpy's caller"
)
_PANDAS_BY_NAME: Final = (
    "reads one method or attribute of a pandas object by a name the body passes "
    "(`df.agg('sum')`, `gb.transform('mean')`) or pandas names itself; one step on that "
    "object, never a function's globals or a module, and what the body does with the result "
    "Gate 1 reads"
)
_PANDAS_DISPATCH: Final = (
    "pandas dispatches to a method of its own arrays, dtypes or indexes by an operator or "
    "method name from its own tables (`__add__`, `_str_upper`), not text from the body"
)
_PANDAS_IO: Final = "reached only from the file and URL readers and writers Gate 1 refuses by name"
_PYTABLES: Final = (
    "HDFStore, read_hdf and to_hdf are refused by name (_policy.DENIED_ATTRIBUTES), and "
    "PyTables is not installed"
)

#: Modules outside ``ALLOWED_MODULES`` that a body still reaches through an allowed one's
#: public attributes (``pandas.io.parsers.readers.csv``), and why that is harmless.
REACHABLE_OUTSIDE: Final = {
    "abc": "abstract base classes; no file, process or import access",
    "ast": "parses text into a syntax tree; running one needs `compile`, which Gate 1 refuses",
    "binascii": "byte and text conversions",
    "contextlib": "context-manager helpers around callables the body already has",
    "copyreg": "pickle's registry; `pickle` itself is refused, and nothing here unpickles",
    "csv": "reads and writes file objects the body cannot open; no path API",
    "keyword": "the list of Python keywords",
    "pyarrow.compute": (
        "Arrow compute kernels on arrays in memory (its `pa` and file APIs are refused by name)"
    ),
    "pyarrow.vendored.docscrape": "parses docstrings; its `pydoc` attribute is refused by name",
    "queue": "in-memory queues",
    "struct": "packs and unpacks bytes",
    "token": "token constants",
    "warnings": "warning filters; the runtime records warnings whatever the filters say",
    "weakref": "weak references to objects the body already holds",
}

#: ``module:qualname:kind`` -> (status, reason).
CALL_SITES: Final = {
    "ast:parse:compile": (
        "harmless",
        "compiles with PyCF_ONLY_AST: the result is a syntax tree, nothing runs",
    ),
    "collections:UserString.format_map:format_map": (
        "guarded",
        ("Gate 1 refuses the attribute `format_map` on any object (_policy.DENIED_ATTRIBUTES)"),
    ),
    "collections:namedtuple:eval": (
        "harmless",
        (
            "namedtuple refuses field names that are not identifiers, keywords or start with "
            "`_` before it builds the text it evaluates"
        ),
    ),
    "contextlib:_RedirectStream.__enter__:getattr": (
        "harmless",
        (
            "reads `sys.stdout` or `sys.stderr` by the stream name of the class "
            "(redirect_stdout), not text from the body"
        ),
    ),
    "dataclasses:_create_fn:exec": (
        "harmless",
        (
            "the text is built from field names; a body can forge non-identifier names "
            "(type() with a computed `__annotations__` key) but every attempt made the "
            "generated text a SyntaxError before anything ran; listed in docs/sandbox.md as a"
            " residual risk"
        ),
    ),
    "dataclasses:_get_field:getattr": (
        "harmless",
        (
            "reads the class attribute named by a field, i.e. an annotation key of the body's"
            " own class"
        ),
    ),
    "dateutil:__getattr__:import_module": (
        "harmless",
        (
            "imports only the dateutil submodules named in dateutil.__all__ (module "
            "__getattr__ checks the name first)"
        ),
    ),
    "geopandas._compat:import_optional_dependency:import_module": (
        "unreachable",
        "private function; geopandas' callers pass constant package names",
    ),
    "geopandas.array:GeometryArray._affinity_method:getattr": (
        "harmless",
        _GEOPANDAS_DELEGATES,
    ),
    "geopandas.array:GeometryArray._binary_method:getattr": (
        "harmless",
        _GEOPANDAS_DELEGATES,
    ),
    "geopandas.base:GeoPandasBase.sample_points:getattr": (
        "harmless",
        _GEOPANDAS_DELEGATES,
    ),
    "geopandas.base:_delegate_binary_method:getattr": (
        "harmless",
        _GEOPANDAS_DELEGATES,
    ),
    "geopandas.base:_delegate_geo_method:getattr": (
        "harmless",
        _GEOPANDAS_DELEGATES,
    ),
    "geopandas.base:_delegate_property:getattr": (
        "harmless",
        _GEOPANDAS_DELEGATES,
    ),
    "geopandas.geoseries:GeoSeries._wrapped_pandas_method:getattr": (
        "harmless",
        _GEOPANDAS_DELEGATES,
    ),
    "hashlib:__get_openssl_constructor:getattr": (
        "harmless",
        "private; looks up an OpenSSL constructor named by hashlib's own algorithm list",
    ),
    "numpy._core.fromnumeric:_wrapfunc:getattr": (
        "harmless",
        _NUMPY_DISPATCH,
    ),
    "numpy._core.fromnumeric:_wrapit:getattr": (
        "harmless",
        _NUMPY_DISPATCH,
    ),
    "numpy._core.fromnumeric:_wrapreduction:getattr": (
        "harmless",
        _NUMPY_DISPATCH,
    ),
    "numpy._core.fromnumeric:_wrapreduction_any_all:getattr": (
        "harmless",
        _NUMPY_DISPATCH,
    ),
    "numpy.ma.core:_arraymethod.wrapped_method:getattr": (
        "harmless",
        _NUMPY_DISPATCH,
    ),
    "numpy.ma.core:_arraymethod:getattr": (
        "harmless",
        _NUMPY_DISPATCH,
    ),
    "numpy.ma.core:_convert2ma:getattr": (
        "harmless",
        _NUMPY_DISPATCH,
    ),
    "numpy.ma.core:_frommethod.wrapper:getattr": (
        "harmless",
        _NUMPY_DISPATCH,
    ),
    "numpy.ma.core:_frommethod:getattr": (
        "harmless",
        _NUMPY_DISPATCH,
    ),
    "operator:methodcaller.__call__:getattr": (
        "guarded",
        "Gate 1 refuses `methodcaller` by name (_policy.DENIED_ATTRIBUTES)",
    ),
    "pandas.core.accessor:PandasDelegate._add_delegate_accessors._create_delegator_method:getattr": (  # noqa: E501
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.accessor:PandasDelegate._add_delegate_accessors._create_delegator_property:getattr": (  # noqa: E501
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.accessor:PandasDelegate._add_delegate_accessors:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.apply:Apply._apply_str:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.apply:Apply.compute_dict_like:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.apply:Apply.compute_list_like:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.arraylike:array_ufunc:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arraylike:default_array_ufunc:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arraylike:dispatch_ufunc_with_out:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.arrow.array:ArrowExtensionArray.__array_ufunc__:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.arrow.array:ArrowExtensionArray._argmin_max:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.arrow.array:ArrowExtensionArray._round_temporally:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.base:ExtensionArray._reduce:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.boolean:BooleanArray._accumulate:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.categorical:CategoricalAccessor._delegate_method:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.categorical:CategoricalAccessor._delegate_property_get:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.datetimelike:DatetimeLikeArrayMixin._accumulate:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.datetimelike:TimelikeOps.__array_ufunc__:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.masked:BaseMaskedArray.__array_ufunc__:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.masked:BaseMaskedArray._accumulate:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.masked:BaseMaskedArray._cmp_method:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.masked:BaseMaskedArray._reduce:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.numpy_:NumpyExtensionArray.__array_ufunc__:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.sparse.accessor:SparseAccessor._delegate_property_get:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.sparse.array:SparseArray.__array_ufunc__:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.sparse.array:SparseArray._dense_reduce:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.sparse.array:SparseArray._min_max:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.sparse.array:SparseArray._reduce:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.string_:StringArray._reduce:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.arrays.timedeltas:TimedeltaArray._accumulate:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.base:NoNewAttributesMixin.__setattr__:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.col:Expression.__getattr__.<lambda>:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.col:Expression._with_op.<lambda>:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.common:temp_setattr:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.computation.ops:BinOp.evaluate:eval": (
        "guarded",
        (
            "runs only inside pd.eval / DataFrame.eval / DataFrame.query, whose text the "
            "worker's guard checks with Gate 1's rules (sandbox/_guards.py, Expr.__init__)"
        ),
    ),
    "pandas.core.computation.ops:FuncNode.__init__:getattr": (
        "guarded",
        (
            "pd.eval's function calls by name, only inside expressions the worker's guard has"
            " checked with Gate 1's rules"
        ),
    ),
    "pandas.core.dtypes.generic:create_pandas_abc_type._check:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.flags:Flags.__getitem__:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.generic:NDFrame.__setattr__:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.generic:NDFrame._get_axis_resolvers:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.generic:NDFrame._info_axis:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.groupby.generic:DataFrameGroupBy._define_paths.<lambda>.<lambda>:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.groupby.generic:DataFrameGroupBy._define_paths.<lambda>:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.groupby.generic:SeriesGroupBy.aggregate:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.groupby.generic:SeriesGroupBy.filter.<lambda>:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.groupby.groupby:GroupBy._op_via_apply:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.groupby.groupby:GroupBy._reduction_kernel_transform:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.groupby.groupby:GroupBy._transform:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.groupby.groupby:GroupBy.apply:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.groupby.groupby:GroupByPlot.__getattr__.attr.f:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.indexes.accessors:ArrowTemporalProperties._delegate_method:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.indexes.accessors:ArrowTemporalProperties._delegate_property_get:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.indexes.accessors:Properties._delegate_method:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.indexes.accessors:Properties._delegate_property_get:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.indexes.base:Index.__array_ufunc__:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.indexes.datetimes:DatetimeIndex._wrap_field:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.indexes.extension:_inherit_from_data.cached:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.indexes.extension:_inherit_from_data.fget:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.indexes.extension:_inherit_from_data:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.indexes.interval:IntervalIndex._maybe_cast_slice_bound:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.indexes.period:PeriodIndex._wrap_field:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.indexes.range:RangeIndex._argminmax:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.indexing:_LocationIndexer._getitem_lowerdim:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.indexing:_LocationIndexer._getitem_nested_tuple:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.indexing:_LocationIndexer._getitem_tuple_same_dim:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.interchange.utils:dtype_to_arrow_c_fmt:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.internals.managers:BaseBlockManager.apply:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.methods.selectn:SelectNFrame.compute:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.nanops:_nanminmax.reduction:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.resample:Resampler.__getattr__:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.resample:_GroupByMixin._apply.func:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.reshape.pivot:_compute_grand_margin:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.core.util.numba_:jit_user_function:getattr": (
        "harmless",
        _PANDAS_DISPATCH,
    ),
    "pandas.core.window.rolling:Window._validate:getattr": (
        "harmless",
        _PANDAS_BY_NAME,
    ),
    "pandas.io.common:_BytesIOWrapper.__getattr__:getattr": (
        "unreachable",
        _PANDAS_IO,
    ),
    "pandas.io.common:_IOWrapper.__getattr__:getattr": (
        "unreachable",
        _PANDAS_IO,
    ),
    "pandas.io.html:_HtmlFrameParser._handle_hidden_tables:getattr": (
        "unreachable",
        _PANDAS_IO,
    ),
    "pandas.io.pytables:DataCol.validate_attr:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:GenericFixed.read_array:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:GenericFixed.read_index:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:GenericFixed.read_multi_index:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:GenericFixed.write_array:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:GenericFixed.write_array_empty:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:GenericFixed.write_index:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:IndexCol.col:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:IndexCol.is_indexed:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:IndexCol.validate_attr:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:Table.indexables.f:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:Table.read_column:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:Table.read_metadata:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:_read_index_nan_rep:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:_read_stored_column_values:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas.io.pytables:_set_attr_if_changed:getattr": (
        "unreachable",
        _PYTABLES,
    ),
    "pandas:<module>:__import__": (
        "harmless",
        "runs once at import time, in the template before any body exists",
    ),
    "pyproj.sync:_filter_bbox:getattr": (
        "harmless",
        "reads a bounding-box field named by pyproj's own code from grid metadata",
    ),
    "string:Formatter.format:vformat": (
        "guarded",
        ("reachable only through string.Formatter, which Gate 1 refuses by name (`Formatter`)"),
    ),
    "typing:ForwardRef.__init__:compile": (
        "harmless",
        (
            "compiles the annotation text in eval mode; nothing runs until "
            "ForwardRef._evaluate, which is guarded"
        ),
    ),
    "typing:ForwardRef._evaluate:eval": (
        "guarded",
        (
            "the worker wraps ForwardRef._evaluate: the text passes Gate 1's rules, runs with"
            " the sandbox's builtins, and never in another module's namespace "
            "(sandbox/_guards.py)"
        ),
    ),
    "typing:_BaseGenericAlias.__getattr__:getattr": (
        "harmless",
        (
            "forwards a non-dunder attribute of `list[int]` to its origin; the name is the "
            "attribute the body wrote, which Gate 1 already read"
        ),
    ),
    "warnings:_getcategory:__import__": (
        "unreachable",
        "private; called only for -W command-line options, which the worker never has",
    ),
}
