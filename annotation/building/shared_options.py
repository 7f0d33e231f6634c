"""Import options that several protocols take with the same name and meaning (the reliability statistics, the live
reliability gate, screens per HIT, the Bradley–Terry leaderboard). They live here, owned by no protocol, so that no
protocol package imports another's options; `options.union` checks that every protocol declares a shared option the
same way."""
from __future__ import annotations

from annotation.protocols.options import Option

#: How careful workers are told from careless ones and how systems are clustered (Direct Assessment, error spans).
RELIABILITY_OPTIONS = (
    Option("statistics_preset", "choice", None, "A named set of statistical conventions (test, threshold, "
           "cluster rule, scope); the options below override it (docs/methods.md#worker-reliability).",
           label="Statistics preset", choices="statistics_preset", target="options",
           default_text="the family's default: WMT21 DA for DA, WMT24 ESA for error spans"),
    Option("qc_test", "choice", None, "How careful workers are told from careless ones "
           "(docs/methods.md#worker-reliability).", label="Reliability test", choices="qc_test",
           default_text="the preset's"),
    Option("qc_threshold", "float", None, "A worker is reliable when the test's p-value is below this "
           "(appraise keeps its fixed 0.01).", label="Reliability threshold", minimum=0.0001, maximum=0.5,
           default_text="the reliability test's own (0.05 for most)"),
    Option("threshold_rule", "choice", None, "Whether a worker passes at p < threshold or p ≤ threshold.",
           choices="threshold_rule", target="options", default_text="the preset's"),
    Option("reliability_scope", "choice", None, "Test each worker on their pairs in the whole study, or in this "
           "campaign only.", choices="reliability_scope", target="options", default_text="the preset's"),
    Option("cluster_rule", "choice", None, "How systems are grouped into significance clusters "
           "(docs/methods.md#significance-and-clusters).", choices="cluster_rule", target="options",
           default_text="the preset's"),
)
#: The reliability test's threshold alone (ranking's gate tests its gold screens with it).
QC_THRESHOLD = next(o for o in RELIABILITY_OPTIONS if o.name == "qc_threshold")

#: The live reliability gate (docs/methods.md#live-reliability-gate): Direct Assessment, error spans, ranking.
GATE_OPTIONS = (
    Option("gate", "bool", None, "Live reliability gate (docs/methods.md#live-reliability-gate): after each "
           "finished HIT the worker's reliability test runs over all their pairs so far (in the campaign or its "
           "study, by reliability_scope); a worker who fails gets no further HIT, their unfinished HIT goes to "
           "others, and their judgments stay, flagged.", label="Live reliability gate", target="options",
           default_text="no"),
    Option("gate_rule", "choice", None, "When the gate stops a worker: test — the reliability test's p-value "
           "fails the threshold (p ≥ qc_threshold, or p > it under threshold_rule le) after at least "
           "gate_min_pairs pairs; missed — after at least gate_min_pairs control items, the share of them "
           "missed (a bad reference not scored below its original) is at least gate_max_missed.",
           choices=(("test", "the reliability test fails after gate_min_pairs pairs"),
                    ("missed", "the share of control items missed reaches gate_max_missed")),
           target="options", default_text="test"),
    Option("gate_min_pairs", "int", None, "The fewest quality-control pairs a worker must have done before the "
           "gate judges them.", minimum=2, maximum=1000, target="options", default_text="5"),
    Option("gate_max_missed", "float", None, "Rule missed: the share of control items missed at which a worker "
           "is stopped.", minimum=0.01, maximum=1.0, target="options", default_text="0.5"),
)

#: Screens per HIT (ranking, post-editing, reference translation): the campaign's HIT size.
SCREENS_PER_HIT = Option("screens_per_hit", "int", 10, "Screens per HIT.", minimum=1, maximum=100, key="hit_size")

#: The most bootstrap resamples a result part runs (evaluation's `MAX_BOOTSTRAP_RUNS`, which a test holds equal).
MAX_BOOTSTRAP_RUNS = 1000
#: The Bradley–Terry leaderboard of the pairwise and ranking families (docs/methods.md#bradley-terry-leaderboards):
#: statistics options, so an imported arena file takes them too; unset, the settings decide.
BRADLEY_TERRY_OPTIONS = (
    Option("bradley_terry_ties", "choice", None, "How the Bradley–Terry leaderboard models ties: davidson "
           "(Davidson 1970) or rao-kupper (Rao & Kupper 1967).", label="Bradley–Terry tie model",
           choices="bradley_terry_ties", target="options", default_text="davidson, the setting BRADLEY_TERRY_TIES"),
    Option("bradley_terry_runs", "int", None, "Bootstrap resamples of the Bradley–Terry leaderboard's intervals and "
           "rank ranges (0: none, the fit on all battles alone).", label="Bradley–Terry bootstrap runs", minimum=0,
           maximum=MAX_BOOTSTRAP_RUNS, target="options", default_text="1,000, the setting BRADLEY_TERRY_RUNS"),
)
