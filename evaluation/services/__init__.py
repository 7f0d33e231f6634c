"""Plain functions behind the evaluation views and tasks."""
