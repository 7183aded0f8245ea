"""Question families, one module each; importing the registry loads them all.

See ``docs/authoring-guide.md`` ("Adding a question family").
"""
