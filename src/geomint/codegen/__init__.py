"""Intent to skills to generated code to verified code (the second-model pipeline).

Built so far: :mod:`geomint.codegen.stylespec`, which checks a style diff's sources and
layers against the vendored MapLibre style specification. The rest: see the open issues.
"""
