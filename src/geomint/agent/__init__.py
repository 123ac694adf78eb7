"""create_map_agent, the per-turn classifier and scopes, the tool loop and its events.

Not built yet: see the open issues.
"""
