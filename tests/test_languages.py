"""Native languages as BCP 47 codes, matched by language (issue 23, defect 8; docs/api.md §8.1): a campaign that
requires English takes British English; the worker's form offers a list of languages and takes a typed code."""
import importlib

import pytest
from django.apps import apps
from django.test import Client

from annotation.languages import matches, to_code
from annotation.models import Annotator, Assignment, Campaign
from annotation.protocols import get_protocol
from annotation.protocols.options import OptionError


@pytest.mark.parametrize("required, declared, expected", [
    ("en", "en-GB", True), ("en", "en", True), ("en", "de", False), ("English", "British English", True),
    ("English", "en-US", True), ("pt-BR", "pt-BR", True), ("pt-BR", "pt_br", True), ("pt-BR", "pt", False),
    ("pt-BR", "pt-PT", False), ("zh-Hant", "zh-Hant-TW", True), ("zh-Hant", "zh", False), ("de", "german", True),
    ("", "anything", True), ("Klingon", "klingon", True), ("Klingon", "en", False), ("en", "", False),
])
def test_a_requirement_matches_by_language_and_only_by_the_region_it_names(required, declared, expected):
    assert matches(required, declared) is expected


@pytest.mark.parametrize("text, code", [
    ("en", "en"), ("EN_gb", "en-GB"), ("es-419", "es-419"), ("zh-hant-tw", "zh-Hant-TW"), ("British English", "en-GB"),
    (" german ", "de"), ("e", None), ("english-GB", None), ("en-GBR", None), ("en-GB-x", None), ("", None),
])
def test_codes_get_a_bcp47_syntax_check_and_canonical_case(text, code):
    assert to_code(text) == code


def qualifying(make_campaign, required):
    campaign = make_campaign(n_segments=140, redundancy=3, require_qualification=True,
                             required_native_language=required)
    return lambda worker, language: Client().post(f"/c/{campaign.slug}/start/?worker_id={worker}",
                                                  {"native_language": language, "country": "UK"})


@pytest.mark.django_db
def test_a_campaign_requiring_english_takes_british_english(make_campaign):
    post = qualifying(make_campaign, "English")  # free text stored before codes
    assert post("brit", "British English").status_code == 302
    assert post("us", "en-US").status_code == 302
    refused = post("de", "de")
    assert refused.status_code == 403 and "native speakers of English" in refused.content.decode()
    assert Annotator.objects.get(external_id="brit").native_language == "en-GB"


@pytest.mark.django_db
def test_a_requirement_with_a_region_takes_that_region_only(make_campaign):
    post = qualifying(make_campaign, "pt-BR")
    assert post("br", "pt-BR").status_code == 302
    refused = post("pt", "pt-PT")
    assert refused.status_code == 403 and "Brazilian Portuguese (pt-BR)" in refused.content.decode()
    assert post("any", "pt").status_code == 403


@pytest.mark.django_db
def test_the_form_offers_a_list_of_languages_and_refuses_what_is_not_a_code(make_campaign):
    campaign = make_campaign(require_qualification=True, required_native_language="en")
    url = f"/c/{campaign.slug}/start/?worker_id=w1"
    page = Client().get(url).content.decode()
    assert 'list="languages"' in page and '<datalist id="languages">' in page
    assert '<option value="en">English</option>' in page
    assert '<option value="pt-BR">Brazilian Portuguese</option>' in page
    refused = Client().post(url, {"native_language": "my mother tongue", "country": "UK"})
    assert refused.status_code == 200 and "type its code" in refused.content.decode()
    assert not Annotator.objects.filter(external_id="w1").exists() and not Assignment.objects.exists()
    assert Client().post(url, {"native_language": "en-IE", "country": "IE"}).status_code == 302


def test_the_import_option_stores_a_code_and_refuses_what_is_not_one():
    adequacy = get_protocol("adequacy")
    stored = adequacy.parse_options({"required_native_language": "British English"})
    assert stored.campaign_fields["required_native_language"] == "en-GB"
    stored = adequacy.parse_options({"required_native_language": "pt_br"})
    assert stored.campaign_fields["required_native_language"] == "pt-BR"
    with pytest.raises(OptionError) as refused:
        adequacy.parse_options({"required_native_language": "Elvish (Sindarin)"})
    assert "required_native_language" in str(refused.value)


@pytest.mark.django_db
def test_the_data_migration_turns_known_names_into_codes_and_keeps_other_text(make_campaign):
    english = make_campaign(name="A", required_native_language="British English")
    other = make_campaign(name="B", required_native_language="Klingon")
    Annotator.objects.create(external_id="x", native_language="German")
    importlib.import_module("annotation.migrations.0019_language_codes").to_codes(apps, None)
    assert Campaign.objects.get(pk=english.pk).required_native_language == "en-GB"
    assert Campaign.objects.get(pk=other.pk).required_native_language == "Klingon"
    assert Annotator.objects.get(external_id="x").native_language == "de"
