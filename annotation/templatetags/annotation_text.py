"""Template filters for text that researchers write: Markdown rendered, then sanitised."""
import markdown as markdown_lib
import nh3
from django import template
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def safe_markdown(text: str) -> str:
    """Markdown to HTML with every tag and attribute outside nh3's safe list removed (no scripts, no handlers)."""
    if not text:
        return ""
    html = markdown_lib.markdown(text, extensions=["extra", "sane_lists"])
    return mark_safe(nh3.clean(html, link_rel="noopener noreferrer nofollow"))  # noqa: S308 (sanitised just above)
