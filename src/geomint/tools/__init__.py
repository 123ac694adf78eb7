"""ToolEntry, the DEFAULT_TOOLS registry, one module per tool family.

Not built yet: see the open issues.
"""
