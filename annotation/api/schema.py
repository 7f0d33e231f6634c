"""The OpenAPI schema of the researcher API (`/api/schema/`, docs/api.md §6.1): drf-spectacular's AutoSchema with
the answers every view can give but does not declare one by one, so that the schema says what the server does
(benchmarks/schemathesis.py checks it against a live server, tests/test_schema.py in-process).

- `403` on every operation (no researcher credentials, docs/api.md §6.1), `404` on those with a path parameter
  (a campaign, study, import or table that does not exist or is not the user's) and on paginated lists (a page
  past the end), `400` on those that read a body or a query parameter: `{"detail": "..."}`, or DRF's
  `{"<field>": ["..."]}` for a body that does not validate. A view declares any other 400 itself (`ERROR`).
- A request's text field that DRF refuses when blank or holding a NUL byte says so (`minLength`, `pattern`), and
  a dictionary that may not be empty says so (`minProperties`).
- A filter or `page` sent empty (`?protocol=&page=`, as an HTML form sends them) is read as absent:
  `allowEmptyValue`.
"""
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework import serializers

#: `{"detail": "..."}`: how DRF and the views answer 403, 404, 503 and most 400s.
DETAIL = {"type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]}
#: A 400: `detail` with the reason, or the fields' problems as DRF reports them.
ERROR = {"type": "object", "properties": {"detail": {"type": "string"}},
         "additionalProperties": True,
         "description": "`detail` says why; a body that does not validate gets `{\"<field>\": [\"<problem>\"]}`."}

ERRORS = {
    "400": ("BadRequest", ERROR, "The request cannot be answered as sent: the reason is in the body."),
    "403": ("Forbidden", DETAIL, "No researcher credentials (docs/api.md §6.1), or not the campaign's owner."),
    "404": ("NotFound", DETAIL, "No such campaign, study, import, table or page for this user."),
}

#: Text a CharField accepts: not only white space (it is trimmed), never a NUL byte.
TEXT_PATTERN = r"^[^\x00]*[^\s\x00][^\x00]*$"


class ResearcherSchema(AutoSchema):
    """AutoSchema that documents the error answers each operation can give (see the module's docstring)."""

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for code in self._error_codes():
            if code in responses:
                continue
            name, schema, description = ERRORS[code]
            component = ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema)
            self.registry.register_on_missing(component)
            responses[code] = {"content": {"application/json": {"schema": component.ref}},
                               "description": description}
        return responses

    def _get_filter_parameters(self):
        return [{**p, "allowEmptyValue": True} for p in super()._get_filter_parameters()]

    def _get_pagination_parameters(self):
        return [{**p, "allowEmptyValue": True} for p in super()._get_pagination_parameters()]

    def _error_codes(self) -> list[str]:
        codes = ["403"]
        has_path = "{" in self.path
        if has_path or self._is_list_view() and self._get_paginator() is not None:
            codes.append("404")
        queried = any(p.get("in") == "query" for p in self._get_parameters())
        if self.method != "GET" or queried:
            codes.append("400")
        return sorted(codes)

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if (direction == "request" and schema is not None and isinstance(field, serializers.CharField)
                and not field.allow_blank and schema.get("type") == "string" and "enum" not in schema):
            schema.setdefault("minLength", 1)
            schema.setdefault("pattern", TEXT_PATTERN)
        if (direction == "request" and schema is not None and isinstance(field, serializers.DictField)
                and not field.allow_empty):
            schema.setdefault("minProperties", 1)
        return schema
