"""Judgment-import formats are declared by the protocols that read them (`Protocol.judgment_formats`), and the
import, the command and the API offer those of the registered protocols: a protocol that declares a format of its
own (here a toy format defined in this module) brings it, its options and their help, with nothing else edited."""
import io
import json
from collections.abc import Iterable

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.utils.module_loading import import_string

from annotation.building.campaign_files import CampaignFileError
from annotation.building.judgment_files import JudgmentFormat, JudgmentRow, ParsedJudgments
from annotation.building.text_lines import numbered_lines
from annotation.models import Judgment
from annotation.protocols import all_protocols, get_protocol
from annotation.services.judgment_import import (
    FORMAT_TEXT_OPTIONS,
    JUDGMENT_FORMATS,
    import_judgments,
    judgment_formats,
)

pytestmark = pytest.mark.django_db


def parse_toy(lines: Iterable[bytes | str], scale: str = "100") -> ParsedJudgments:
    """`worker<TAB>segment<TAB>score` a line, the score out of `scale`, stored out of 100."""
    errors: list[tuple[int, str]] = []
    rows = []
    for _, text in numbered_lines(lines, errors):
        worker, segment, score = text.rstrip("\r\n").split("\t")
        rows.append(JudgmentRow(hit="toy", worker=worker, item_type="system", system="toy-system",
                                segment=int(segment), score=float(score) * 100 / float(scale)))
    if errors:
        raise CampaignFileError(errors)
    return ParsedJudgments(rows=rows, protocol="fluency")


TOY = JudgmentFormat("toy-tsv", parse_toy, protocols=("fluency",), text_options={"scale": "the toy's top score"})
OTHER_TOY = JudgmentFormat("toy-tsv", parse_toy, protocols=("adequacy",))
TOY_PATH = f"{__name__}.TOY"


@pytest.fixture
def toy_fluency(monkeypatch):
    """The fluency protocol declares the toy format after its own."""
    fluency = get_protocol("fluency")
    monkeypatch.setattr(fluency, "judgment_formats", (*fluency.judgment_formats, TOY_PATH))
    return fluency


def test_the_shipped_formats_come_from_their_packages_in_order():
    assert list(JUDGMENT_FORMATS) == ["wmt-da", "wmt-rank", "mqm-tsv", "esa-jsonl", "pairwise-csv", "arena",
                                    "pearmut", "appraise", "anthea", "appraise-da-csv",
                                    "pearmut-da"]
    for fmt in judgment_formats().values():
        declaring = {p.name for p in all_protocols() if any(import_string(path) is fmt for path in p.judgment_formats)}
        package = fmt.parser.__module__.rsplit(".", 1)[0]
        assert package.startswith("annotation.protocols."), fmt.name
        assert set(fmt.protocols) <= declaring, fmt.name  # every protocol it fills declares it, in its package
        assert {type(get_protocol(name)).__module__.rsplit(".", 1)[0] for name in fmt.protocols} == {package}
    assert dict(FORMAT_TEXT_OPTIONS) == {
        "rows": "wmt-rank: the WMT08/09 rows imported, RANK (default), CONSTITUENT or CONSTITUENT_ACCEPT.",
        "pair": "wmt-rank: the language pair (srclang-trglang) or TASK to import from a file that holds several "
                "(default: every one, a campaign each); "
                "mqm-tsv, esa-jsonl, pearmut, appraise: the campaign's languages as source-target, e.g. en-de.",
    }


def test_a_protocol_brings_its_own_format_to_the_import_the_command_and_the_api(toy_fluency, tmp_path, api):
    assert JUDGMENT_FORMATS["toy-tsv"] is parse_toy
    assert FORMAT_TEXT_OPTIONS["scale"] == "toy-tsv: the toy's top score."
    result = import_judgments([b"w1\t1\t5\n", b"w2\t2\t10\n"], fmt="toy-tsv", name="Toy", scale="10")
    assert result.judgments == 2 and result.campaign.protocol == "fluency"
    assert sorted(Judgment.objects.filter(campaign=result.campaign).values_list("score", flat=True)) == [50, 100]

    path = tmp_path / "toy.tsv"
    path.write_bytes(b"w1\t1\t3\n")
    out = io.StringIO()
    call_command("import_judgments", str(path), "--format", "toy-tsv", "--name", "Toy command", "--scale", "4",
                 stdout=out)
    assert json.loads(out.getvalue()) == {"campaign": "toy-command", "judgments": 1}
    assert Judgment.objects.get(campaign__slug="toy-command").score == 75

    handle = io.BytesIO(b"w1\t1\t1\n")
    handle.name = "toy.tsv"
    response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": "toy-tsv", "name": "Toy API",
                                                             "scale": "2"}, format="multipart")
    assert response.status_code == 201, response.content
    assert Judgment.objects.get(campaign__slug=response.json()["campaign"]).score == 50


def test_without_its_protocol_a_format_is_not_offered(api):
    assert "toy-tsv" not in JUDGMENT_FORMATS and "scale" not in FORMAT_TEXT_OPTIONS
    with pytest.raises(CampaignFileError, match="unknown format 'toy-tsv'"):
        import_judgments([b"w1\t1\t5\n"], fmt="toy-tsv", name="Toy")
    handle = io.BytesIO(b"w1\t1\t1\n")
    handle.name = "toy.tsv"
    response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": "toy-tsv", "name": "Toy"},
                        format="multipart")
    assert response.status_code == 400


def test_a_bad_declaration_is_a_configuration_error(monkeypatch):
    adequacy = get_protocol("adequacy")
    monkeypatch.setattr(adequacy, "judgment_formats", (f"{__name__}.NO_SUCH_FORMAT",))
    with pytest.raises(ImproperlyConfigured, match="cannot import judgment format"):
        judgment_formats()
    monkeypatch.setattr(adequacy, "judgment_formats", (f"{__name__}.parse_toy",))
    with pytest.raises(ImproperlyConfigured, match="is not a JudgmentFormat"):
        judgment_formats()
    monkeypatch.setattr(adequacy, "judgment_formats", (f"{__name__}.OTHER_TOY",))
    monkeypatch.setattr(get_protocol("fluency"), "judgment_formats", (TOY_PATH,))
    with pytest.raises(ImproperlyConfigured, match="'toy-tsv' is declared twice, differently"):
        judgment_formats()
