from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self):
        from annotation.protocols import options

        from . import presets, receivers  # noqa: F401  (connects the signal receivers)
        from . import reliability_tests as tests

        # The import front-ends offer the registered reliability tests and presets (annotation never imports
        # evaluation).
        options.set_choices("qc_test", tests.choices)
        presets.install(options, tests)
