"""Intent to skills to generated code to verified code (the second-model pipeline).

Not built yet: see the open issues.
"""
