"""PostgreSQL with a health check that costs no round trip (config/postgres/base.py)."""
