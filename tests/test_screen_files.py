"""A protocol package ships its own screen: its template and scripts sit in `templates/` and `static/` beside its
module, and the template loader and staticfiles finder of annotation/views/screen_files.py find them once the
protocol is registered, with no setting or shared folder naming it. The package here is written by the test, as
another installed Python package would be."""
import importlib
import re
import sys

import pytest
from django.contrib.staticfiles import finders
from django.template.loader import get_template, render_to_string
from django.templatetags.static import static

from annotation.models import Campaign
from annotation.protocols import _REGISTRY, register
from annotation.views.screen_files import ProtocolStaticFinder

PACKAGE = {
    "__init__.py": (
        "from annotation.protocols.base import Protocol, Screen\n\n\n"
        "class ToyScreen(Protocol):\n"
        "    name = 'toy-screen'\n"
        "    label = 'A protocol from another package'\n"
        "    family = 'toy-screen'\n"
        "    screen = Screen('toy_screen/screen.html', ('annotation/choice_rows.js', 'toy_screen/screen.js'))\n\n"
        "    def default_statement(self, language):\n"
        "        return 'Is it good?'\n"),
    "templates/toy_screen/screen.html": '<div id="toy-screen" data-lang="{{ campaign.target_language }}"></div>\n',
    "static/toy_screen/screen.js": "window.HitScreens.register({show: function () {}, focus: function () {}});\n",
}


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The package `toy_screen_pkg` on the path and its protocol registered (and unregistered afterwards)."""
    root = tmp_path / "toy_screen_pkg"
    for relative, text in PACKAGE.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    protocol = register(importlib.import_module("toy_screen_pkg").ToyScreen())
    yield protocol, root
    _REGISTRY.unregister(protocol.name)
    sys.modules.pop("toy_screen_pkg", None)


def test_a_registered_protocol_packages_screen_is_found_and_loaded_by_the_hit_page(toy):
    protocol, root = toy
    assert get_template("toy_screen/screen.html").origin.name == str(root / "templates/toy_screen/screen.html")
    assert finders.find("toy_screen/screen.js") == str(root / "static/toy_screen/screen.js")
    assert ("toy_screen/screen.js", str(root / "static")) in {
        (path, storage.location) for path, storage in ProtocolStaticFinder().list([])}
    campaign = Campaign(name="Toy", protocol=protocol.name, target_language="et")
    html = render_to_string("annotation/hit.html", {"campaign": campaign, "protocol": protocol, "config": {},
                                                    "target_dir": "ltr", "source_dir": "ltr", "statement": "?"})
    assert '<div id="toy-screen" data-lang="et"></div>' in html
    assert re.findall(r'<script src="([^"]+)"', html) == [
        static(path) for path in ("annotation/copy.js", "annotation/hit.js", "annotation/media.js",
                                  "annotation/item_instructions.js", "annotation/feedback.js", "annotation/practice.js",
                                  "annotation/choice_rows.js", "toy_screen/screen.js", "annotation/submit_why.js")]


def test_an_unregistered_protocol_packages_files_are_not_served(toy):
    protocol, _root = toy
    assert finders.find("toy_screen/screen.js")
    _REGISTRY.unregister(protocol.name)
    try:
        assert finders.find("toy_screen/screen.js") is None
        assert ProtocolStaticFinder().find("toy_screen/screen.js", find_all=True) == []
    finally:
        register(protocol)
