"""What every import of a file (a campaign file, or judgments collected elsewhere in any format) shares: its
refusal (`CampaignFileError`, every problem with its line, and `Problems` that collect them), the limits and
checks of a text (`MAX_TEXT`, `unstorable`, `too_deep`), and the new campaign's slug and study (`unique_slug`,
`study_named`). A building block below the protocol packages, whose judgment formats use it, and the import
services (services/campaign_import.py, services/judgment_import.py)."""
from __future__ import annotations

import re

from django.conf import settings
from django.utils.text import slugify

from annotation.models import Campaign, Study, StudyNameError
from config.unstorable import unstorable as unstorable  # re-exported: shared with the request middleware

MAX_REPORTED_ERRORS = 20
#: Problems kept at most (a file of 500,000 bad lines is refused with the first ones and a count).
MAX_KEPT_ERRORS = 1000
#: Limits of a line of an imported file (docs/api.md §4): JSON nesting, texts.
MAX_DEPTH = 20
MAX_TEXT = 20_000

_JSON_TOKENS = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')


class CampaignFileError(ValueError):
    """The campaign file or the options are refused; `errors` lists (line, reason), line 0 = the file as a whole
    (a reason "name: …" concerns option `name`). `suggestions` maps an option to a value that would fit the
    file (e.g. the largest HIT size it fills). `omitted` counts problems found beyond those listed."""

    def __init__(self, errors: list[tuple[int, str]], suggestions: dict | None = None, omitted: int = 0):
        self.errors = errors
        self.suggestions = suggestions or {}
        self.omitted = omitted
        shown = errors[:MAX_REPORTED_ERRORS]
        text = "; ".join(f"line {line}: {reason}" if line else reason for line, reason in shown)
        if self.total > len(shown):
            text += f"; and {self.total - len(shown)} more"
        super().__init__(text)

    @property
    def total(self) -> int:
        """How many problems were found, listed or not."""
        return len(self.errors) + self.omitted


class Problems(list):
    """A file's problems as (line, reason): the first MAX_KEPT_ERRORS kept, `omitted` counting the rest; every
    importer collects them here and refuses the file with all of them at once."""

    omitted = 0

    def append(self, problem: tuple[int, str]) -> None:
        if len(self) < MAX_KEPT_ERRORS:
            super().append(problem)
        else:
            self.omitted += 1

    def add(self, line: int, reason: str) -> None:
        self.append((line, reason))

    def refuse(self) -> CampaignFileError:
        return CampaignFileError(sorted(self), omitted=self.omitted)


def too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text nests arrays and objects more than `limit` deep (brackets inside strings do not
    count). Checked before parsing, so a line of 100,000 "[" never reaches the parser's recursion."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > limit:
                return True
        elif token in ("]", "}"):
            depth -= 1
    return False


def unique_slug(name: str) -> str:
    """A slug from `name`, numbered if taken or reserved for a fixed route (RESERVED_CAMPAIGN_SLUGS)."""
    base = slugify(name)[:200] or "campaign"
    slug, n = base, 1
    while slug in settings.RESERVED_CAMPAIGN_SLUGS or Campaign.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def study_named(study: str | Study | None, owner=None) -> Study | None:
    """The study a campaign of `owner` joins: a `Study`, or the one `Study.resolve` gives for a name (the owner's
    own, or one shared with them, or a new one of theirs; never another researcher's); None for none. Every
    import front-end (API, admin, command line, background jobs, judgment imports) comes through here."""
    if isinstance(study, str):
        name = study.strip()
        if not name:
            return None
        try:
            return Study.resolve(name, owner)
        except StudyNameError as exc:
            raise CampaignFileError([(0, f"study: {exc}")]) from None
    return study
