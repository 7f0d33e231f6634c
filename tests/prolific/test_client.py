"""The Prolific client (prolific/client.py) against the fake: the waits it takes (Retry-After on 429, exponential
backoff on 5xx and timeouts), what it never retries, and its log; and the token's encryption (prolific/crypto.py)."""
import pytest

from prolific import crypto
from prolific.client import Client, ProlificError, ProlificUnavailable
from prolific.models import ProlificCall

from .fake import TOKEN

pytestmark = pytest.mark.django_db


def client_and_waits(fake) -> tuple[Client, list[float]]:
    waits: list[float] = []
    return Client(TOKEN, base_url=fake.url, sleep=waits.append), waits


def test_retry_after_is_honoured_and_5xx_back_off_exponentially(fake, settings):
    settings.PROLIFIC_BACKOFF_SECONDS, settings.PROLIFIC_MAX_WAIT_SECONDS = 0.5, 60
    client, waits = client_and_waits(fake)
    fake.fail("GET", r"^studies/$", 429, retry_after=7)
    fake.fail("GET", r"^studies/$", 500, times=2)
    assert client.call("GET", "studies/") == {"results": []}
    assert waits == [7.0, 1.0, 2.0]  # Retry-After, then 0.5 × 2^(attempt − 1) for attempts 2 and 3
    log = list(ProlificCall.objects.order_by("pk").values_list("status", "attempt"))
    assert log == [(429, 1), (500, 2), (500, 3), (200, 4)]


def test_retry_after_is_capped(fake, settings):
    settings.PROLIFIC_MAX_WAIT_SECONDS = 5
    client, waits = client_and_waits(fake)
    fake.fail("GET", r"^studies/$", 429, retry_after=3600)
    client.call("GET", "studies/")
    assert waits == [5.0]


def test_a_timeout_is_retried_and_logged_without_a_status(fake, settings):
    settings.PROLIFIC_TIMEOUT_SECONDS = 0.3
    client, waits = client_and_waits(fake)
    fake.fail("GET", r"^studies/$", 0, hang=0.8)
    client.call("GET", "studies/")
    assert list(ProlificCall.objects.order_by("pk").values_list("status", "error")) == [
        (None, "ReadTimeout"), (200, "")]


def test_a_4xx_is_never_retried_and_says_what_prolific_said(fake):
    client, waits = client_and_waits(fake)
    with pytest.raises(ProlificError, match="400 .*reward: \\['This field is required.'\\]") as refused:
        client.call("POST", "studies/", {"name": "x", "description": "y", "external_study_url": "u",
                                         "prolific_id_option": "url_parameters", "completion_codes": [],
                                         "total_available_places": 1, "estimated_completion_time": 1})
    assert refused.value.status == 400 and waits == [] and ProlificCall.objects.count() == 1


def test_after_every_attempt_the_call_is_unavailable(fake, settings):
    settings.PROLIFIC_ATTEMPTS = 3
    client, waits = client_and_waits(fake)
    fake.fail("GET", r"^studies/$", 503, times=3)
    with pytest.raises(ProlificUnavailable):
        client.call("GET", "studies/")
    assert len(waits) == 2 and ProlificCall.objects.count() == 3


def test_the_token_is_encrypted_and_another_key_cannot_read_it(settings):
    stored = crypto.encrypt(TOKEN)
    assert TOKEN not in stored and crypto.decrypt(stored) == TOKEN
    settings.PROLIFIC_TOKEN_KEY = "yT0hzj0HnDkDvxUIvzHF0wnxh8lqJvTfv4kSJnMw9Ls="
    assert crypto.decrypt(stored) is None
