"""Each protocol declares its screen (annotation.protocols.base.Screen: a template and its scripts), and the HIT
page includes exactly that: the screen's template once, the page's own scripts, then the screen's, none twice and
each a static file that exists. No page carries the scripts of another protocol's screen."""
import re

import pytest
from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.templatetags.static import static

from annotation.models import Campaign
from annotation.protocols import all_protocols
from annotation.protocols.base import Screen

#: What every HIT page loads before its screen's scripts, and after them ("why is Submit disabled?").
PAGE_SCRIPTS = ("annotation/copy.js", "annotation/hit.js", "annotation/media.js", "annotation/item_instructions.js",
                "annotation/feedback.js", "annotation/practice.js")
AFTER_SCRIPTS = ("annotation/submit_why.js",)


def _context(protocol) -> dict:
    campaign = Campaign(name="A campaign", protocol=protocol.name, source_language="de", target_language="en")
    return {"campaign": campaign, "protocol": protocol, "config": {"api": "/api/hit/x/"}, "target_dir": "ltr",
            "source_dir": "ltr", "statement": "How good is the translation?"}


@pytest.mark.parametrize("protocol", all_protocols(), ids=lambda protocol: protocol.name)
def test_the_hit_page_loads_exactly_the_screen_its_protocol_declares(protocol):
    screen = protocol.screen
    assert isinstance(screen, Screen) and screen.scripts
    assert all(finders.find(script) for script in screen.scripts)
    html = render_to_string("annotation/hit.html", _context(protocol))
    loaded = re.findall(r'<script src="([^"]+)"', html)
    assert loaded == [static(script) for script in (*PAGE_SCRIPTS, *screen.scripts, *AFTER_SCRIPTS)]
    assert len(set(loaded)) == len(loaded)
    assert html.count(render_to_string(screen.template, _context(protocol)).strip()) == 1
    others = {script for other in all_protocols() for script in other.screen.scripts} - set(screen.scripts)
    assert not [script for script in others if static(script) in html]


@pytest.mark.parametrize("protocol", all_protocols(), ids=lambda protocol: protocol.name)
def test_every_screen_shows_the_items_media_in_one_box(protocol):
    """The one media component (templates/annotation/_media.html, media.js) is on every protocol's screen, once."""
    html = render_to_string("annotation/hit.html", _context(protocol))
    assert html.count("data-media ") == 1 and "annotation/media.css" in html


def test_the_shared_rows_of_choices_serve_ranking_acceptance_and_verification():
    """One rows-of-choices module, no copies: the three screens of rows of choices load it."""
    users = sorted(p.name for p in all_protocols() if "annotation/choice_rows.js" in p.screen.scripts)
    assert users == ["constituent-acceptance", "post-edit-verify", "ranking", "ranking-constituent"]
