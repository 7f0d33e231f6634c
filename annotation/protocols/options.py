"""Import options, declared once: each protocol lists its `Option`s and the admin form, the API
serializer and `manage.py import_campaign` are generated from them, so names, defaults and
validation are the same everywhere.

`parse` turns raw values (strings from a command line or a multipart form, typed values from
JSON) into the campaign's model fields and its `options` JSON, or raises one `OptionError`
naming every bad field. Choices and defaults that another app knows (the reliability tests of
`evaluation`) are filled in through `set_choices` / `set_default`, and what else it knows about
them (how many quality-control pairs a test needs) through `set_provider`: annotation never
imports evaluation.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

KINDS = ("int", "float", "decimal", "str", "text", "bool", "choice", "list")
TRUE = {"true", "1", "yes", "on"}
FALSE = {"false", "0", "no", "off"}
#: Caps for strings without their own `max_length`, and for the digits of a number.
MAX_STR, MAX_TEXT, MAX_NUMBER = 200, 20_000, 40


class OptionError(ValueError):
    """Refused import options: `errors` lists (field name, reason)."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__("; ".join(f"{name}: {reason}" for name, reason in errors))


@dataclass(frozen=True)
class Option:
    """One import setting. `name` is the field name (API, admin) and, with dashes, the CLI flag.

    `target` says where the value lands: a Campaign model field ("campaign", named `key` or the
    option's name) or the campaign's `options` JSON ("options"; `key` may be a path such as
    ("spam_rates", "document")). `choices` is a tuple of (value, label), or the name of a
    provider set with `set_choices`. `default=None` means "not stored" (the model's default),
    unless a provider set with `set_default` computes it from the other values.
    """

    name: str
    kind: str
    default: object = None
    help: str = ""
    label: str = ""
    minimum: float | Decimal | None = None
    maximum: float | Decimal | None = None
    step: int | None = None
    max_length: int | None = None
    decimal_places: int | None = None
    choices: tuple[tuple[str, str], ...] | str | None = None
    target: str = "campaign"
    key: str | tuple[str, ...] | None = None
    required: bool = False
    missing: str = "required"
    #: How the help texts describe a default of None ("random", "the test's").
    default_text: str = ""
    store: Callable[[object], object] | None = field(default=None, compare=False)

    def __post_init__(self):
        if self.kind not in KINDS or self.target not in ("campaign", "options"):
            raise ValueError(f"option {self.name!r}: unknown kind {self.kind!r} or target {self.target!r}")

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()

    def choice_list(self) -> list[tuple[str, str]]:
        """The allowed values with labels; a provider's current list when `choices` names one."""
        if isinstance(self.choices, str):
            provider = _choice_providers.get(self.choices)
            if provider is None:
                return [(str(self.default), str(self.default))] if self.default is not None else []
            return [(str(value), str(label)) for value, label in provider()]
        return list(self.choices or ())

    def parse(self, value: object) -> object:
        """The typed value of one raw value; raises ValueError with the reason."""
        if isinstance(value, str) and "\x00" in value:
            raise ValueError("must not contain NUL characters")
        parse = getattr(self, f"_parse_{self.kind}")
        return parse(value)

    def _digits(self, value: object, what: str) -> int | float | Decimal | str:
        """A number as given, or a short stripped string to convert; `what` names the expected kind."""
        if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            return value
        if not isinstance(value, str):
            raise ValueError(f"must be {what}")
        if len(value) > MAX_NUMBER:
            raise ValueError("is too long")
        return value.strip()

    def _check_range(self, value):
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"must be at least {number_text(self.minimum)}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"must be at most {number_text(self.maximum)}")
        if self.step and value % self.step:
            raise ValueError(f"must be a multiple of {self.step}")
        return value

    def _parse_int(self, value):
        value = self._digits(value, "a whole number")
        try:
            number = int(value)
            if isinstance(value, (float, Decimal)) and value != number:
                raise ValueError
        except (OverflowError, ValueError):
            raise ValueError("must be a whole number") from None
        return self._check_range(number)

    def _parse_float(self, value):
        digits = self._digits(value, "a number")
        try:
            number = float(digits)
        except OverflowError:  # an integer too large for a float (JSON has no limit): out of range, compared exactly
            self._check_range(digits)
            raise ValueError("must be a finite number") from None
        except ValueError as exc:
            raise ValueError(str(exc) if "too long" in str(exc) else "must be a number") from None
        if not math.isfinite(number):
            raise ValueError("must be a finite number")
        return self._check_range(number)

    def _parse_decimal(self, value):
        try:
            number = Decimal(str(self._digits(value, "a number such as 1.50")))
        except InvalidOperation:
            number = None
        if number is None or not number.is_finite():
            raise ValueError("must be a number such as 1.50")
        if self.decimal_places is not None and -number.as_tuple().exponent > self.decimal_places:
            raise ValueError(f"must have at most {self.decimal_places} decimal places")
        return self._check_range(number)

    def _text(self, value, limit: int) -> str:
        if not isinstance(value, str):
            raise ValueError("must be a string")
        if len(value) > limit:
            raise ValueError(f"must be at most {limit} characters")
        return value

    def _parse_str(self, value):
        text = self._text(value, self.max_length or MAX_STR).strip()
        if "\n" in text or "\r" in text:
            raise ValueError("must be a single line")
        return text

    def _parse_text(self, value):
        return self._text(value, self.max_length or MAX_TEXT).strip()

    def _parse_bool(self, value):
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        word = value.strip().lower() if isinstance(value, str) and len(value) <= MAX_NUMBER else None
        if word in TRUE or word in FALSE:
            return word in TRUE
        raise ValueError("must be true or false")

    def _parse_choice(self, value):
        allowed = [v for v, _ in self.choice_list()]
        if not isinstance(value, str) or value.strip() not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return value.strip()

    def _parse_list(self, value):
        if isinstance(value, str):
            value = self._text(value, MAX_TEXT).split(",")
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ValueError("must be a comma-separated list, e.g. A,B")
        items = [v.strip() for v in value if v.strip()]
        for item in items:
            if "\x00" in item:
                raise ValueError("must not contain NUL characters")
            if len(item) > (self.max_length or MAX_STR):
                raise ValueError(f"each item must be at most {self.max_length or MAX_STR} characters")
        return items


@dataclass(frozen=True)
class ParsedOptions:
    """What `Protocol.parse_options` returns: Campaign model fields and the `options` JSON."""

    protocol: str
    campaign_fields: dict
    options: dict


_choice_providers: dict[str, Callable[[], Iterable[tuple[str, str]]]] = {}
_default_providers: dict[str, Callable[[dict], object]] = {}
_providers: dict[str, Callable[..., object]] = {}


def set_choices(key: str, provider: Callable[[], Iterable[tuple[str, str]]]) -> None:
    """Let another app supply the choices of options whose `choices` is `key` (read at each use)."""
    _choice_providers[key] = provider


def set_default(name: str, provider: Callable[[dict], object]) -> None:
    """Compute the default of option `name` (declared with default None) from the other parsed values
    (and `"_protocol"`, the protocol's name), in the order the options are declared."""
    _default_providers[name] = provider


def set_provider(name: str, function: Callable[..., object]) -> None:
    """Let another app answer a named question about the options' values, e.g. "min_pairs": how many
    quality-control pairs per worker a reliability test needs (see `provider`)."""
    _providers[name] = function


def provider(name: str) -> Callable[..., object] | None:
    """The function another app set for `name`, or None when nobody did (annotation then skips what needs it)."""
    return _providers.get(name)


def number_text(value) -> str:
    """A bound or default as people write it: 5, 0.05, 1.50."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def is_blank(value: object) -> bool:
    return value is None or isinstance(value, str) and not value.strip()


def parse(protocol: str, fields: Sequence[Option], raw: Mapping[str, object], *,
          defaults: Mapping[str, object] | None = None,
          check: Callable[[dict], list[tuple[str, str]]] | None = None) -> ParsedOptions:
    """Validate `raw` against `fields`; blank values take the default; `check` adds cross-field problems."""
    by_name = {option.name: option for option in fields}
    errors = [(name, f"does not apply to protocol {protocol!r}")
              for name, value in raw.items() if name not in by_name and not is_blank(value)]
    values: dict[str, object] = {}
    for option in fields:
        value = raw.get(option.name)
        if is_blank(value):
            if option.required:
                errors.append((option.name, option.missing))
            values[option.name] = (defaults or {}).get(option.name, option.default)
            continue
        try:
            values[option.name] = option.parse(value)
        except ValueError as exc:
            errors.append((option.name, str(exc)))
            values[option.name] = None
    failed = {name for name, _ in errors}
    for option in fields:
        if values.get(option.name) is None and option.name in _default_providers and option.name not in failed:
            values[option.name] = _default_providers[option.name]({**values, "_protocol": protocol})
    if check is not None:  # cross-field checks see the values that parsed; a failed field is reported once
        errors += [(name, reason) for name, reason in check(values) if name not in failed]
    if errors:
        raise OptionError(errors)
    campaign_fields: dict = {}
    options: dict = {}
    for option in fields:
        value = values[option.name]
        if value is None:
            continue
        value = option.store(value) if option.store else value
        if option.target == "campaign":
            campaign_fields[option.key or option.name] = value
            continue
        path = option.key or option.name
        path = (path,) if isinstance(path, str) else path
        node = options
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return ParsedOptions(protocol, campaign_fields, options)


def defaulted(protocol: str, fields: Sequence[Option], raw: Mapping[str, object]) -> set[str]:
    """The options of `raw` whose value is just what their computed default (`set_default`) makes of the other
    values, in declaration order as `parse` computes them: e.g. a settings file's test that is its preset's.
    Given a new preset, such values follow it (annotation/services/campaign_settings.py)."""
    values: dict[str, object] = {}
    for option in fields:
        try:
            values[option.name] = option.default if is_blank(raw.get(option.name)) else option.parse(raw[option.name])
        except ValueError:
            values[option.name] = None
    same = set()
    for option in fields:
        provide = _default_providers.get(option.name)
        if provide is None or values[option.name] is None:
            continue
        if provide({**values, option.name: None, "_protocol": protocol}) == values[option.name]:
            same.add(option.name)
    return same


def describe_default(option: Option, default: object = None) -> str:
    """The default as the help texts say it."""
    value = option.default if default is None else default
    if value is None and option.default_text:
        return option.default_text
    if option.kind == "bool":
        return "yes" if value else "no"
    if value is None or value == "":
        return "none"
    if option.kind == "list":
        return ",".join(value)
    return number_text(value)


def applies_to(protocols: Sequence[str], every: Sequence[str]) -> str:
    """'' when an option applies to every protocol, else which ones use it."""
    return "" if set(protocols) == set(every) else f"Only {', '.join(protocols)}."


def help_text(option: Option, protocols: Sequence[str], every: Sequence[str], default: object = None) -> str:
    """One help text for every front-end: what the option does, its values, its default, who uses it."""
    parts = [option.help]
    if option.kind == "choice":
        parts.append(f"One of: {', '.join(value for value, _ in option.choice_list())}.")
    parts.append(f"Default: {describe_default(option, default)}." if not option.required else "Required.")
    parts.append(applies_to(protocols, every))
    return " ".join(part for part in parts if part)


def union(protocols, *, analysis: bool = False) -> list[tuple[Option, list[str]]]:
    """Every option of `protocols` (objects with `name` and `option_fields()`), each once, with the
    names of the protocols that take it; an option two protocols declare differently is an error.
    `analysis`: only their statistics options (`analysis_options()`, what imported campaigns take)."""
    found: dict[str, tuple[Option, list[str]]] = {}
    for protocol in protocols:
        for option in (protocol.analysis_options() if analysis else protocol.option_fields()):
            if option.name in found and found[option.name][0] != option:
                raise ValueError(f"option {option.name!r} is declared differently by two protocols")
            found.setdefault(option.name, (option, []))[1].append(protocol.name)
    return list(found.values())
