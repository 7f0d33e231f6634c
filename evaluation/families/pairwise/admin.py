"""The pairwise family's results in the admin: counts and sign tests per condition and rater, read-only."""
from ...admin_inlines import ReadOnlyInline
from ...models import PairwiseResult
from .serializers import PairwiseResultSerializer


class PairwiseInline(ReadOnlyInline):
    model = PairwiseResult
    fields = list(PairwiseResultSerializer.Meta.fields)
    readonly_fields = fields
