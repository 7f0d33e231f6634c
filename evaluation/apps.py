from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self):
        from annotation import extensions
        from annotation.protocols import options

        from . import presets, receivers  # noqa: F401  (connects the signal receivers)
        from . import reliability_tests as tests
        from .families.common.bradley_terry import TIE_LABELS
        from .registry import FAMILIES
        from .results_source import StoredResults

        # The campaign API's `results_computed_at` and the judgment export's z-scores come from the results.
        extensions.install_results_source(StoredResults())
        # The families the setting names are imported at start, as Django imports models: a Celery worker then
        # knows their tasks (ranking's TrueSkill bootstrap) before it takes any, and a bad path fails at once.
        FAMILIES.load()

        # The import front-ends offer the registered reliability tests and presets (annotation never imports
        # evaluation).
        options.set_choices("qc_test", tests.choices)
        # ...and what the import's sizing check needs to know of them: pairs per worker a test needs to pass
        # anyone, and the drop it asks of a worker with so many pairs.
        options.set_provider("min_pairs", tests.min_pairs)
        options.set_provider("critical_drop", tests.critical_drop)
        options.set_provider("threshold_in_use", tests.threshold_in_use)
        presets.install(options, tests)
        # ...and the Bradley–Terry leaderboard's tie models (families/common/bradley_terry.py)
        options.set_choices("bradley_terry_ties", lambda: list(TIE_LABELS.items()))
