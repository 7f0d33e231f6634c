"""How spread over the tree each protocol is (issue 24, "What it must show"): one row per protocol package, with

- before: the files it owned at commit f39f52e (before the reshaping), given BY HAND below (`BEFORE`: its strategy
  module, its builders and importers in annotation/services/, its family package, its screen scripts and
  templates, its family's page template), counted in that commit's tree;
- after: the files of its package (annotation/protocols/<name>/) and of its family packages
  (evaluation/families/<family>/), BY RULE, in the working tree;
- outside: the files outside those packages that name it, BY RULE: a protocol name of the package in quotes
  ("ranking" or 'ranking'), or a module path of its package or families (annotation.protocols.ranking,
  annotation/protocols/ranking, evaluation.families.ranking, ...). Left out: tests/, docs/, migrations, the
  settings' registry lists (the MTEVAL_PROTOCOLS and MTEVAL_RESULT_FAMILIES lines of config/settings.py), the demo
  sample files (annotation/demo/*.jsonl, samples.json) and images. Target: 0. The last column counts those of
  them that are the application (annotation/, evaluation/, config/, templates/, static/), the rest being tooling
  (benchmarks/, scripts/, .importlinter).

    python scripts/protocol_files.py [--files]      # --files lists the outside files of each row

Run from the repository root; it reads the protocol registry (Django's settings) to know each package's protocols.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE_COMMIT = "f39f52e"
#: The files each protocol package owned at f39f52e, by hand (fnmatch patterns over that commit's tree).
BEFORE = {
    "direct_assessment": ["annotation/protocols/direct_assessment.py", "annotation/services/document_builder.py",
                          "evaluation/families/direct_assessment/*", "static/annotation/slider.js",
                          "templates/annotation/screens/slider.html",
                          "templates/evaluation/families/direct_assessment.html"],
    "ranking": ["annotation/protocols/ranking.py", "annotation/services/ranking_builder.py",
                "annotation/services/rank_import.py", "evaluation/families/ranking/*",
                "evaluation/families/acceptance/*", "static/annotation/ranking.js", "static/annotation/acceptance.js",
                "templates/annotation/screens/ranking.html", "templates/annotation/screens/acceptance.html",
                "templates/evaluation/families/ranking.html", "templates/evaluation/families/acceptance.html"],
    "error_spans": ["annotation/protocols/error_spans.py", "annotation/services/error_span_*.py",
                    "annotation/services/esa_jsonl_import.py", "annotation/services/mqm_tsv_import.py",
                    "evaluation/families/error_spans/*", "static/annotation/error_spans.js",
                    "static/annotation/contrastive_esa.js", "static/annotation/spans_editor.js",
                    "templates/annotation/screens/error_spans.html",
                    "templates/annotation/screens/contrastive_esa.html",
                    "templates/evaluation/families/error_spans.html"],
    "pairwise": ["annotation/protocols/pairwise.py", "annotation/services/pairwise_*.py",
                 "evaluation/families/pairwise/*", "static/annotation/pairwise.js",
                 "templates/annotation/screens/pairwise.html", "templates/evaluation/families/pairwise.html"],
    "post_edit": ["annotation/protocols/post_edit.py", "evaluation/families/post_edit/*",
                  "static/annotation/post_edit*.js", "static/annotation/char_diff.js",
                  "templates/annotation/screens/post_edit*.html", "templates/evaluation/families/post_edit.html"],
    "reading_comprehension": ["annotation/protocols/reading_comprehension.py", "annotation/services/comprehension.py",
                              "evaluation/families/reading_comprehension/*",
                              "static/annotation/reading_comprehension.js",
                              "templates/annotation/screens/reading_comprehension_*.html",
                              "templates/evaluation/families/reading_comprehension.html"],
    "reference_translation": ["annotation/protocols/reference_translation.py",
                              "evaluation/families/reference_translation/*",
                              "static/annotation/reference_translation*.js",
                              "templates/annotation/screens/reference_translation*.html",
                              "templates/evaluation/families/reference_translation.html"],
}
APPLICATION = ("annotation/*", "evaluation/*", "config/*", "templates/*", "static/*")
SKIPPED = ("tests/*", "docs/*", "*/migrations/*", "annotation/demo/*.jsonl", "annotation/demo/samples.json",
           "*.png", "*.svg", "*.ico")
REGISTRY_LINE = re.compile(r'^\s*"(annotation\.protocols|evaluation\.families)\.[\w.]+",\s*$')


def git_files(*args: str) -> list[str]:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()


def packages() -> dict[str, tuple[list[str], list[str]]]:
    """Protocol package -> (its protocol names, its family packages), from the registries."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from annotation.protocols import all_protocols
    from evaluation.families import get_family

    found: dict[str, tuple[list[str], list[str]]] = {}
    for protocol in all_protocols():
        package = type(protocol).__module__.split(".")[2]
        names, families = found.setdefault(package, ([], []))
        names.append(protocol.name)
        family = type(get_family(protocol.family)).__module__
        if family.startswith("evaluation.families.") and family.count(".") >= 2:
            family_package = family.split(".")[2]
            if family_package not in families:
                families.append(family_package)
    return found


def names_it(path: Path, relative: str, names: list[str], modules: list[str]) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, FileNotFoundError):
        return False
    if relative == "config/settings.py":
        text = "\n".join(line for line in text.splitlines() if not REGISTRY_LINE.match(line))
    quoted = re.compile("|".join(rf"([\"']){re.escape(name)}\1" for name in names))
    paths = re.compile("|".join(rf"\b{re.escape(m)}\b" for m in modules))
    return bool(quoted.search(text) or paths.search(text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", action="store_true", help="list the outside files of each row")
    args = parser.parse_args()
    before_tree = git_files("ls-tree", "-r", "--name-only", BEFORE_COMMIT)
    now_tree = [f for f in git_files("ls-files") if (ROOT / f).exists()]
    rows = []
    for package, (names, families) in packages().items():
        before = sorted({f for f in before_tree for pattern in BEFORE.get(package, []) if fnmatch.fnmatch(f, pattern)})
        owned = [f"annotation/protocols/{package}/*", *(f"evaluation/families/{family}/*" for family in families)]
        after = [f for f in now_tree if any(fnmatch.fnmatch(f, p) for p in owned)]
        modules = [m for family in families for m in (f"evaluation.families.{family}", f"evaluation/families/{family}")]
        modules += [f"annotation.protocols.{package}", f"annotation/protocols/{package}", f"protocols.{package}"]
        outside = [f for f in now_tree if not any(fnmatch.fnmatch(f, p) for p in (*owned, *SKIPPED))
                   and names_it(ROOT / f, f, names, modules)]
        rows.append((package, names, families, before, after, outside))
    print("| protocol package | protocols | families | owned before (f39f52e, by hand) | owned after (package + "
          "family) | outside files naming it after | of which application |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for package, names, families, before, after, outside in rows:
        print(f"| {package} | {', '.join(names)} | {', '.join(families)} | {len(before)} | {len(after)} | "
              f"{len(outside)} | {sum(any(fnmatch.fnmatch(f, p) for p in APPLICATION) for f in outside)} |")
    if args.files:
        for package, _names, _families, _before, _after, outside in rows:
            print(f"\n{package}: {', '.join(outside) or '-'}")


if __name__ == "__main__":
    main()
