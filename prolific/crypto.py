"""Researchers' API tokens encrypted at rest with Fernet (AES-128-CBC with HMAC-SHA256, from `cryptography`).

The key is settings.PROLIFIC_TOKEN_KEY (a Fernet key), or when that is blank one derived from SECRET_KEY by
SHA-256, so that a database copy alone never reveals a token. Changing the key makes stored tokens unreadable
(`decrypt` returns None): the researcher sets the token again."""
import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


def _fernet() -> Fernet:
    key = settings.PROLIFIC_TOKEN_KEY
    if not key:
        digest = hashlib.sha256(b"mteval-prolific-token:" + settings.SECRET_KEY.encode()).digest()
        key = base64.urlsafe_b64encode(digest)
    return Fernet(key)


def encrypt(token: str) -> str:
    return _fernet().encrypt(token.encode()).decode()


def decrypt(stored: str) -> str | None:
    """The token, or None when nothing is stored or it was encrypted with another key."""
    if not stored:
        return None
    try:
        return _fernet().decrypt(stored.encode()).decode()
    except InvalidToken:
        return None
