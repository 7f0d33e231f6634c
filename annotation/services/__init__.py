"""Plain functions holding the annotation app's logic (views and commands are glue around them)."""
