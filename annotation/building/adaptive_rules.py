"""The settings of an adaptive Direct Assessment campaign and what its budget buys (docs/methods.md §12.2).

Plain Python, no models: the protocol checks the import options with `adaptive_problems`, the importer and the
evaluation app read a campaign's settings with `adaptive_settings`.

The budget is turned into a number of HITs, the unit that is built and paid for: a HIT done by `redundancy`
workers collects `hit_size × redundancy` judgments (every item counts: quality-control items are judged and paid
too) and costs `payment_per_hit × redundancy`. `budget_judgments` buys ⌊budget_judgments / (hit_size ×
redundancy)⌋ HITs, `budget_money` ⌊budget_money / (payment_per_hit × redundancy)⌋; with both, the smaller number.
No more HITs than that are ever built, so the judgments and money of finished HITs never pass the budget.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

DEFAULT_BATCH_HITS = 10
DEFAULT_ALPHA = 0.05
DEFAULT_SPENDING = "obrien-fleming"
#: Give up a pair whose predictive power is below this (docs/methods.md §12.2): the simulation's recommendation.
DEFAULT_FUTILITY = 0.10
SPENDING_RULES = ("obrien-fleming", "pocock")
#: The options that only mean something with `adaptive` on, with their defaults: a default is no choice (the admin's
#: select always sends one), anything else without `adaptive` is refused.
ADAPTIVE_ONLY = {"budget_judgments": None, "budget_money": None, "batch_hits": DEFAULT_BATCH_HITS,
                 "adaptive_alpha": DEFAULT_ALPHA, "alpha_spending": DEFAULT_SPENDING,
                 "adaptive_futility": DEFAULT_FUTILITY}


@dataclass(frozen=True)
class AdaptiveSettings:
    """An adaptive campaign's settings, typed, with what its budget buys."""

    budget_judgments: int | None
    budget_money: Decimal | None
    batch_hits: int
    alpha: float
    spending: str
    #: Pairs whose predictive power falls below this are given up (0: never).
    futility: float
    hit_size: int
    redundancy: int
    payment_per_hit: Decimal
    #: The most HITs the budget buys (see the module's docstring).
    budget_hits: int

    @property
    def judgments_per_hit(self) -> int:
        """Judgments one HIT collects when all its workers finish it."""
        return self.hit_size * self.redundancy

    @property
    def money_per_hit(self) -> Decimal:
        return self.payment_per_hit * self.redundancy

    @property
    def usable_judgments(self) -> int:
        """The judgments of `budget_hits` HITs: the budget as far as whole HITs spend it (the information
        fractions of the looks are shares of this)."""
        return self.budget_hits * self.judgments_per_hit


class AdaptiveSettingsError(ValueError):
    """Adaptive options that make no campaign: `errors` lists (option name, reason)."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__("; ".join(f"{name}: {reason}" for name, reason in errors))


def _whole(value, name: str, errors: list, minimum: int = 1) -> int | None:
    if value is None:
        return None
    try:
        number = int(str(value).strip()) if not isinstance(value, bool) else None
    except ValueError:
        number = None
    if number is None or number < minimum:
        errors.append((name, f"must be a whole number of at least {minimum}"))
        return None
    return number


def _money(value, name: str, errors: list) -> Decimal | None:
    if value is None:
        return None
    try:
        number = Decimal(str(value).strip()) if not isinstance(value, bool) else None
    except InvalidOperation:
        number = None
    if number is None or not number.is_finite() or number <= 0:
        errors.append((name, "must be an amount above 0, such as 250.00"))
        return None
    return number


def _futility(value, errors: list) -> float:
    if value is None:
        return DEFAULT_FUTILITY
    try:
        futility = float(value) if not isinstance(value, bool) else -1.0
    except (TypeError, ValueError):
        futility = -1.0
    if not 0 <= futility < 0.5:
        errors.append(("adaptive_futility", "must be a number from 0 (never give a pair up) to below 0.5, such as 0.1"))
    return futility


def _alpha(value, errors: list) -> float:
    if value is None:
        return DEFAULT_ALPHA
    try:
        alpha = float(value) if not isinstance(value, bool) else -1.0
    except (TypeError, ValueError):
        alpha = -1.0
    if not 0 < alpha < 1:
        errors.append(("adaptive_alpha", "must be a number between 0 and 1, such as 0.05"))
        return DEFAULT_ALPHA
    return alpha


def adaptive_settings(options: dict, *, hit_size: int, redundancy: int, payment_per_hit) -> AdaptiveSettings | None:
    """The typed settings of a campaign with these options, None when it is not adaptive; raises
    `AdaptiveSettingsError` naming every option that makes no adaptive campaign."""
    options = options or {}
    errors: list[tuple[str, str]] = []
    if not options.get("adaptive"):
        errors += [(name, "applies only with adaptive on") for name, default in ADAPTIVE_ONLY.items()
                   if options.get(name) not in (None, default)]
        if errors:
            raise AdaptiveSettingsError(errors)
        return None
    if options.get("document_mode"):
        errors.append(("adaptive", "cannot be combined with document_mode: a batch favours single system outputs, "
                                   "not whole documents"))
    judgments = _whole(options.get("budget_judgments"), "budget_judgments", errors)
    money = _money(options.get("budget_money"), "budget_money", errors)
    batch = _whole(options.get("batch_hits"), "batch_hits", errors) or DEFAULT_BATCH_HITS
    alpha = _alpha(options.get("adaptive_alpha"), errors)
    spending = options.get("alpha_spending") or DEFAULT_SPENDING
    futility = _futility(options.get("adaptive_futility"), errors)
    if spending not in SPENDING_RULES:
        errors.append(("alpha_spending", f"must be one of {', '.join(SPENDING_RULES)}"))
    payment = _money(payment_per_hit, "payment_per_hit", []) or Decimal("0")
    if options.get("budget_judgments") is None and options.get("budget_money") is None:
        errors.append(("adaptive", "needs a budget: budget_judgments, budget_money or both"))
    if money is not None and payment <= 0:
        errors.append(("budget_money", "needs payment_per_hit above 0 to tell how many HITs it buys"))
    if errors:
        raise AdaptiveSettingsError(errors)
    hit_size, redundancy = int(hit_size), int(redundancy or 1)
    bought = []
    if judgments is not None:
        bought.append(("budget_judgments", judgments // (hit_size * redundancy),
                       f"one HIT of {hit_size} items done by {redundancy} worker(s) collects "
                       f"{hit_size * redundancy} judgments"))
    if money is not None:
        bought.append(("budget_money", int(money // (payment * redundancy)),
                       f"one HIT done by {redundancy} worker(s) costs {payment * redundancy}"))
    name, hits, why = min(bought, key=lambda b: b[1])
    if hits < 1:
        raise AdaptiveSettingsError([(name, f"buys no HIT: {why}")])
    if hits <= batch:
        raise AdaptiveSettingsError([("batch_hits", f"the budget buys {hits} HIT(s) ({why}), no more than one batch "
                                                    f"of {batch}: nothing would be left to allocate after the first "
                                                    "look. Lower batch_hits or raise the budget")])
    return AdaptiveSettings(budget_judgments=judgments, budget_money=money, batch_hits=batch, alpha=alpha,
                            spending=spending, futility=futility, hit_size=hit_size, redundancy=redundancy,
                            payment_per_hit=payment,
                            budget_hits=hits)


def adaptive_problems(values: dict) -> list[tuple[str, str]]:
    """The import's check of the adaptive options among the parsed option values (`Protocol.check_parsed`);
    fields that failed their own checks are None and are not reported again."""
    if values.get("hit_size") is None or values.get("redundancy") is None:
        return []
    try:
        adaptive_settings(values, hit_size=values["hit_size"], redundancy=values["redundancy"],
                          payment_per_hit=values.get("payment_per_hit"))
    except AdaptiveSettingsError as exc:
        return exc.errors
    return []


def campaign_settings(campaign) -> AdaptiveSettings | None:
    """A stored campaign's adaptive settings (None: not adaptive); raises AdaptiveSettingsError when its options
    were changed into nonsense after the import."""
    return adaptive_settings(campaign.options or {}, hit_size=campaign.hit_size, redundancy=campaign.redundancy,
                             payment_per_hit=campaign.payment_per_hit)
