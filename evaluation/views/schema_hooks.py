"""The OpenAPI schema's list of family result names, filled when the schema is generated (drf-spectacular
postprocessing hook, settings.SPECTACULAR_SETTINGS): the registered families and result parts decide it, so a
deployment's own family shows there, and a client (or a schema fuzzer) is told which names exist instead of
guessing ones that collide with campaign actions such as `status`."""
from ..families import all_endpoints
from ..parts import PARTS

FAMILY_RESULT_PATH = "/api/campaigns/{slug}/{endpoint}/"


def family_endpoint_names(result, generator, request, public):
    """Give the path parameter `endpoint` of the family-result operation the enum of every offered name."""
    operation = result.get("paths", {}).get(FAMILY_RESULT_PATH, {}).get("get")
    for parameter in (operation or {}).get("parameters", []):
        if parameter.get("name") == "endpoint" and parameter.get("in") == "path":
            parameter["schema"] = {"type": "string", "enum": sorted(all_endpoints() | set(PARTS))}
    return result
