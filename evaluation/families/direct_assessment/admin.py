"""The Direct Assessment family's results in the admin: the system rankings, read-only."""
from ...admin_inlines import ReadOnlyInline
from ...models import SystemResult
from .serializers import SystemResultSerializer


class SystemInline(ReadOnlyInline):
    model = SystemResult
    fields = ["workers", *SystemResultSerializer.Meta.fields]
    readonly_fields = fields
    ordering = ["workers", "rank"]
