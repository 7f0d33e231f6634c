"""scripts/dump_outputs.py, the before/after output dump of issue 24: two runs on the same code write the same files,
byte for byte, and the files hold real answers (results, downloads, pages), not errors."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def dump(outdir: Path) -> dict[str, bytes]:
    """Run the dump of two protocols (on its own SQLite database, one HIT per worker) into `outdir`; every file by
    relative path. A process per run, so that anything that changes between processes (hash seeds) shows."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "dump_outputs.py"), str(outdir),
                           "--protocols", "fluency,pairwise-fluency", "--hits", "1", "--no-migrations"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    files = {str(p.relative_to(outdir)): p.read_bytes() for p in outdir.rglob("*") if p.is_file()}
    assert summary["files"] == len(files)
    return files


def test_two_runs_of_the_dump_are_byte_identical_and_hold_real_answers(tmp_path):
    first, second = dump(tmp_path / "first"), dump(tmp_path / "second")
    assert sorted(first) == sorted(second)
    differing = [name for name in first if first[name] != second[name]]
    assert differing == [], f"not deterministic: {differing[:10]}"
    assert len(first) > 100 and all(first.values()), [n for n, body in first.items() if not body][:10]
    index = [line.split("\t") for line in first["_index.tsv"].decode().splitlines()]
    statuses = {row[0]: row[3] for row in index}
    assert "500" not in statuses.values()
    systems = json.loads(first["fluency/dump-fluency/api~campaigns~dump-fluency~systems@workers=all.json"])
    assert [row["system"] for row in systems["results"]] == ["sys-A", "sys-B", "sys-C", "sys-D"]
    workers = json.loads(first["fluency/dump-fluency/api~campaigns~dump-fluency~workers.json"])["results"]
    assert {w["worker"]: w["reliable"] for w in workers}["random-1"] is False
    tex = "pairwise-fluency/dump-pairwise-fluency/results~dump-pairwise-fluency~pairwise.tex.tex"
    assert statuses[tex] == "200" and b"\\toprule" in first[tex]
    hit = json.loads(first["pairwise-fluency/pairwise-fluency/hit-first-item.json"])
    assert hit["item"]["protocol"] == "pairwise-fluency" and hit["item"]["A"]
    assert b"<hit-token>" in first["_index.tsv"]  # the HIT links are normalised, not left random
