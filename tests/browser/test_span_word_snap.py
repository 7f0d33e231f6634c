"""The error-span editor widens a mouse selection to whole words (issue 23; docs/methods.md §11.1): dragged from
the middle of one word to the middle of another, the stored span covers both whole words; inside Japanese (a
script without spaces) a selection stays per character. One page load."""
from __future__ import annotations

import pytest

from .screens import open_page, post_of, start_hit
from .test_error_span_screens import campaign, click_slider, drag_select, judgment_of, marks, one_text_lines

pytestmark = pytest.mark.browser

TEXT = "The renovated museum reopens 東京都の博物館 on Saturday."


def test_a_drag_from_mid_word_to_mid_word_stores_both_whole_words(live_server, browser):
    esa = campaign(lines=one_text_lines([TEXT, "Second segment."]), source_language="de", name="Word snap")
    with open_page(browser, 1280, 800) as page:
        _, state = start_hit(page, live_server, esa.slug, "snap-mouse")
        item = state["item"]
        assert item["candidate"] == TEXT
        # "reno|vated mus|eum": from inside "renovated" to inside "museum".
        start = TEXT.index("renovated") + 4
        drag_select(page, TEXT, start, TEXT.index("museum") + 3)
        page.keyboard.press("2")
        # "京都" of "東京都の博物館": per character, as selected.
        kyoto = TEXT.index("京都")
        drag_select(page, TEXT, kyoto, kyoto + 2)
        page.keyboard.press("1")
        assert [m["text"] for m in marks(page)] == ["renovated museum", "京都"]
        click_slider(page, 0.5)
        status, body, _ = post_of(page, lambda: page.keyboard.press("Enter"))
        assert status == 201, body
        words = TEXT.index("renovated")
        assert judgment_of(item["id"]).spans == [
            {"start": words, "end": words + len("renovated museum"), "severity": "major"},
            {"start": kyoto, "end": kyoto + 2, "severity": "minor"}]
        assert page.js_errors == []
