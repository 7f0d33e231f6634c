"""The local fake Prolific (fake.py), started per test and named by PROLIFIC_API_BASE_URL."""
import pytest

from .fake import TOKEN, FakeProlific


@pytest.fixture
def fake(settings):
    server = FakeProlific(TOKEN).start()
    settings.PROLIFIC_API_BASE_URL = server.url
    yield server
    server.stop()
