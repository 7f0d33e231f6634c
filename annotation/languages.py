"""Languages as BCP 47 codes (docs/api.md §8.1): the list the qualification form offers, a syntax check, and
matching a worker's declared native language against a campaign's requirement by language, not by string."""
from __future__ import annotations

import re

#: Common languages with their English names, offered in the qualification form's list (any valid code may
#: be typed too).
LANGUAGES = (
    ("ar", "Arabic"), ("bg", "Bulgarian"), ("bn", "Bengali"), ("ca", "Catalan"), ("cs", "Czech"),
    ("da", "Danish"), ("de", "German"), ("el", "Greek"), ("en", "English"), ("en-GB", "British English"),
    ("en-US", "American English"), ("es", "Spanish"), ("et", "Estonian"), ("fa", "Persian"), ("fi", "Finnish"),
    ("fr", "French"), ("ga", "Irish"), ("gu", "Gujarati"), ("ha", "Hausa"), ("he", "Hebrew"), ("hi", "Hindi"),
    ("hr", "Croatian"), ("hu", "Hungarian"), ("id", "Indonesian"), ("is", "Icelandic"), ("it", "Italian"),
    ("ja", "Japanese"), ("kk", "Kazakh"), ("km", "Khmer"), ("ko", "Korean"), ("lt", "Lithuanian"),
    ("lv", "Latvian"), ("mr", "Marathi"), ("ms", "Malay"), ("mt", "Maltese"), ("nl", "Dutch"),
    ("no", "Norwegian"), ("pl", "Polish"), ("ps", "Pashto"), ("pt", "Portuguese"),
    ("pt-BR", "Brazilian Portuguese"), ("pt-PT", "European Portuguese"), ("ro", "Romanian"), ("ru", "Russian"),
    ("sk", "Slovak"), ("sl", "Slovenian"), ("sr", "Serbian"), ("sv", "Swedish"), ("sw", "Swahili"),
    ("ta", "Tamil"), ("te", "Telugu"), ("th", "Thai"), ("tr", "Turkish"), ("uk", "Ukrainian"), ("ur", "Urdu"),
    ("vi", "Vietnamese"), ("xh", "Xhosa"), ("yo", "Yoruba"), ("zh", "Chinese"), ("zh-Hans", "Simplified Chinese"),
    ("zh-Hant", "Traditional Chinese"), ("zu", "Zulu"),
)
#: English names as people write them (lower case) -> code: the list's names and a few more spellings.
NAMES = {name.lower(): code for code, name in LANGUAGES} | {
    "english (uk)": "en-GB", "uk english": "en-GB", "english (us)": "en-US", "us english": "en-US",
    "portuguese (brazil)": "pt-BR", "portuguese (portugal)": "pt-PT", "mandarin": "zh", "farsi": "fa",
    "castilian": "es", "flemish": "nl-BE", "swiss german": "de-CH", "austrian german": "de-AT",
    "canadian french": "fr-CA", "mexican spanish": "es-MX",
}
_NAME_OF = dict(LANGUAGES)
#: language (2-3 letters), optional script (4 letters), optional region (2 letters or 3 digits).
TAG = re.compile(r"^([A-Za-z]{2,3})(?:-([A-Za-z]{4}))?(?:-([A-Za-z]{2}|\d{3}))?$")


def parse(tag: str) -> tuple[str, str, str] | None:
    """(language, script, region) of a valid tag in canonical case ("" when absent), else None."""
    match = TAG.match(tag.strip().replace("_", "-"))
    if match is None:
        return None
    language, script, region = match.groups()
    return language.lower(), (script or "").title(), (region or "").upper()


def to_code(text: str) -> str | None:
    """The canonical code of a code ("EN_gb" -> "en-GB") or of a known English name ("British English"); None
    for anything else."""
    text = (text or "").strip()
    named = NAMES.get(" ".join(text.lower().split()))
    if named:
        return named
    parts = parse(text)
    return "-".join(part for part in parts if part) if parts else None


def name_of(code: str) -> str:
    """"English (en)" for a listed code, the text itself otherwise."""
    name = _NAME_OF.get(code)
    return f"{name} ({code})" if name else code


def matches(required: str, declared: str) -> bool:
    """Whether a declared native language meets a requirement: the same primary language, and the requirement's
    script and region when it names them (a requirement of en accepts en-GB; one of pt-BR accepts pt-BR only).
    A requirement or declaration that is neither a code nor a known name (free text stored before codes)
    is compared as text, case-insensitively, as it was."""
    if not (required or "").strip():
        return True
    want, have = to_code(required), to_code(declared)
    if want is None or have is None:
        return (required or "").strip().lower() == (declared or "").strip().lower()
    want_parts, have_parts = parse(want), parse(have)
    return all(w == h for w, h in zip(want_parts, have_parts, strict=True) if w)  # the language is never empty
