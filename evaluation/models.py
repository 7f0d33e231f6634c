"""Result tables of the statistics (filled by the Celery tasks)."""
