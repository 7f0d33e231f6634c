"""The result-family registry: the families `settings.MTEVAL_RESULT_FAMILIES` names, by dotted path.

It sits below the families (docs/architecture.md, evaluation's layer 2): it imports no family, and fills itself
with `import_string` the first time it is read (`config.registry.SettingRegistry`; the app's `ready` reads it at
start), so that the presets, which collect what the families declare, read it without an import cycle. Lookups
that answer an unknown name with the empty family are `evaluation.families.get_family` and `family_of`.
"""
from config.registry import SettingRegistry

FAMILIES = SettingRegistry("result family", "MTEVAL_RESULT_FAMILIES")
