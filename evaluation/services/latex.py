"""Result tables as LaTeX for papers: booktabs rules, groups (clusters) split by horizontal rules."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def escape(text: str) -> str:
    """Text safe inside a LaTeX table cell: the special characters quoted, a Unicode minus as math minus."""
    escaped = "".join(_SPECIAL.get(ch, ch) for ch in str(text))
    return escaped.replace("−", "$-$").replace("–", "--").replace("\r", " ").replace("\n", " ")


def booktabs(columns: Sequence[tuple[str, str, str]], rows: Sequence[Mapping], formats: Mapping[str, Callable] = {},
             group: str | None = None, caption: str = "", rule_after: str | None = None) -> str:
    """A `tabular` with \\toprule, \\midrule and \\bottomrule (needs \\usepackage{booktabs}).

    `columns` are (heading, row key, alignment l/c/r); `formats` map a key to a function giving the
    cell's text; with `group`, a \\midrule separates rows whose `group` value differs (clusters); with
    `rule_after`, a \\cmidrule over every column follows each row (but the last) whose `rule_after` is true
    (WMT25's table rules).
    """
    lines = [f"% {escape(caption)}"] if caption else []
    lines += [r"\begin{tabular}{" + "".join(align for _, _, align in columns) + "}", r"\toprule",
              " & ".join(escape(heading) for heading, _, _ in columns) + r" \\", r"\midrule"]
    previous = None
    for i, row in enumerate(rows):
        if group and i and row.get(group) != previous:
            lines.append(r"\midrule")
        previous = row.get(group) if group else None
        cells = []
        for _, key, _ in columns:
            value = row.get(key)
            text = formats[key](value) if key in formats else ("--" if value is None else value)
            cells.append(escape(text))
        lines.append(" & ".join(cells) + r" \\")
        if rule_after and row.get(rule_after) and i + 1 < len(rows):
            lines.append(r"\cmidrule{1-" + str(len(columns)) + "}")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def percent(value) -> str:
    """A share as a percentage with one decimal, `--` when missing."""
    return "--" if value is None else f"{100 * value:.1f}"


def _fixed(digits: int) -> Callable:
    return lambda value: "--" if value is None else f"{value:.{digits}f}".replace("-", "−")


def _rank_range(value) -> str:
    if not value:
        return "--"
    low, high = value
    return str(low) if low == high else f"{low}–{high}"


def systems_booktabs(rows: Sequence[Mapping], score_heading: str, caption: str, digits: int = 2,
                     rule_after: str | None = None) -> str:
    """A family's stored systems rows (the fields every family answers `systems/` with: rank, system, score,
    rank_range, n, cluster) as a booktabs ranking, clusters split by rules, as DA's and pairwise's tables are;
    with `rule_after`, the rows' own rules (`booktabs`) replace the cluster rules."""
    columns = [("Rank", "rank", "r"), ("Range", "rank_range", "c"), ("System", "system", "l"),
               (score_heading, "score", "r"), ("N", "n", "r")]
    return booktabs(columns, rows, {"score": _fixed(digits), "rank_range": _rank_range},
                    group=None if rule_after else "cluster", caption=caption, rule_after=rule_after)
