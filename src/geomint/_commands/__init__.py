"""Command groups of the ``geomint`` command line, one module each."""
